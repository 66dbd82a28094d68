//===- RegisterAllocation.cpp - registers for a vm.func -------------------===//

#include "compiler/vm/Target/RegisterAllocation.h"

#include "mlir/Analysis/Liveness.h"
#include "mlir/IR/RegionGraphTraits.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace strata::vm {

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, Register reg) {
  return os << (reg.isRef() ? 'r' : 's') << reg.index;
}

OperandRange getInstructionOperands(Operation *op) {
  unsigned successorOperands = 0;
  if (auto branch = dyn_cast<BranchOpInterface>(op))
    for (unsigned i = 0, e = op->getNumSuccessors(); i < e; ++i)
      successorOperands += branch.getSuccessorOperands(i).size();
  return op->getOperands().drop_back(successorOperands);
}

namespace {

constexpr size_t bankIndex(Register::Bank bank) {
  return static_cast<size_t>(bank);
}

StringRef bankName(Register::Bank bank) {
  return bank == Register::Bank::kRef ? "ref" : "scalar";
}

/// For each op of `block`, the operands whose last use it is.
DenseMap<Operation *, SmallVector<Value, 2>>
computeDyingOperands(Block *block, const Liveness &liveness) {
  DenseMap<Operation *, SmallVector<Value, 2>> dying;
  const Liveness::ValueSetT &liveOut = liveness.getLiveOut(block);
  llvm::SmallPtrSet<Value, 16> live(liveOut.begin(), liveOut.end());
  for (Operation &op : llvm::reverse(*block)) {
    SmallVector<Value, 2> &operands = dying[&op];
    for (Value operand : op.getOperands())
      if (!live.contains(operand) && !llvm::is_contained(operands, operand))
        operands.push_back(operand);
    for (Value result : op.getResults())
      live.erase(result);
    for (Value operand : op.getOperands())
      live.insert(operand);
  }
  return dying;
}

/// Assigns registers block by block; see RegisterAllocation.h for the policy.
class Allocator {
public:
  explicit Allocator(DenseMap<Value, Register> &registers)
      : registers(registers) {}

  LogicalResult allocateEntryBlock(Block *block);
  LogicalResult allocateBlock(Block *block, const Liveness &liveness);

  /// Registers handed out so far in `bank`.
  unsigned getCount(Register::Bank bank) const {
    return held[bankIndex(bank)].size();
  }

private:
  void hold(Register reg) { held[bankIndex(reg.bank)].set(reg.index); }
  /// Whether `reg` could hold a value of `type` now.
  bool isFree(Register reg, Type type) const {
    return reg.bank == Register::bankOf(type) &&
           !held[bankIndex(reg.bank)].test(reg.index);
  }
  void release(Register reg) { held[bankIndex(reg.bank)].reset(reg.index); }

  /// Picks a free register for `value`, the first free one of `hints` if
  /// any, and marks it held.
  FailureOr<Register> assign(Value value, ArrayRef<Register> hints);
  FailureOr<Register> newRegister(Value value, Register::Bank bank,
                                  unsigned index);

  /// Registers of the block arguments `value` is passed to, where known.
  void addSuccessorArgumentHints(Value value, SmallVectorImpl<Register> &hints);
  /// Registers of the values passed to `argument`, where known.
  void addIncomingValueHints(BlockArgument argument,
                             SmallVectorImpl<Register> &hints);

