//===- RegisterAllocation.h - registers for a vm.func -----------*- C++ -*-===//
//
// Assigns every SSA value of a vm.func a register in the scalar bank (i32,
// i64, f32, f64) or the ref bank (!vm.*), reusing registers once values die.
//
// Calling convention: the entry block's arguments take registers 0, 1, 2, ...
// of their bank in argument order (the VM copies call arguments there).
//
// The allocator visits blocks in reverse post-order and gives each value, at
// its definition, a register that no live value holds. Because SSA values
// interfere only where one is live at the other's definition, this never
// needs more registers per bank than values live at once. Among the free
// registers it prefers, in order:
//   1. the register of the block argument the value flows into (a loop
//      latch then passes its new induction values without moves),
//   2. for a block argument, the register of a value that flows into it,
//   3. the register of an operand that dies at the defining op (the VM reads
//      all operands before it writes results),
//   4. the lowest free one.
//
// Branch operands that still differ from their block argument's register
// become moves on the edge; getEdgeMoves() orders them so that executing them
// one after another equals the parallel copy the branch means, breaking
// cycles through one extra scratch register of that bank.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_TARGET_REGISTERALLOCATION_H
#define STRATA_COMPILER_VM_TARGET_REGISTERALLOCATION_H

#include <array>
#include <cstdint>

#include "compiler/vm/IR/VMOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

namespace strata::vm {

/// One VM register: an index into the scalar or the ref bank of a frame.
struct Register {
  enum class Bank : uint8_t { kScalar = 0, kRef = 1 };

  Bank bank = Bank::kScalar;
  uint16_t index = 0;

  static Bank bankOf(mlir::Type type) {
    return isRefType(type) ? Bank::kRef : Bank::kScalar;
  }
  bool isRef() const { return bank == Bank::kRef; }
  /// The encoding in call/return lists and branch remaps: bit 15 marks the
  /// ref bank.
  uint16_t tagged() const {
    return isRef() ? static_cast<uint16_t>(index | bytecode::kRefTag) : index;
  }
  friend bool operator==(Register a, Register b) {
    return a.bank == b.bank && a.index == b.index;
  }
};

/// Prints "s3" for scalar register 3 and "r1" for ref register 1.
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, Register reg);

/// A copy of one register into another on a control-flow edge.
struct RegisterMove {
  Register source;
  Register target;
};

/// The largest register count of a bank that a function may declare.
inline constexpr unsigned kMaxRegisterCount =
    bytecode::kMaxRegistersPerBank - 1;

/// The operands an instruction reads itself: all but its successor operands,
/// which become moves on the edges (they come last in every vm branch op).
mlir::OperandRange getInstructionOperands(mlir::Operation *op);

class RegisterAllocation {
public:
  /// Allocates registers for `function`. Emits a diagnostic and fails if a
  /// bank would need more than kMaxRegisterCount registers.
  static mlir::FailureOr<RegisterAllocation> compute(FuncOp function);

  /// The register of `value`, which must be defined in a reachable block.
  Register get(mlir::Value value) const;

  /// Registers the function declares in `bank`, the scratch register
  /// included when some edge needs it.
  uint16_t getRegisterCount(Register::Bank bank) const {
    return counts[static_cast<size_t>(bank)];
  }

  /// The blocks reachable from the entry, in region order. Unreachable blocks
  /// get no registers and are not emitted.
  llvm::ArrayRef<mlir::Block *> getReachableBlocks() const { return blocks; }

  /// The moves that pass the operands of `terminator` for successor
  /// `successorIndex` into the successor's block arguments, ordered so that
  /// executing them in sequence equals a parallel copy. Arguments without
  /// uses receive nothing.
  llvm::SmallVector<RegisterMove> getEdgeMoves(mlir::Operation *terminator,
                                               unsigned successorIndex) const;

  /// Prints the function with registers in place of values, and each edge's
  /// moves, for tests and debugging.
  void print(llvm::raw_ostream &os) const;

private:
  explicit RegisterAllocation(FuncOp function) : function(function) {}

  FuncOp function;
  llvm::SmallVector<mlir::Block *> blocks;
  llvm::DenseMap<mlir::Value, Register> registers;
  std::array<uint16_t, 2> counts = {0, 0};
  /// One past the registers values use: the scratch register of each bank.
  std::array<uint16_t, 2> scratch = {0, 0};
};

} // namespace strata::vm

#endif // STRATA_COMPILER_VM_TARGET_REGISTERALLOCATION_H
