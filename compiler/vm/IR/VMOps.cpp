//===- VMOps.cpp - vm dialect ops -----------------------------------------===//

#include "compiler/vm/IR/VMOps.h"

#include <array>
#include <string>
#include <string_view>
#include <tuple>

#include "compiler/support/Bytes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;

namespace strata::vm {
namespace {

/// An argument of type !vm.ref accepts any ref, so that imports can take
/// objects of several kinds; everything else must match exactly.
bool isCompatibleArgument(Type expected, Type actual) {
  return expected == actual || (isa<RefType>(expected) && isRefType(actual));
}

/// "(i32, !vm.buffer)": a type list as written in the IR.
std::string typeList(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '(';
  llvm::interleaveComma(types, os);
  os << ')';
  return text;
}

/// Checks a call's operands and results against the callee's type.
LogicalResult verifyCallSignature(Operation *op, FlatSymbolRefAttr callee,
                                  FunctionType type) {
  if (op->getNumOperands() != type.getNumInputs())
    return op->emitOpError()
           << "callee " << callee << " takes " << type.getNumInputs()
           << " arguments, got " << op->getNumOperands();
  for (auto [i, expected, actual] :
       llvm::enumerate(type.getInputs(), op->getOperandTypes()))
    if (!isCompatibleArgument(expected, actual))
      return op->emitOpError()
             << "argument " << i << " of " << callee << ": expected "
             << expected << ", got " << actual;
  if (op->getResultTypes() != type.getResults())
    return op->emitOpError() << "results of " << callee << ": expected "
                             << typeList(type.getResults()) << ", got "
                             << typeList(op->getResultTypes());
  return success();
}

/// Checks that every type of a signature fits a VM register.
LogicalResult verifyVMTypes(Operation *op, StringRef what, TypeRange types) {
  for (auto [i, type] : llvm::enumerate(types))
    if (!isVMType(type))
      return op->emitOpError() << what << " " << i << " has type " << type
                               << ", which no VM register holds (expected "
                                  "i32, i64, f32, f64 or a !vm ref)";
  return success();
}

// The two helpers below serve verifiers that VMOps.td generates.

LogicalResult verifyScalarGlobal(Operation *op, TypedAttr initialValue,
                                 Type valueType) {
  if (initialValue && (!isa<IntegerAttr, FloatAttr>(initialValue) ||
                       initialValue.getType() != valueType))
    return op->emitOpError() << "initial value must be a " << valueType
                             << " constant, got " << initialValue;
  return success();
}

/// Checks that `name` is a global of kind `GlobalOpT` whose value type is
/// `valueType`.
template <typename GlobalOpT>
LogicalResult verifyGlobalUse(Operation *op, FlatSymbolRefAttr name,
                              Type valueType,
                              SymbolTableCollection &symbolTable) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(op, name);
  if (!symbol)
    return op->emitOpError() << "refers to undefined global " << name;
  auto global = dyn_cast<GlobalOpT>(symbol);
  if (!global)
    return op->emitOpError()
           << name << " is a '" << symbol->getName() << "', expected a '"
           << GlobalOpT::getOperationName() << "'";
  Type globalType;
  if constexpr (std::is_same_v<GlobalOpT, GlobalRefOp>)
    globalType = global.getType();
  else
    globalType = GlobalOpT::getValueType(op->getContext());
  if (globalType != valueType)
    return op->emitOpError() << "global " << name << " holds " << globalType
                             << ", not " << valueType;
  return success();
}

//===----------------------------------------------------------------------===//
// vm.import signature: `@module.function(i64, i64) -> i32`
//===----------------------------------------------------------------------===//

ParseResult parseImportSignature(OpAsmParser &parser, TypeAttr &type) {
  SmallVector<Type> inputs, results;
  if (parser.parseLParen())
    return failure();
  if (failed(parser.parseOptionalRParen()) &&
      (parser.parseTypeList(inputs) || parser.parseRParen()))
    return failure();
  if (parser.parseOptionalArrowTypeList(results))
    return failure();
  type = TypeAttr::get(parser.getBuilder().getFunctionType(inputs, results));
  return success();
}

void printImportSignature(OpAsmPrinter &p, Operation *, TypeAttr type) {
  auto functionType = cast<FunctionType>(type.getValue());
  p << '(';
  llvm::interleaveComma(functionType.getInputs(), p);
  p << ')';
  p.printOptionalArrowTypeList(functionType.getResults());
}

} // namespace

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

LogicalResult ModuleOp::verify() {
  llvm::StringMap<ExportOp> exports;
  for (auto exportOp : getBody().getOps<ExportOp>()) {
    auto [it, inserted] =
        exports.try_emplace(exportOp.getExportedName(), exportOp);
    if (!inserted) {
      InFlightDiagnostic diag = exportOp.emitOpError()
                                << "exports the name '"
                                << exportOp.getExportedName() << "' twice";
      diag.attachNote(it->second.getLoc()) << "first exported here";
      return diag;
    }
  }
  return success();
}

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFunctionType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFunctionType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult FuncOp::verify() {
  if (getBody().empty())
    return emitOpError("needs a body; declare functions of other modules "
                       "with vm.import");
  if (failed(verifyVMTypes(*this, "argument", getArgumentTypes())) ||
      failed(verifyVMTypes(*this, "result", getResultTypes())))
    return failure();
  return success();
}

LogicalResult ExecutableOp::verify() {
  if (failed(verifyBytesAttr(*this, "data", getData())))
    return failure();
  return verifyBytesAttr(*this, "metadata", getMetadata());
}