  DenseMap<Value, Register> &registers;
  /// Per bank, the registers that live values hold at the current point;
  /// the size is the number of registers handed out so far.
  std::array<llvm::BitVector, 2> held;
};

FailureOr<Register> Allocator::newRegister(Value value, Register::Bank bank,
                                           unsigned index) {
  if (index >= kMaxRegisterCount)
    return emitError(value.getLoc())
           << "function needs more than " << kMaxRegisterCount << " "
           << bankName(bank) << " registers, the most the VM allows";
  llvm::BitVector &bits = held[bankIndex(bank)];
  if (index >= bits.size())
    bits.resize(index + 1);
  Register reg{bank, static_cast<uint16_t>(index)};
  registers[value] = reg;
  hold(reg);
  return reg;
}

FailureOr<Register> Allocator::assign(Value value, ArrayRef<Register> hints) {
  Register::Bank bank = Register::bankOf(value.getType());
  const llvm::BitVector &bits = held[bankIndex(bank)];
  for (Register hint : hints)
    if (isFree(hint, value.getType()))
      return newRegister(value, bank, hint.index);
  int free = bits.find_first_unset();
  return newRegister(value, bank, free >= 0 ? free : bits.size());
}

void Allocator::addSuccessorArgumentHints(Value value,
                                          SmallVectorImpl<Register> &hints) {
  for (OpOperand &use : value.getUses()) {
    auto branch = dyn_cast<BranchOpInterface>(use.getOwner());
    if (!branch)
      continue;
    if (std::optional<BlockArgument> argument =
            branch.getSuccessorBlockArgument(use.getOperandNumber()))
      if (auto it = registers.find(*argument); it != registers.end())
        hints.push_back(it->second);
  }
}

void Allocator::addIncomingValueHints(BlockArgument argument,
                                      SmallVectorImpl<Register> &hints) {
  Block *block = argument.getOwner();
  for (Block *predecessor : block->getPredecessors()) {
    auto branch = dyn_cast<BranchOpInterface>(predecessor->getTerminator());
    if (!branch)
      continue;
    for (unsigned i = 0, e = branch->getNumSuccessors(); i < e; ++i) {
      if (branch->getSuccessor(i) != block)
        continue;
      Value incoming = branch.getSuccessorOperands(i)[argument.getArgNumber()];
      if (auto it = registers.find(incoming); it != registers.end())
        hints.push_back(it->second);
    }
  }
}

LogicalResult Allocator::allocateEntryBlock(Block *block) {
  std::array<unsigned, 2> next = {0, 0};
  for (BlockArgument argument : block->getArguments()) {
    Register::Bank bank = Register::bankOf(argument.getType());
    if (failed(newRegister(argument, bank, next[bankIndex(bank)]++)))
      return failure();
  }
  return success();
}

LogicalResult Allocator::allocateBlock(Block *block, const Liveness &liveness) {
  // Live-in values are defined in dominating blocks, which reverse
  // post-order visits first, so they all have registers.
  for (llvm::BitVector &bits : held)
    bits.reset();
  for (Value value : liveness.getLiveIn(block))
    hold(registers.at(value));

  if (block->isEntryBlock()) {
    if (failed(allocateEntryBlock(block)))
      return failure();
  } else {
    // Arguments whose hinted register is free take it first, so that an
    // argument without a usable hint does not grab another one's.
    SmallVector<SmallVector<Register, 4>> hints(block->getNumArguments());
    for (BlockArgument argument : block->getArguments()) {
      addIncomingValueHints(argument, hints[argument.getArgNumber()]);
      addSuccessorArgumentHints(argument, hints[argument.getArgNumber()]);
    }
    for (bool hintedOnly : {true, false}) {
      for (BlockArgument argument : block->getArguments()) {
        ArrayRef<Register> argumentHints = hints[argument.getArgNumber()];
        if (registers.contains(argument) ||
            (hintedOnly && !llvm::any_of(argumentHints, [&](Register hint) {
               return isFree(hint, argument.getType());
             })))
          continue;
        if (failed(assign(argument, argumentHints)))
          return failure();
      }
    }
  }
  // Unused arguments keep a register only while the block's arguments are
  // assigned: the caller writes every entry argument, and edge moves skip
  // unused ones, so nothing reads or writes it afterwards.
  for (BlockArgument argument : block->getArguments())
    if (argument.use_empty())
      release(registers.at(argument));

  DenseMap<Operation *, SmallVector<Value, 2>> dying =
      computeDyingOperands(block, liveness);
  for (Operation &op : *block) {
    SmallVector<Register, 2> freed;
    for (Value operand : dying.at(&op)) {
      Register reg = registers.at(operand);
      release(reg);
      freed.push_back(reg);
    }
    for (Value result : op.getResults()) {
      SmallVector<Register, 4> hints;
      addSuccessorArgumentHints(result, hints);
      hints.append(freed);
      if (failed(assign(result, hints)))
        return failure();
    }
    // An unused result is still written, but nothing reads it afterwards.
    for (Value result : op.getResults())
      if (result.use_empty())
        release(registers.at(result));
  }
  return success();
}

/// Orders the moves of a parallel copy (distinct targets, no identity moves)
/// for sequential execution; `scratch` holds each bank's scratch register.
SmallVector<RegisterMove>
sequenceParallelCopy(SmallVector<RegisterMove> pending,
                     const std::array<uint16_t, 2> &scratch) {
  SmallVector<RegisterMove> ordered;
  auto isStillRead = [&](Register reg) {
    return llvm::any_of(pending,
                        [&](const RegisterMove &m) { return m.source == reg; });
  };
  while (!pending.empty()) {
    // A move may go once no pending move still needs its target's value.
    auto ready = llvm::find_if(
        pending, [&](const RegisterMove &m) { return !isStillRead(m.target); });
    if (ready != pending.end()) {
      ordered.push_back(*ready);
      pending.erase(ready);
      continue;
    }
    // Only cycles are left: park one target's value in the scratch register
    // and let its readers take it from there, which frees that target.
    Register blocked = pending.front().target;
    Register parked{blocked.bank, scratch[bankIndex(blocked.bank)]};
    ordered.push_back({blocked, parked});
    for (RegisterMove &move : pending)
      if (move.source == blocked)
        move.source = parked;
  }
  return ordered;
}

} // namespace

