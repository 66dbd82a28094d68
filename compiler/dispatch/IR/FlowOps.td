//===- FlowOps.td - the flow dialect: dispatches of kernels -*- tablegen -*-===//
//
// Between dispatch formation and the host lowering, a model is host functions
// (func.func) whose heavy work is `flow.dispatch` ops, each running one kernel
// (a func.func marked `flow.kernel` in the same module) on tensors.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_DISPATCH_IR_FLOWOPS_TD
#define STRATA_COMPILER_DISPATCH_IR_FLOWOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Flow_Dialect : Dialect {
  let name = "flow";
  let cppNamespace = "::strata::flow";
  let summary = "Dispatches of outlined kernels on tensors";
}

def Flow_DispatchOp : Op<Flow_Dialect, "dispatch", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs a kernel on tensors and scalars";
  let description = [{
    Calls the kernel `@k` (a `func.func` with the `flow.kernel` attribute) as
    one device dispatch. Tensor operands become read-only bindings, scalar
    operands push constants; each result is a new tensor. `dims` gives the
    sizes of the results' dynamic dimensions, in order, so that the host can
    allocate them before the dispatch runs.

    ```mlir
    %r = flow.dispatch @k(%x, %w) dims(%n) : (tensor<?x784xf32>, tensor<784x512xf32>) -> tensor<?x512xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       Variadic<AnyType>:$arguments,
                       Variadic<Index>:$result_dims);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $arguments `)` (`dims` `(` $result_dims^ `)`)? attr-dict `:`
    functional-type($arguments, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The values among `result_dims` that size result `index`'s dynamic
    /// dimensions, in order.
    ::mlir::OperandRange getDynamicDimsOf(unsigned index);
  }];
}

class Flow_CheckOp<string mnemonic> : Op<Flow_Dialect, mnemonic, [
    MemoryEffects<[MemWrite]>]> {
  let arguments = (ins Index:$lhs, Index:$rhs, StrAttr:$message);
  let assemblyFormat = "$lhs `,` $rhs `,` $message attr-dict";
  let hasCanonicalizeMethod = 1;
}

def Flow_CheckEqualOp : Flow_CheckOp<"check_equal"> {
  let summary = "fails the call when two sizes differ, naming both";
  let description = [{
    A relation between dimensions that the program relies on (the operands
    of an elementwise op, a matmul's K, a reshape's element count), checked
    on the host before any kernel runs. The host program fails with
    INVALID_ARGUMENT: the message, then both values.

    ```mlir
    flow.check_equal %n, %m, "'f': dimension 0 of argument 0 and argument 1"
    ```

    A check of one value against itself or of two equal constants folds
    away.
  }];
}

def Flow_CheckLessEqualOp : Flow_CheckOp<"check_less_equal"> {
  let summary = "fails the call unless lhs <= rhs (signed), naming both";
  let description = [{
    The bounds of a slice whose offsets or sizes are values, checked on the
    host before any kernel reads or writes it. Fails like
    `flow.check_equal`; a check of a value against itself or between
    constants that hold folds away.
  }];
}

def Flow_SubmitOp : Op<Flow_Dialect, "submit", [MemoryEffects<[MemWrite]>]> {
  let summary = "runs the dispatches recorded since the last submit, and waits";
  let description = [{
    The dispatches of a block are recorded into one command buffer; this op
    ends it, submits it to the device queue and waits for it, so that the
    host may read what they wrote, call, branch or return. Placed by
    `strata-batch-submissions` only where the host needs a result.
    ```mlir
    flow.submit
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Flow_ExecutableBinaryOp : Op<Flow_Dialect, "executable_binary", []> {
  let summary = "one compiled executable, in one format, to embed";
  let description = [{
    The bytes of the executable `name` in one format (`cpu-elf-x86_64`,
    `vulkan-spirv`, `cuda-ptx`, `rocm-hsaco`) and its FlatBuffer metadata,
    as the code generator wrote them. The host lowering dispatches kernels of
    the executable by name; the module writer embeds every binary. Each
    kernel's `flow.variants` attribute (see KernelVariants.h) says how the
    host dispatches it in each format.
    ```mlir
    flow.executable_binary "kernels" format "cpu-elf-x86_64"
        data dense_resource<kernels_cpu> : tensor<5120xi8>
        metadata dense<[...]> : tensor<96xi8>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$format,
                       ElementsAttr:$data, ElementsAttr:$metadata);
  let assemblyFormat = [{
    $name `format` $format `data` $data `metadata` $metadata attr-dict
  }];
  let hasVerifier = 1;
}

#endif  // STRATA_COMPILER_DISPATCH_IR_FLOWOPS_TD
