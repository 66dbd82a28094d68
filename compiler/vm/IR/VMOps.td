//===- VMOps.td - vm dialect ops ---------------------------*- tablegen -*-===//
//
// Structural ops (module, func, import, export, globals, rodata) first, then
// one op per row of schemas/bytecode_ops.def, in the table's order.
//
// Assembly conventions: the value type is part of every mnemonic, so pure
// arithmetic spells no types (`vm.add.i64 %a, %b`); ops that move a value in
// or out of memory (globals, buffers, lists) spell the moved value's type
// after a colon. Operands print in bytecode operand order.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_IR_VMOPS_TD
#define STRATA_COMPILER_VM_IR_VMOPS_TD

include "VMBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

defvar VM_InModule = HasParent<"::strata::vm::ModuleOp">;

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def VM_ModuleOp : VM_Op<"module", [
    IsolatedFromAbove, NoRegionArguments, NoTerminator, SingleBlock, Symbol,
    SymbolTable]> {
  let summary = "a VM module: the unit compiled into one module file";
  let description = [{
    ```mlir
    vm.module @math {
      vm.func @square(%x: i32) -> i32 { ... }
      vm.export @square
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def VM_FuncOp : VM_Op<"func", [
    VM_InModule, FunctionOpInterface, IsolatedFromAbove]> {
  let summary = "a function with a bytecode body";
  let description = [{
    ```mlir
    vm.func @add(%a: i64, %b: i64) -> i64 {
      %0 = vm.add.i64 %a, %b
      vm.return %0 : i64
    }
    ```
    Arguments arrive in registers 0, 1, 2, ... of their bank, in order.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
  }];
}

def VM_ExportOp : VM_Op<"export", [
    VM_InModule, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "offers a function to callers under a name";
  let description = [{
    ```mlir
    vm.export @square                  // exported as "square"
    vm.export @square as("sq")         // exported as "sq"
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$function_ref,
                       OptionalAttr<StrAttr>:$export_name);
  let assemblyFormat = "$function_ref (`as` `(` $export_name^ `)`)? attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The name callers use: `as("...")` if given, else the function's.
    ::llvm::StringRef getExportedName() {
      return getExportName() ? *getExportName() : getFunctionRef();
    }
  }];
}

def VM_ImportOp : VM_Op<"import", [VM_InModule, Symbol]> {
  let summary = "declares a function of another module";
  let description = [{
    The symbol is `module.function`: the part before the first '.' names the
    module, the rest the function in it.

    ```mlir
    vm.import @check.expect_eq_i64(i64, i64)
    vm.import @hal.buffer.allocate(i64) -> !vm.buffer
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type);
  let assemblyFormat =
      "$sym_name `` custom<ImportSignature>($function_type) attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::StringRef getImportedModuleName() {
      return getSymName().split('.').first;
    }
    ::llvm::StringRef getImportedFunctionName() {
      return getSymName().split('.').second;
    }
  }];
}

// Scalar globals live in one byte array of the module instance, each at an
// offset aligned to its size; the initial value defaults to zero.
class VM_ScalarGlobalOp<string suffix, Type type>
    : VM_Op<"global." # suffix, [VM_InModule, Symbol]> {
  let summary = "a mutable " # suffix # " global";
  let description = [{
    ```mlir
    vm.global.i32 @counter = 5 : i32
    vm.global.f64 @scale          // zero
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       OptionalAttr<TypedAttrInterface>:$initial_value);
  let assemblyFormat = "$sym_name (`=` $initial_value^)? attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    static ::mlir::Type getValueType(::mlir::MLIRContext *ctx) {
      return }] # !subst("$_builder", "::mlir::Builder(ctx)", type.builderCall) # [{;
    }
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return verifyScalarGlobal(*this, getInitialValueAttr(),
                                getValueType(getContext()));
    }
  }];
}