FailureOr<RegisterAllocation> RegisterAllocation::compute(FuncOp function) {
  RegisterAllocation result(function);
  Region &body = function.getBody();
  llvm::ReversePostOrderTraversal<Block *> traversal(&body.front());
  SmallVector<Block *> order(traversal.begin(), traversal.end());
  llvm::SmallPtrSet<Block *, 16> reachable(order.begin(), order.end());
  for (Block &block : body)
    if (reachable.contains(&block))
      result.blocks.push_back(&block);

  Liveness liveness(function);
  Allocator allocator(result.registers);
  for (Block *block : order)
    if (failed(allocator.allocateBlock(block, liveness)))
      return failure();

  for (Register::Bank bank : {Register::Bank::kScalar, Register::Bank::kRef}) {
    result.scratch[bankIndex(bank)] = allocator.getCount(bank);
    result.counts[bankIndex(bank)] = allocator.getCount(bank);
  }
  // Count the scratch register of a bank if some edge's moves need it.
  for (Block *block : result.blocks) {
    Operation *terminator = block->getTerminator();
    for (unsigned i = 0, e = terminator->getNumSuccessors(); i < e; ++i) {
      for (RegisterMove move : result.getEdgeMoves(terminator, i)) {
        size_t bank = bankIndex(move.target.bank);
        if (move.target.index == result.scratch[bank])
          result.counts[bank] = result.scratch[bank] + 1;
      }
    }
  }
  for (Register::Bank bank : {Register::Bank::kScalar, Register::Bank::kRef})
    if (result.counts[bankIndex(bank)] > kMaxRegisterCount)
      return function.emitOpError()
             << "needs " << result.counts[bankIndex(bank)] << " "
             << bankName(bank) << " registers; the VM allows at most "
             << kMaxRegisterCount;
  return result;
}

Register RegisterAllocation::get(Value value) const {
  return registers.at(value);
}

SmallVector<RegisterMove>
RegisterAllocation::getEdgeMoves(Operation *terminator,
                                 unsigned successorIndex) const {
  auto branch = cast<BranchOpInterface>(terminator);
  Block *successor = terminator->getSuccessor(successorIndex);
  SuccessorOperands operands = branch.getSuccessorOperands(successorIndex);
  SmallVector<RegisterMove> moves;
  for (BlockArgument argument : successor->getArguments()) {
    if (argument.use_empty())
      continue;
    Register source = get(operands[argument.getArgNumber()]);
    Register target = get(argument);
    if (!(source == target))
      moves.push_back({source, target});
  }
  return sequenceParallelCopy(std::move(moves), scratch);
}

void RegisterAllocation::print(llvm::raw_ostream &os) const {
  FuncOp function = this->function; // op accessors are not const
  os << "vm.func @" << function.getSymName() << ": "
     << getRegisterCount(Register::Bank::kScalar) << " scalar, "
     << getRegisterCount(Register::Bank::kRef) << " ref registers\n";
  DenseMap<Block *, unsigned> blockIds;
  for (Block &block : function.getBody())
    blockIds[&block] = blockIds.size();
  auto printRegisters = [&](auto values) {
    llvm::interleaveComma(values, os, [&](Value v) { os << get(v); });
  };

  for (Block *block : blocks) {
    os << "^bb" << blockIds.at(block);
    if (block->getNumArguments() != 0) {
      os << '(';
      printRegisters(block->getArguments());
      os << ')';
    }
    os << ":\n";
    for (Operation &op : *block) {
      os << "  ";
      if (op.getNumResults() != 0) {
        printRegisters(op.getResults());
        os << " = ";
      }
      os << op.getName();
      OperandRange operands = getInstructionOperands(&op);
      if (!operands.empty()) {
        os << ' ';
        printRegisters(operands);
      }
      for (unsigned i = 0, e = op.getNumSuccessors(); i < e; ++i) {
        os << (operands.empty() && i == 0 ? " " : ", ") << "^bb"
           << blockIds.at(op.getSuccessor(i));
        SmallVector<RegisterMove> moves = getEdgeMoves(&op, i);
        if (moves.empty())
          continue;
        os << " [";
        llvm::interleaveComma(moves, os, [&](const RegisterMove &move) {
          os << move.source << " -> " << move.target;
        });
        os << ']';
      }
      os << '\n';
    }
  }
}

} // namespace strata::vm