LogicalResult ExportOp::verify() {
  if (getExportName() && getExportName()->empty())
    return emitOpError("export name must not be empty");
  return success();
}

LogicalResult ExportOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(*this, getFunctionRefAttr());
  if (!isa_and_nonnull<FuncOp>(symbol))
    return emitOpError() << getFunctionRefAttr()
                         << " does not name a vm.func of this module";
  return success();
}

LogicalResult ImportOp::verify() {
  if (getImportedModuleName().empty() || getImportedFunctionName().empty())
    return emitOpError() << "name '" << getSymName()
                         << "' must have the form 'module.function'";
  FunctionType type = getFunctionType();
  if (failed(verifyVMTypes(*this, "argument", type.getInputs())) ||
      failed(verifyVMTypes(*this, "result", type.getResults())))
    return failure();
  return success();
}

LogicalResult RodataOp::verify() {
  if (isa<StringAttr>(getValue()))
    return success();
  auto elements = dyn_cast<ElementsAttr>(getValue());
  bool supported = isa_and_nonnull<DenseIntOrFPElementsAttr,
                                   DenseResourceElementsAttr>(elements);
  Type elementType = supported ? elements.getElementType() : Type();
  if (!supported || !elementType.isIntOrFloat() ||
      elementType.getIntOrFloatBitWidth() % 8 != 0)
    return emitOpError() << "value must be a string or dense (or "
                            "dense_resource) elements of whole-byte integers "
                            "or floats, got "
                         << getValue();
  return success();
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

LogicalResult
ConstRefRodataOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(*this, getRodataAttr());
  if (!isa_and_nonnull<RodataOp>(symbol))
    return emitOpError() << getRodataAttr()
                         << " does not name a vm.rodata of this module";
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr());
  if (!symbol)
    return emitOpError() << "callee " << getCalleeAttr()
                         << " is not defined in this module";
  if (isa<ImportOp>(symbol))
    return emitOpError() << "callee " << getCalleeAttr()
                         << " is an import; call it with vm.call.import";
  auto callee = dyn_cast<FuncOp>(symbol);
  if (!callee)
    return emitOpError() << "callee " << getCalleeAttr() << " is a '"
                         << symbol->getName() << "', not a vm.func";
  return verifyCallSignature(*this, getCalleeAttr(), callee.getFunctionType());
}

LogicalResult
CallImportOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol =
      symbolTable.lookupNearestSymbolFrom(*this, getCalleeAttr());
  if (!symbol)
    return emitOpError() << "callee " << getCalleeAttr()
                         << " is not imported by this module";
  auto callee = dyn_cast<ImportOp>(symbol);
  if (!callee)
    return emitOpError() << "callee " << getCalleeAttr()
                         << " is not a vm.import; call it with vm.call";
  return verifyCallSignature(*this, getCalleeAttr(), callee.getFunctionType());
}

LogicalResult ReturnOp::verify() {
  auto function = (*this)->getParentOfType<FuncOp>();
  ArrayRef<Type> expected = function.getResultTypes();
  if (getOperandTypes() != TypeRange(expected))
    return emitOpError() << "returns " << typeList(getOperandTypes())
                         << " from a function that returns "
                         << typeList(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// The ops agree with bytecode_ops.def
//===----------------------------------------------------------------------===//
//
// Checked at compile time so that a row added to the table without its op,
// or an op whose mnemonic drifts from its row, fails the build rather than
// producing wrong bytecode.

namespace {

using AllOps = std::tuple<
#define GET_OP_LIST
#include "compiler/vm/IR/VMOps.cpp.inc"
    >;

template <typename OpT>
concept Instruction = requires {
  OpT::kOpcode;
};

/// An instruction op is named "vm." + its row's mnemonic; the fused
/// compare-and-branch ops, which take two successors where the row takes
/// one, are named "vm.cmp_" + mnemonic. Other ops have no row.
template <typename OpT> constexpr bool nameMatchesRow() {
  if constexpr (!Instruction<OpT>) {
    return true;
  } else {
    constexpr llvm::StringLiteral literal = OpT::getOperationName();
    std::string_view name(literal.data(), literal.size());
    std::string_view mnemonic =
        bytecode::kOpInfo[static_cast<size_t>(OpT::kOpcode)].mnemonic;
    if (!name.starts_with("vm."))
      return false;
    name.remove_prefix(3);
    return name == mnemonic ||
           (name.starts_with("cmp_") && name.substr(4) == mnemonic);
  }
}

template <typename... OpTs>
constexpr bool namesMatchRows(std::tuple<OpTs...> *) {
  return (nameMatchesRow<OpTs>() && ...);
}

template <typename... OpTs>
constexpr bool everyRowHasOneOp(std::tuple<OpTs...> *) {
  std::array<int, bytecode::kOpcodeCount> ops{};
  auto count = [&]<typename OpT>() {
    if constexpr (Instruction<OpT>)
      ++ops[static_cast<size_t>(OpT::kOpcode)];
  };
  (count.template operator()<OpTs>(), ...);
  for (size_t row = 0; row < ops.size(); ++row)
    if (ops[row] != (bytecode::kOpInfo[row].superinstruction ? 0 : 1))
      return false;
  return true;
}

static_assert(namesMatchRows(static_cast<AllOps *>(nullptr)),
              "a vm op's name does not match its row in bytecode_ops.def");
static_assert(everyRowHasOneOp(static_cast<AllOps *>(nullptr)),
              "every row of bytecode_ops.def needs exactly one vm op "
              "(superinstruction rows none)");

} // namespace
} // namespace strata::vm

#include "compiler/vm/IR/VMInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/vm/IR/VMOps.cpp.inc"
