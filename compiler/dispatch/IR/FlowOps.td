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

#endif  // STRATA_COMPILER_DISPATCH_IR_FLOWOPS_TD
