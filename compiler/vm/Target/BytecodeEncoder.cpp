//===- BytecodeEncoder.cpp - one vm.func to bytecode ----------------------===//

#include "compiler/vm/Target/BytecodeEncoder.h"

#include "compiler/support/SourceLocation.h"

#include <cassert>
#include <cctype>
#include <limits>
#include <optional>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;

namespace strata::vm {

uint32_t ModuleSymbols::internString(llvm::StringRef string) {
  auto [it, inserted] = stringIndices.try_emplace(string, strings.size());
  if (inserted)
    strings.push_back(string.str());
  return it->second;
}

namespace {

using bytecode::Opcode;

/// Whether a value of `type` fits a register letter of bytecode_ops.def.
bool letterMatchesType(char letter, Type type) {
  switch (std::tolower(static_cast<unsigned char>(letter))) {
  case 'i':
    return type.isSignlessInteger(32);
  case 'l':
    return type.isSignlessInteger(64);
  case 'f':
    return type.isF32();
  case 'd':
    return type.isF64();
  case 'r':
    return isRefType(type);
  default:
    return false;
  }
}

/// The raw bits of an integer or float immediate.
std::optional<uint64_t> immediateBits(Attribute value) {
  if (auto integer = dyn_cast_or_null<IntegerAttr>(value))
    return integer.getValue().getZExtValue();
  if (auto real = dyn_cast_or_null<FloatAttr>(value))
    return real.getValue().bitcastToAPInt().getZExtValue();
  return std::nullopt;
}

class FunctionEncoder {
public:
  FunctionEncoder(const RegisterAllocation &registers, ModuleSymbols &symbols)
      : registers(registers), symbols(symbols) {}

  FailureOr<EncodedFunction> encode();

private:
  /// A branch target (a block or an edge stub), placed at most once.
  using Label = unsigned;
  static constexpr uint32_t kUnplaced = std::numeric_limits<uint32_t>::max();

  /// A `BR dest remap` emitted after the last block, for an edge whose
  /// branch instruction has no remap list of its own.
  struct Stub {
    Label label;
    Location loc;
    Block *dest;
    SmallVector<RegisterMove> moves;
  };

  Label newLabel() {
    labelOffsets.push_back(kUnplaced);
    return labelOffsets.size() - 1;
  }
  void placeLabel(Label label) { labelOffsets[label] = pc(); }
  uint32_t pc() const { return result.bytecode.size(); }

  LogicalResult encodeBlock(Block *block, Block *next);
  LogicalResult encodeInstruction(Opcode opcode, Operation *op, Location loc,
                                  ArrayRef<Label> targets,
                                  ArrayRef<RegisterMove> remap);
  LogicalResult encodeBranch(Location loc, Block *dest,
                             ArrayRef<RegisterMove> moves) {
    return encodeInstruction(Opcode::BR, /*op=*/nullptr, loc,
                             {blockLabels.at(dest)}, moves);
  }

  /// Where a remap-less branch instruction jumps for successor `index`: the
  /// block itself, or a stub that performs the edge's moves first.
  Label edgeTarget(Operation *branch, unsigned index);

  /// The entry of `table` for the symbol in `op`'s attribute `name`.
  template <typename T>
  FailureOr<T> lookupSymbol(Operation *op, StringRef name,
                            const llvm::StringMap<T> &table);