def VM_GlobalI32Op : VM_ScalarGlobalOp<"i32", I32>;
def VM_GlobalI64Op : VM_ScalarGlobalOp<"i64", I64>;
def VM_GlobalF32Op : VM_ScalarGlobalOp<"f32", F32>;
def VM_GlobalF64Op : VM_ScalarGlobalOp<"f64", F64>;

def VM_GlobalRefOp : VM_Op<"global.ref", [VM_InModule, Symbol]> {
  let summary = "a mutable ref global, initially null";
  let description = [{
    ```mlir
    vm.global.ref @cache : !vm.list
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<VM_AnyRef>:$type);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
}

def VM_ExecutableOp : VM_Op<"executable", [VM_InModule]> {
  let summary = "a device executable, in one format, to embed";
  let description = [{
    The bytes of the executable `name` in one format and its FlatBuffer
    metadata (schemas/*_executable.fbs). The module file embeds every one,
    its bytes 64-byte aligned so that the runtime loads them in place;
    `vm.const.ref.executable` names them.

    ```mlir
    vm.executable "kernels" format "cpu-elf-x86_64"
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

def VM_RodataOp : VM_Op<"rodata", [VM_InModule, Symbol]> {
  let summary = "read-only bytes in the module file";
  let description = [{
    Dense integer or float elements (little-endian, packed) or a string's
    bytes. `vm.const.ref.rodata` makes a buffer that views them in place.

    ```mlir
    vm.rodata @weights dense<[1.0, 2.0]> : tensor<2xf32>
    vm.rodata @greeting "hello"
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       AnyAttrOf<[ElementsAttr, StrAttr]>:$value);
  let assemblyFormat = "$sym_name $value attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Bytecode op classes
//===----------------------------------------------------------------------===//

class VM_ConstOp<string suffix, Type type, Attr attr>
    : VM_BytecodeOp<"const." # suffix, [ConstantLike, Pure]> {
  let summary = suffix # " constant";
  let arguments = (ins attr:$value);
  let results = (outs type:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor) { return getValueAttr(); }
  }];
}

class VM_UnaryOp<string mnemonic, Type resultType, Type operandType,
                 list<Trait> traits = [Pure]>
    : VM_BytecodeOp<mnemonic, traits> {
  let arguments = (ins operandType:$operand);
  let results = (outs resultType:$result);
  let assemblyFormat = "$operand attr-dict";
}

class VM_BinaryOp<string mnemonic, Type resultType, Type operandType,
                  list<Trait> traits = [Pure]>
    : VM_BytecodeOp<mnemonic, traits> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict";
}

// Integer division and remainder fail at run time on a zero divisor (and
// signed INT_MIN / -1), so they are not Pure: erasing an unused one would
// erase the failure.
multiclass VM_IntBinaryOps<string name, string suffix = "",
                           list<Trait> traits = [Pure]> {
  def I32Op : VM_BinaryOp<name # ".i32" # suffix, I32, I32, traits>;
  def I64Op : VM_BinaryOp<name # ".i64" # suffix, I64, I64, traits>;
}
multiclass VM_FloatBinaryOps<string name, list<Trait> traits = [Pure]> {
  def F32Op : VM_BinaryOp<name # ".f32", F32, F32, traits>;
  def F64Op : VM_BinaryOp<name # ".f64", F64, F64, traits>;
}
multiclass VM_FloatUnaryOps<string name> {
  def F32Op : VM_UnaryOp<name # ".f32", F32, F32>;
  def F64Op : VM_UnaryOp<name # ".f64", F64, F64>;
}

// Comparisons produce an i32 that is 0 or 1.
multiclass VM_IntCmpOps<string pred, string suffix = "",
                        list<Trait> traits = [Pure]> {
  def I32Op : VM_BinaryOp<"cmp." # pred # ".i32" # suffix, I32, I32, traits>;
  def I64Op : VM_BinaryOp<"cmp." # pred # ".i64" # suffix, I32, I64, traits>;
}
multiclass VM_FloatCmpOps<string pred, list<Trait> traits = [Pure]> {
  def F32Op : VM_BinaryOp<"cmp." # pred # ".f32", I32, F32, traits>;
  def F64Op : VM_BinaryOp<"cmp." # pred # ".f64", I32, F64, traits>;
}

// Successor operands are allowed on every branch: the emitter turns them
// into register moves (see compiler/vm/Target).
class VM_TwoWayBranchOp<string mnemonic, dag condition, string conditionFormat,
                        string opcode>
    : VM_BytecodeOp<mnemonic, [
        AttrSizedOperandSegments, Pure, Terminator,
        DeclareOpInterfaceMethods<BranchOpInterface>], opcode> {
  let arguments = !con(condition, (ins
      Variadic<VM_AnyType>:$true_dest_operands,
      Variadic<VM_AnyType>:$false_dest_operands));
  let successors = (successor AnySuccessor:$true_dest,
                              AnySuccessor:$false_dest);
  let assemblyFormat = conditionFormat # [{ `,`
    $true_dest (`(` $true_dest_operands^ `:` type($true_dest_operands) `)`)? `,`
    $false_dest (`(` $false_dest_operands^ `:` type($false_dest_operands) `)`)?
    attr-dict
  }];
  let extraClassDeclaration = opcodeDecl # [{
    enum { kTrueIndex = 0, kFalseIndex = 1 };
  }];
  let extraClassDefinition = [{
    ::mlir::SuccessorOperands $cppClass::getSuccessorOperands(unsigned index) {
      return ::mlir::SuccessorOperands(index == kTrueIndex
                                           ? getTrueDestOperandsMutable()
                                           : getFalseDestOperandsMutable());
    }
  }];
}

// The fused compare-and-branch rows jump when the comparison holds and fall
// through otherwise; in IR they take both successors like vm.cond_br, and the
// emitter adds a BR to the false successor unless it is the next block.
class VM_CmpBrOp<string pred, Type type>
    : VM_TwoWayBranchOp<"cmp_br." # pred, (ins type:$lhs, type:$rhs),
                        "$lhs `,` $rhs", "BR_" # !toupper(!subst(".", "_", pred))> {
  let summary = "branches on `lhs " # pred # " rhs` (fused compare and branch)";
}

class VM_CallBase<string mnemonic> : VM_BytecodeOp<mnemonic, [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<VM_AnyType>:$operands);
  let results = (outs Variadic<VM_AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
}

class VM_GlobalLoadOp<string suffix, Type type, string globalOp>
    : VM_BytecodeOp<"global.load." # suffix, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        MemoryEffects<[MemRead]>]> {
  let arguments = (ins FlatSymbolRefAttr:$global);
  let results = (outs type:$result);
  let assemblyFormat = "$global attr-dict `:` type($result)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verifySymbolUses(
        ::mlir::SymbolTableCollection &symbolTable) {
      return verifyGlobalUse<}] # globalOp # [{>(
          *this, getGlobalAttr(), getResult().getType(), symbolTable);
    }
  }];
}

class VM_GlobalStoreOp<string suffix, Type type, string globalOp>
    : VM_BytecodeOp<"global.store." # suffix, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        MemoryEffects<[MemWrite]>]> {
  let arguments = (ins type:$value, FlatSymbolRefAttr:$global);
  let assemblyFormat = "$value `,` $global attr-dict `:` type($value)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verifySymbolUses(
        ::mlir::SymbolTableCollection &symbolTable) {
      return verifyGlobalUse<}] # globalOp # [{>(
          *this, getGlobalAttr(), getValue().getType(), symbolTable);
    }
  }];
}

// Buffer and list accesses are bounds-checked at run time, so like division
// they keep their (unknown) side effects.
class VM_BufferLoadOp<string suffix, Type type>
    : VM_BytecodeOp<"buffer.load." # suffix> {
  let arguments = (ins VM_BufferType:$buffer, I64:$offset);
  let results = (outs type:$result);
  let assemblyFormat = "$buffer `[` $offset `]` attr-dict `:` type($result)";
}

class VM_BufferStoreOp<string suffix, Type type>
    : VM_BytecodeOp<"buffer.store." # suffix> {
  let arguments = (ins VM_BufferType:$buffer, I64:$offset, type:$value);
  let assemblyFormat =
      "$buffer `[` $offset `]` `,` $value attr-dict `:` type($value)";
}

class VM_ListGetOp<string suffix, Type type>
    : VM_BytecodeOp<"list.get." # suffix> {
  let arguments = (ins VM_ListType:$list, I32:$index);
  let results = (outs type:$result);
  let assemblyFormat = "$list `[` $index `]` attr-dict `:` type($result)";
}

class VM_ListSetOp<string suffix, Type type>
    : VM_BytecodeOp<"list.set." # suffix> {
  let arguments = (ins VM_ListType:$list, I32:$index, type:$value);
  let assemblyFormat =
      "$list `[` $index `]` `,` $value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def VM_ConstI32Op : VM_ConstOp<"i32", I32, I32Attr>;
def VM_ConstI64Op : VM_ConstOp<"i64", I64, I64Attr>;
def VM_ConstF32Op : VM_ConstOp<"f32", F32, F32Attr>;
def VM_ConstF64Op : VM_ConstOp<"f64", F64, F64Attr>;

def VM_ConstRefZeroOp : VM_BytecodeOp<"const.ref.zero", [Pure]> {
  let summary = "a null ref";
  let results = (outs VM_AnyRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def VM_ConstRefRodataOp : VM_BytecodeOp<"const.ref.rodata", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a buffer viewing a vm.rodata segment";
  let arguments = (ins FlatSymbolRefAttr:$rodata);
  let results = (outs VM_BufferType:$result);
  let assemblyFormat = "$rodata attr-dict `:` type($result)";
}

def VM_ConstRefExecutableOp : VM_BytecodeOp<"const.ref.executable", [Pure]> {
  let summary = "an executable embedded in the module, as a ref";
  let description = [{
    The device executable the module file embeds under the name `executable`,
    in every format it was compiled for, as a ref for `hal.executable.create`:
    the program hands its executables to the HAL as values. The name is
    resolved when the module is written, against the module's
    `vm.executable` ops.
  }];
  let arguments = (ins StrAttr:$executable);
  let results = (outs VM_RefType:$result);
  let assemblyFormat = "$executable attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Integer and float arithmetic
//===----------------------------------------------------------------------===//

defm VM_Add : VM_IntBinaryOps<"add", "", [Pure, Commutative]>;
defm VM_Sub : VM_IntBinaryOps<"sub">;
defm VM_Mul : VM_IntBinaryOps<"mul", "", [Pure, Commutative]>;
defm VM_DivS : VM_IntBinaryOps<"div", ".s", []>;
defm VM_DivU : VM_IntBinaryOps<"div", ".u", []>;
defm VM_RemS : VM_IntBinaryOps<"rem", ".s", []>;
defm VM_RemU : VM_IntBinaryOps<"rem", ".u", []>;
defm VM_And : VM_IntBinaryOps<"and", "", [Pure, Commutative]>;
defm VM_Or : VM_IntBinaryOps<"or", "", [Pure, Commutative]>;
defm VM_Xor : VM_IntBinaryOps<"xor", "", [Pure, Commutative]>;
defm VM_Shl : VM_IntBinaryOps<"shl">;
defm VM_ShrS : VM_IntBinaryOps<"shr", ".s">;
defm VM_ShrU : VM_IntBinaryOps<"shr", ".u">;
def VM_NotI32Op : VM_UnaryOp<"not.i32", I32, I32>;
def VM_NotI64Op : VM_UnaryOp<"not.i64", I64, I64>;

defm VM_Add : VM_FloatBinaryOps<"add", [Pure, Commutative]>;
defm VM_Sub : VM_FloatBinaryOps<"sub">;
defm VM_Mul : VM_FloatBinaryOps<"mul", [Pure, Commutative]>;
defm VM_Div : VM_FloatBinaryOps<"div">;
defm VM_Rem : VM_FloatBinaryOps<"rem">;
defm VM_Min : VM_FloatBinaryOps<"min", [Pure, Commutative]>;
defm VM_Max : VM_FloatBinaryOps<"max", [Pure, Commutative]>;
defm VM_Neg : VM_FloatUnaryOps<"neg">;
defm VM_Abs : VM_FloatUnaryOps<"abs">;
defm VM_Sqrt : VM_FloatUnaryOps<"sqrt">;
defm VM_Floor : VM_FloatUnaryOps<"floor">;
defm VM_Ceil : VM_FloatUnaryOps<"ceil">;

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

defm VM_CmpEq : VM_IntCmpOps<"eq", "", [Pure, Commutative]>;
defm VM_CmpNe : VM_IntCmpOps<"ne", "", [Pure, Commutative]>;
defm VM_CmpLtS : VM_IntCmpOps<"lt", ".s">;
defm VM_CmpLeS : VM_IntCmpOps<"le", ".s">;
defm VM_CmpLtU : VM_IntCmpOps<"lt", ".u">;
defm VM_CmpLeU : VM_IntCmpOps<"le", ".u">;
defm VM_CmpEq : VM_FloatCmpOps<"eq", [Pure, Commutative]>;
defm VM_CmpNe : VM_FloatCmpOps<"ne", [Pure, Commutative]>;
defm VM_CmpLt : VM_FloatCmpOps<"lt">;
defm VM_CmpLe : VM_FloatCmpOps<"le">;
def VM_CmpNanF32Op : VM_UnaryOp<"cmp.nan.f32", I32, F32>;
def VM_CmpNanF64Op : VM_UnaryOp<"cmp.nan.f64", I32, F64>;

def VM_CmpEqRefOp : VM_BytecodeOp<"cmp.eq.ref", [
    Pure, Commutative, AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "1 if both refs are the same object (or both null)";
  let arguments = (ins VM_AnyRef:$lhs, VM_AnyRef:$rhs);
  let results = (outs I32:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($lhs)";
}

def VM_CmpNzRefOp : VM_BytecodeOp<"cmp.nz.ref", [Pure]> {
  let summary = "1 if the ref is not null";
  let arguments = (ins VM_AnyRef:$operand);
  let results = (outs I32:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand)";
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

def VM_TruncI64I32Op : VM_UnaryOp<"trunc.i64.i32", I32, I64>;
def VM_ExtI32I64SOp : VM_UnaryOp<"ext.i32.i64.s", I64, I32>;
def VM_ExtI32I64UOp : VM_UnaryOp<"ext.i32.i64.u", I64, I32>;
def VM_TruncI32I8Op : VM_UnaryOp<"trunc.i32.i8", I32, I32>;
def VM_TruncI32I16Op : VM_UnaryOp<"trunc.i32.i16", I32, I32>;
def VM_ExtI8I32SOp : VM_UnaryOp<"ext.i8.i32.s", I32, I32>;
def VM_ExtI16I32SOp : VM_UnaryOp<"ext.i16.i32.s", I32, I32>;
def VM_CastSI32F32Op : VM_UnaryOp<"cast.si32.f32", F32, I32>;
def VM_CastUI32F32Op : VM_UnaryOp<"cast.ui32.f32", F32, I32>;
def VM_CastSI64F32Op : VM_UnaryOp<"cast.si64.f32", F32, I64>;
def VM_CastSI32F64Op : VM_UnaryOp<"cast.si32.f64", F64, I32>;
def VM_CastSI64F64Op : VM_UnaryOp<"cast.si64.f64", F64, I64>;
def VM_CastUI64F64Op : VM_UnaryOp<"cast.ui64.f64", F64, I64>;
def VM_CastF32SI32Op : VM_UnaryOp<"cast.f32.si32", I32, F32>;
def VM_CastF32UI32Op : VM_UnaryOp<"cast.f32.ui32", I32, F32>;
def VM_CastF32SI64Op : VM_UnaryOp<"cast.f32.si64", I64, F32>;
def VM_CastF64SI32Op : VM_UnaryOp<"cast.f64.si32", I32, F64>;
def VM_CastF64SI64Op : VM_UnaryOp<"cast.f64.si64", I64, F64>;
def VM_CastF64UI64Op : VM_UnaryOp<"cast.f64.ui64", I64, F64>;
def VM_ExtF32F64Op : VM_UnaryOp<"ext.f32.f64", F64, F32>;
def VM_TruncF64F32Op : VM_UnaryOp<"trunc.f64.f32", F32, F64>;
def VM_BitcastI32F32Op : VM_UnaryOp<"bitcast.i32.f32", F32, I32>;
def VM_BitcastF32I32Op : VM_UnaryOp<"bitcast.f32.i32", I32, F32>;
def VM_BitcastI64F64Op : VM_UnaryOp<"bitcast.i64.f64", F64, I64>;
def VM_BitcastF64I64Op : VM_UnaryOp<"bitcast.f64.i64", I64, F64>;

//===----------------------------------------------------------------------===//
// Select: result = condition != 0 ? true_value : false_value
//===----------------------------------------------------------------------===//

class VM_SelectOp<string suffix, Type type, string format = "">
    : VM_BytecodeOp<"select." # suffix, [
        Pure, AllTypesMatch<["true_value", "false_value", "result"]>]> {
  let arguments = (ins I32:$condition, type:$true_value, type:$false_value);
  let results = (outs type:$result);
  let assemblyFormat =
      "$condition `,` $true_value `,` $false_value attr-dict" # format;
}

def VM_SelectI32Op : VM_SelectOp<"i32", I32>;
def VM_SelectI64Op : VM_SelectOp<"i64", I64>;
def VM_SelectF32Op : VM_SelectOp<"f32", F32>;
def VM_SelectF64Op : VM_SelectOp<"f64", F64>;
def VM_SelectRefOp : VM_SelectOp<"ref", VM_AnyRef, " `:` type($result)">;

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

def VM_BrOp : VM_BytecodeOp<"br", [
    Pure, Terminator, DeclareOpInterfaceMethods<BranchOpInterface>]> {
  let summary = "unconditional branch";
  let description = [{
    ```mlir
    vm.br ^loop(%i, %sum : i64, i64)
    ```
  }];
  let arguments = (ins Variadic<VM_AnyType>:$dest_operands);
  let successors = (successor AnySuccessor:$dest);
  let assemblyFormat = [{
    $dest (`(` $dest_operands^ `:` type($dest_operands) `)`)? attr-dict
  }];
  let extraClassDefinition = [{
    ::mlir::SuccessorOperands $cppClass::getSuccessorOperands(unsigned) {
      return ::mlir::SuccessorOperands(getDestOperandsMutable());
    }
  }];
}

def VM_CondBrOp : VM_TwoWayBranchOp<"cond_br", (ins I32:$condition),
                                    "$condition", "COND_BR"> {
  let summary = "branches to the first successor if the condition is not 0";
  let description = [{
    ```mlir
    vm.cond_br %c, ^then(%x : i32), ^else
    ```
  }];
}

def VM_CmpBrLtI32SOp : VM_CmpBrOp<"lt.i32.s", I32>;
def VM_CmpBrLeI32SOp : VM_CmpBrOp<"le.i32.s", I32>;
def VM_CmpBrLtI64SOp : VM_CmpBrOp<"lt.i64.s", I64>;
def VM_CmpBrLeI64SOp : VM_CmpBrOp<"le.i64.s", I64>;

def VM_CallOp : VM_CallBase<"call"> {
  let summary = "calls a function of this module";
  let description = [{
    ```mlir
    %r = vm.call @fib(%n) : (i32) -> i32
    ```
  }];
}

def VM_CallImportOp : VM_CallBase<"call.import"> {
  let summary = "calls an imported function";
  let description = [{
    ```mlir
    vm.call.import @check.expect_eq_i64(%a, %b) : (i64, i64) -> ()
    ```
  }];
}

def VM_ReturnOp : VM_BytecodeOp<"return", [
    HasParent<"::strata::vm::FuncOp">, Pure, ReturnLike, Terminator]> {
  let summary = "returns from the function";
  let arguments = (ins Variadic<VM_AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

def VM_FailOp : VM_BytecodeOp<"fail", [Terminator]> {
  let summary = "stops the program with an error message";
  let arguments = (ins StrAttr:$message);
  let assemblyFormat = "$message attr-dict";
}

def VM_CondFailOp : VM_BytecodeOp<"cond_fail"> {
  let summary = "fails with the message if the condition is not 0";
  let arguments = (ins I32:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict";
}

class VM_CheckOp<string mnemonic, string summaryText>
    : VM_BytecodeOp<mnemonic> {
  let summary = summaryText;
  let arguments = (ins I64:$lhs, I64:$rhs, StrAttr:$message);
  let assemblyFormat = "$lhs `,` $rhs `,` $message attr-dict";
}
def VM_CheckEqI64Op : VM_CheckOp<"check.eq.i64",
    "fails with the message and both values if they differ">;
def VM_CheckLeI64SOp : VM_CheckOp<"check.le.i64.s",
    "fails with the message and both values unless lhs <= rhs (signed)">;

//===----------------------------------------------------------------------===//
// Globals
//===----------------------------------------------------------------------===//

def VM_GlobalLoadI32Op : VM_GlobalLoadOp<"i32", I32, "GlobalI32Op">;
def VM_GlobalLoadI64Op : VM_GlobalLoadOp<"i64", I64, "GlobalI64Op">;
def VM_GlobalLoadF32Op : VM_GlobalLoadOp<"f32", F32, "GlobalF32Op">;
def VM_GlobalLoadF64Op : VM_GlobalLoadOp<"f64", F64, "GlobalF64Op">;
def VM_GlobalLoadRefOp : VM_GlobalLoadOp<"ref", VM_AnyRef, "GlobalRefOp">;
def VM_GlobalStoreI32Op : VM_GlobalStoreOp<"i32", I32, "GlobalI32Op">;
def VM_GlobalStoreI64Op : VM_GlobalStoreOp<"i64", I64, "GlobalI64Op">;
def VM_GlobalStoreF32Op : VM_GlobalStoreOp<"f32", F32, "GlobalF32Op">;
def VM_GlobalStoreF64Op : VM_GlobalStoreOp<"f64", F64, "GlobalF64Op">;
def VM_GlobalStoreRefOp : VM_GlobalStoreOp<"ref", VM_AnyRef, "GlobalRefOp">;

//===----------------------------------------------------------------------===//
// Byte buffers (offsets and lengths in bytes)
//===----------------------------------------------------------------------===//

def VM_BufferAllocOp : VM_BytecodeOp<"buffer.alloc"> {
  let summary = "allocates a zero-filled buffer of `length` bytes";
  let arguments = (ins I64:$length);
  let results = (outs VM_BufferType:$result);
  let assemblyFormat = "$length attr-dict";
}

def VM_BufferLengthOp : VM_BytecodeOp<"buffer.length"> {
  let summary = "the buffer's length in bytes";
  let arguments = (ins VM_BufferType:$buffer);
  let results = (outs I64:$result);
  let assemblyFormat = "$buffer attr-dict";
}

def VM_BufferCopyOp : VM_BytecodeOp<"buffer.copy"> {
  let summary = "copies `length` bytes between buffers";
  let description = [{
    ```mlir
    vm.buffer.copy %src[%src_offset], %dst[%dst_offset], %length
    ```
  }];
  let arguments = (ins VM_BufferType:$source, I64:$source_offset,
                       VM_BufferType:$target, I64:$target_offset,
                       I64:$length);
  let assemblyFormat = [{
    $source `[` $source_offset `]` `,` $target `[` $target_offset `]` `,`
    $length attr-dict
  }];
}

def VM_BufferFillI8Op : VM_BytecodeOp<"buffer.fill.i8"> {
  let summary = "sets `length` bytes to the low byte of `value`";
  let description = [{
    ```mlir
    vm.buffer.fill.i8 %buffer[%offset], %length, %value
    ```
  }];
  let arguments = (ins VM_BufferType:$buffer, I64:$offset, I64:$length,
                       I32:$value);
  let assemblyFormat =
      "$buffer `[` $offset `]` `,` $length `,` $value attr-dict";
}

def VM_BufferLoadI8SOp : VM_BufferLoadOp<"i8.s", I32>;
def VM_BufferLoadI8UOp : VM_BufferLoadOp<"i8.u", I32>;
def VM_BufferLoadI16SOp : VM_BufferLoadOp<"i16.s", I32>;
def VM_BufferLoadI16UOp : VM_BufferLoadOp<"i16.u", I32>;
def VM_BufferLoadI32Op : VM_BufferLoadOp<"i32", I32>;
def VM_BufferLoadI64Op : VM_BufferLoadOp<"i64", I64>;
def VM_BufferLoadF32Op : VM_BufferLoadOp<"f32", F32>;
def VM_BufferLoadF64Op : VM_BufferLoadOp<"f64", F64>;
def VM_BufferStoreI8Op : VM_BufferStoreOp<"i8", I32>;
def VM_BufferStoreI16Op : VM_BufferStoreOp<"i16", I32>;
def VM_BufferStoreI32Op : VM_BufferStoreOp<"i32", I32>;
def VM_BufferStoreI64Op : VM_BufferStoreOp<"i64", I64>;
def VM_BufferStoreF32Op : VM_BufferStoreOp<"f32", F32>;
def VM_BufferStoreF64Op : VM_BufferStoreOp<"f64", F64>;

//===----------------------------------------------------------------------===//
// Lists of variants (indices in elements)
//===----------------------------------------------------------------------===//

def VM_ListAllocOp : VM_BytecodeOp<"list.alloc"> {
  let summary = "allocates an empty list with room for `capacity` elements";
  let arguments = (ins I32:$capacity);
  let results = (outs VM_ListType:$result);
  let assemblyFormat = "$capacity attr-dict";
}

def VM_ListSizeOp : VM_BytecodeOp<"list.size"> {
  let summary = "the number of elements";
  let arguments = (ins VM_ListType:$list);
  let results = (outs I32:$result);
  let assemblyFormat = "$list attr-dict";
}

def VM_ListResizeOp : VM_BytecodeOp<"list.resize"> {
  let summary = "grows (with null elements) or shrinks the list";
  let arguments = (ins VM_ListType:$list, I32:$size);
  let assemblyFormat = "$list `,` $size attr-dict";
}

def VM_ListGetI32Op : VM_ListGetOp<"i32", I32>;
def VM_ListGetI64Op : VM_ListGetOp<"i64", I64>;
def VM_ListGetF32Op : VM_ListGetOp<"f32", F32>;
def VM_ListGetF64Op : VM_ListGetOp<"f64", F64>;
def VM_ListGetRefOp : VM_ListGetOp<"ref", VM_AnyRef>;
def VM_ListSetI32Op : VM_ListSetOp<"i32", I32>;
def VM_ListSetI64Op : VM_ListSetOp<"i64", I64>;
def VM_ListSetF32Op : VM_ListSetOp<"f32", F32>;
def VM_ListSetF64Op : VM_ListSetOp<"f64", F64>;
def VM_ListSetRefOp : VM_ListSetOp<"ref", VM_AnyRef>;

#endif  // STRATA_COMPILER_VM_IR_VMOPS_TD
