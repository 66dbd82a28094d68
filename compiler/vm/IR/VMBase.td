//===- VMBase.td - vm dialect, types, op base classes ------*- tablegen -*-===//
//
// The `vm` dialect models the Strata VM bytecode one-to-one: every row of
// schemas/bytecode_ops.def is one op here, so that emitting bytecode is a
// table-driven walk (compiler/vm/Target) rather than a lowering.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_IR_VMBASE_TD
#define STRATA_COMPILER_VM_IR_VMBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def VM_Dialect : Dialect {
  let name = "vm";
  let cppNamespace = "::strata::vm";
  let summary = "The Strata VM: one op per bytecode instruction";
  let description = [{
    A `vm.module` holds functions, imports, exports, globals and read-only
    data. Function bodies are SSA CFGs of ops that each encode as exactly one
    VM instruction (the fused `vm.cmp_br.*` ops and branches with block
    arguments may add a `BR` for the fall-through edge or for moves). Values
    live in two register banks: the scalar bank (i32, i64, f32, f64) and the
    ref bank (`!vm.buffer`, `!vm.list`, `!vm.ref`).
  }];
  let useDefaultTypePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

class VM_Type<string name, string typeMnemonic> : TypeDef<VM_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def VM_BufferType : VM_Type<"Buffer", "buffer"> {
  let summary = "a reference-counted byte buffer";
}

def VM_ListType : VM_Type<"List", "list"> {
  let summary = "a reference-counted list of variants";
}

def VM_RefType : VM_Type<"Ref", "ref"> {
  let summary = "any reference-counted object";
  let description = [{
    The type of objects the VM only passes around, such as those created by
    native modules. An operand of this type accepts any ref (`!vm.buffer`,
    `!vm.list`), which lets imports take objects of several kinds.
  }];
}

def VM_AnyRef : AnyTypeOf<[VM_BufferType, VM_ListType, VM_RefType], "VM ref">;
def VM_AnyScalar : AnyTypeOf<[I32, I64, F32, F64], "VM scalar">;
def VM_AnyType : AnyTypeOf<[VM_AnyScalar, VM_AnyRef], "VM value">;

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

def VM_InstructionOpInterface : OpInterface<"InstructionOpInterface"> {
  let cppNamespace = "::strata::vm";
  let description = [{
    An op that encodes as one row of schemas/bytecode_ops.def. The emitter
    reads the row's operand letters and takes, in order, the op's results for
    uppercase letters and its operands for lowercase ones. Immediates come
    from attributes with fixed names: `value` ('4', '8'), `message` ('s'),
    `rodata` ('o'), `global` ('g', 'h') and `callee` ('k', 'm').
  }];
  let methods = [
    StaticInterfaceMethod<
      "The opcode, that is the op's row in bytecode_ops.def.",
      "::strata::bytecode::Opcode", "getOpcode", (ins), [{}],
      [{ return ConcreteOp::kOpcode; }]>,
  ];
}

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class VM_Op<string mnemonic, list<Trait> traits = []>
    : Op<VM_Dialect, mnemonic, traits>;

// An op for one row of bytecode_ops.def. The row's name is the mnemonic in
// upper case with '.' turned into '_' ("cmp.lt.i32.s" is CMP_LT_I32_S), which
// VMOps.cpp checks against the table at compile time.
class VM_BytecodeOp<string mnemonic, list<Trait> traits = [],
                    string opcode = !toupper(!subst(".", "_", mnemonic))>
    : VM_Op<mnemonic, !listconcat(traits, [VM_InstructionOpInterface])> {
  code opcodeDecl = "static constexpr ::strata::bytecode::Opcode kOpcode = "
                    "::strata::bytecode::Opcode::" # opcode # ";";
  let extraClassDeclaration = opcodeDecl;
}

#endif  // STRATA_COMPILER_VM_IR_VMBASE_TD