  void emit(uint64_t value, unsigned bytes) {
    for (unsigned i = 0; i < bytes; ++i)
      result.bytecode.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  LogicalResult emitList(Operation *op, ValueRange values);
  /// Emits the branch to `op`'s fall-through successor where one is needed.
  LogicalResult encodeFallthrough(Operation *op, unsigned targetCount,
                                  Block *next);

  const RegisterAllocation &registers;
  ModuleSymbols &symbols;
  EncodedFunction result;
  DenseMap<Block *, Label> blockLabels;
  std::vector<uint32_t> labelOffsets;
  std::vector<Stub> stubs;
  /// (byte position of a u32 branch target, the label it names).
  std::vector<std::pair<uint32_t, Label>> fixups;
};

FailureOr<EncodedFunction> FunctionEncoder::encode() {
  ArrayRef<Block *> blocks = registers.getReachableBlocks();
  for (Block *block : blocks)
    blockLabels[block] = newLabel();
  for (auto [i, block] : llvm::enumerate(blocks)) {
    placeLabel(blockLabels.at(block));
    Block *next = i + 1 < blocks.size() ? blocks[i + 1] : nullptr;
    if (failed(encodeBlock(block, next)))
      return failure();
  }
  // Stubs come last so that they never sit in a fall-through path.
  for (const Stub &stub : stubs) {
    placeLabel(stub.label);
    if (failed(encodeBranch(stub.loc, stub.dest, stub.moves)))
      return failure();
  }
  for (auto [position, label] : fixups) {
    uint32_t offset = labelOffsets[label];
    assert(offset != kUnplaced && "branch to a label that was never placed");
    for (unsigned i = 0; i < 4; ++i)
      result.bytecode[position + i] = static_cast<uint8_t>(offset >> (8 * i));
  }
  return std::move(result);
}

FunctionEncoder::Label FunctionEncoder::edgeTarget(Operation *branch,
                                                   unsigned index) {
  Block *dest = branch->getSuccessor(index);
  SmallVector<RegisterMove> moves = registers.getEdgeMoves(branch, index);
  if (moves.empty())
    return blockLabels.at(dest);
  Label label = newLabel();
  stubs.push_back({label, branch->getLoc(), dest, std::move(moves)});
  return label;
}

/// The superinstruction for `add` followed by the fused compare-branch
/// `branch` that tests the sum, or nothing if the pair does not fit one.
static std::optional<Opcode> addBranchSuperinstruction(Operation *add,
                                                       Operation *branch) {
  auto fuse = [&](auto addOp, auto branchOp, Opcode opcode)
      -> std::optional<Opcode> {
    if (!addOp || !branchOp || branchOp.getLhs() != addOp.getResult())
      return std::nullopt;
    return opcode;
  };
  if (!branch)
    return std::nullopt;
  auto add32 = dyn_cast<AddI32Op>(add);
  auto add64 = dyn_cast<AddI64Op>(add);
  if (auto fused = fuse(add32, dyn_cast<CmpBrLtI32SOp>(branch), Opcode::ADD_BR_LT_I32_S))
    return fused;
  if (auto fused = fuse(add32, dyn_cast<CmpBrLeI32SOp>(branch), Opcode::ADD_BR_LE_I32_S))
    return fused;
  if (auto fused = fuse(add64, dyn_cast<CmpBrLtI64SOp>(branch), Opcode::ADD_BR_LT_I64_S))
    return fused;
  return fuse(add64, dyn_cast<CmpBrLeI64SOp>(branch), Opcode::ADD_BR_LE_I64_S);
}

LogicalResult FunctionEncoder::encodeBlock(Block *block, Block *next) {
  for (Operation &op : *block) {
    // An add whose sum the block's closing compare-branch tests becomes one
    // add_br superinstruction (operands: sum, addends, the compare's rhs,
    // target); the branch's fall-through edge is handled with the branch.
    Operation *following = op.getNextNode();
    if (std::optional<Opcode> fused = addBranchSuperinstruction(&op, following)) {
      if (std::optional<std::string> file = fileLocation(op.getLoc()))
        result.sourceLocations.emplace_back(pc(), std::move(*file));
      emit(static_cast<uint8_t>(*fused), 1);
      emit(registers.get(op.getResult(0)).index, 2);
      emit(registers.get(op.getOperand(0)).index, 2);
      emit(registers.get(op.getOperand(1)).index, 2);
      emit(registers.get(following->getOperand(1)).index, 2);
      fixups.emplace_back(pc(), edgeTarget(following, 0));
      emit(0, 4);
      if (failed(encodeFallthrough(following, /*targetCount=*/1, next)))
        return failure();
      break;  // the compare-branch ends the block
    }
    auto instruction = dyn_cast<InstructionOpInterface>(&op);
    if (!instruction)
      return op.emitOpError()
             << "is not a VM instruction; only vm dialect ops can be compiled "
                "to bytecode";
    Opcode opcode = instruction.getOpcode();
    StringRef letters = bytecode::kOpInfo[static_cast<size_t>(opcode)].operands;
    unsigned targetCount = letters.count('b');
    if (op.getNumSuccessors() < targetCount ||
        op.getNumSuccessors() > targetCount + 1)
      return op.emitOpError()
             << "has " << op.getNumSuccessors() << " successors for a row with "
             << targetCount << " branch targets";

    SmallVector<Label, 2> targets;
    SmallVector<RegisterMove> remap;
    if (letters.contains('x')) {
      // BR: the remap list performs the edge's moves itself.
      remap = registers.getEdgeMoves(&op, 0);
      if (op.getSuccessor(0) == next && remap.empty())
        continue; // falls through
      targets.push_back(blockLabels.at(op.getSuccessor(0)));
    } else {
      for (unsigned i = 0; i < targetCount; ++i)
        targets.push_back(edgeTarget(&op, i));
    }
    if (failed(encodeInstruction(opcode, &op, op.getLoc(), targets, remap)))
      return failure();

    if (failed(encodeFallthrough(&op, targetCount, next)))
      return failure();
  }
  return success();
}

LogicalResult FunctionEncoder::encodeFallthrough(Operation *op,
                                                 unsigned targetCount,
                                                 Block *next) {
  // A successor without a target in the row is where the instruction falls
  // through (the fused compare-and-branch rows): branch there unless it is
  // the next block and needs no moves.
  if (op->getNumSuccessors() <= targetCount)
    return success();
  Block *fallthrough = op->getSuccessor(targetCount);
  SmallVector<RegisterMove> moves = registers.getEdgeMoves(op, targetCount);
  if (fallthrough == next && moves.empty())
    return success();
  return encodeBranch(op->getLoc(), fallthrough, moves);
}

template <typename T>
FailureOr<T> FunctionEncoder::lookupSymbol(Operation *op, StringRef name,
                                           const llvm::StringMap<T> &table) {
  auto symbol = op->getAttrOfType<FlatSymbolRefAttr>(name);
  if (!symbol)
    return op->emitOpError() << "needs a symbol attribute '" << name
                             << "' for its bytecode operand";
  auto it = table.find(symbol.getValue());
  if (it == table.end())
    return op->emitOpError()
           << "refers to " << symbol << ", which is not of the kind it needs";
  return it->second;
}

LogicalResult FunctionEncoder::emitList(Operation *op, ValueRange values) {
  if (values.size() > std::numeric_limits<uint16_t>::max())
    return op->emitOpError() << "passes " << values.size()
                             << " values; one instruction takes at most "
                             << std::numeric_limits<uint16_t>::max();
  emit(values.size(), 2);
  for (Value value : values)
    emit(registers.get(value).tagged(), 2);
  return success();
}

LogicalResult FunctionEncoder::encodeInstruction(Opcode opcode, Operation *op,
                                                 Location loc,
                                                 ArrayRef<Label> targets,
                                                 ArrayRef<RegisterMove> remap) {
  if (std::optional<std::string> file = fileLocation(loc))
    result.sourceLocations.emplace_back(pc(), std::move(*file));

  const bytecode::OpInfo &row = bytecode::kOpInfo[static_cast<size_t>(opcode)];
  OperandRange operands =
      op ? getInstructionOperands(op) : OperandRange(nullptr, 0);
  unsigned numResults = op ? op->getNumResults() : 0;
  unsigned nextResult = 0, nextOperand = 0, nextTarget = 0;
  // Only a mismatch between an op's ODS definition and its row gets here.
  auto mismatch = [&](const Twine &why) -> LogicalResult {
    return emitError(loc) << "'" << (op ? op->getName().getStringRef() : "")
                          << "' does not match row '" << row.mnemonic << "' (\""
                          << row.operands << "\") of bytecode_ops.def: " << why;
  };

  emit(static_cast<uint8_t>(opcode), 1);
  for (char letter : StringRef(row.operands)) {
    // Only BR is encoded without an op, from a target and a remap list.
    if (!op && letter != 'b' && letter != 'x')
      return mismatch("the row needs an op to take operands from");
    switch (letter) {
    case 'I':
    case 'L':
    case 'F':
    case 'D':
    case 'R':
    case 'i':
    case 'l':
    case 'f':
    case 'd':
    case 'r': {
      bool isResult = std::isupper(static_cast<unsigned char>(letter));
      if (isResult ? nextResult >= numResults : nextOperand >= operands.size())
        return mismatch(isResult ? "too few results" : "too few operands");
      Value value =
          isResult ? op->getResult(nextResult++) : operands[nextOperand++];
      if (!letterMatchesType(letter, value.getType()))
        return mismatch(Twine("'") + Twine(letter) +
                        "' cannot hold a value of this type");
      emit(registers.get(value).index, 2);
      break;
    }
    case '4':
    case '8': {
      std::optional<uint64_t> bits = immediateBits(op->getAttr("value"));
      if (!bits)
        return mismatch("no integer or float attribute 'value'");
      emit(*bits, letter == '4' ? 4 : 8);
      break;
    }
    case 'b':
      if (nextTarget >= targets.size())
        return mismatch("too few branch targets");
      fixups.emplace_back(pc(), targets[nextTarget++]);
      emit(0, 4);
      break;
    case 'x':
      if (remap.size() > std::numeric_limits<uint16_t>::max())
        return emitError(loc) << "branch needs " << remap.size()
                              << " moves; one instruction takes at most "
                              << std::numeric_limits<uint16_t>::max();
      emit(remap.size(), 2);
      for (const RegisterMove &move : remap) {
        emit(move.source.tagged(), 2);
        emit(move.target.tagged(), 2);
      }
      break;
    case 'v':
      if (failed(emitList(op, operands.drop_front(nextOperand))))
        return failure();
      nextOperand = operands.size();
      break;
    case 'V':
      if (failed(emitList(op, op->getResults().drop_front(nextResult))))
        return failure();
      nextResult = numResults;
      break;
    case 's': {
      auto message = op->getAttrOfType<StringAttr>("message");
      if (!message)
        return mismatch("no string attribute 'message'");
      emit(symbols.internString(message.getValue()), 4);
      break;
    }
    case 'k':
    case 'm': {
      FailureOr<uint16_t> ordinal = lookupSymbol(
          op, "callee",
          letter == 'k' ? symbols.functionOrdinals : symbols.importOrdinals);
      if (failed(ordinal))
        return failure();
      emit(*ordinal, 2);
      break;
    }
    case 'o':
    case 'g':
    case 'h': {
      const llvm::StringMap<uint32_t> &table =
          letter == 'o'   ? symbols.rodataOrdinals
          : letter == 'g' ? symbols.scalarGlobalOffsets
                          : symbols.refGlobalOrdinals;
      FailureOr<uint32_t> value =
          lookupSymbol(op, letter == 'o' ? "rodata" : "global", table);
      if (failed(value))
        return failure();
      emit(*value, 4);
      break;
    }
    case 'e': {
      auto name = op->getAttrOfType<StringAttr>("executable");
      if (!name)
        return mismatch("no string attribute 'executable'");
      auto it = symbols.executableOrdinals.find(name.getValue());
      if (it == symbols.executableOrdinals.end())
        return op->emitOpError() << "names executable '" << name.getValue()
                                 << "', which the module does not embed";
      emit(it->second, 4);
      break;
    }
    default:
      return mismatch(Twine("unknown operand letter '") + Twine(letter) + "'");
    }
  }
  if (nextResult != numResults || nextOperand != operands.size())
    return mismatch("the row leaves results or operands unencoded");
  return success();
}

} // namespace

FailureOr<EncodedFunction> encodeFunction(const RegisterAllocation &registers,
                                          ModuleSymbols &symbols) {
  return FunctionEncoder(registers, symbols).encode();
}

} // namespace strata::vm
