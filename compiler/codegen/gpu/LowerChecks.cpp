//===- LowerChecks.cpp - Kernel checks write a status word ----------------===//

#include "compiler/codegen/gpu/Passes.h"
#include "compiler/support/SourceLocation.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/UB/IR/UBOps.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPULOWERCHECKSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

struct GPULowerChecksPass
    : impl::GPULowerChecksPassBase<GPULowerChecksPass> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    SmallVector<cf::AssertOp> checks;
    kernel.walk([&](cf::AssertOp check) { checks.push_back(check); });
    if (checks.empty())
      return;
    MLIRContext *context = kernel.getContext();
    auto statusType = MemRefType::get({1}, IntegerType::get(context, 32));
    unsigned position = kernel.getNumArguments();
    if (failed(kernel.insertArgument(
            position, statusType,
            DictionaryAttr::get(context, {NamedAttribute(
                                             StringAttr::get(context, "strata.check_status"),
                                             UnitAttr::get(context))}),
            kernel.getLoc())))
      return signalPassFailure();
    Value status = kernel.getArgument(position);

    SmallVector<Attribute> messages;
    for (auto [i, check] : llvm::enumerate(checks)) {
      std::optional<std::string> where = fileLocation(check.getLoc());
      messages.push_back(StringAttr::get(
          context, (where ? *where + ": " : std::string()) + check.getMsg().str()));
      if (failed(lower(check, status, i)))
        return signalPassFailure();
    }
    kernel->setAttr("strata.check_messages", ArrayAttr::get(context, messages));
  }

  /// Check `index`: a failed condition sets the status word; what follows
  /// the check in its block runs only when the condition holds.
  LogicalResult lower(cf::AssertOp check, Value status, unsigned index) {
    Location loc = check.getLoc();
    Block *block = check->getBlock();
    Operation *terminator = block->getTerminator();
    if (!terminator || terminator == check.getOperation())
      return check.emitOpError("ends its block; a check guards what follows");
    OpBuilder b(check);
    Value holds = check.getArg();
    Value fails = arith::XOrIOp::create(
        b, loc, holds, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    auto report = scf::IfOp::create(b, loc, fails, /*withElseRegion=*/false);
    b.setInsertionPoint(report.thenBlock()->getTerminator());
    memref::StoreOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, b.getI32Type(), index + 1),
        status, ValueRange{arith::ConstantIndexOp::create(b, loc, 0)});

    // The rest of the block, and the values of it that its terminator uses.
    SmallVector<Operation *> rest;
    for (Operation *op = check->getNextNode(); op != terminator;
         op = op->getNextNode())
      rest.push_back(op);
    SmallVector<Value> escaping;
    for (Value operand : terminator->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && def->getBlock() == block && def->isBeforeInBlock(terminator) &&
          check->isBeforeInBlock(def))
        escaping.push_back(operand);
    b.setInsertionPoint(terminator);
    auto guarded = scf::IfOp::create(b, loc, ValueRange(escaping).getTypes(),
                                     holds, /*withElseRegion=*/true);
    // The builder gives result-less branches their yields.
    for (Block *branch : {guarded.thenBlock(), guarded.elseBlock()})
      if (!branch->empty())
        branch->getTerminator()->erase();
    b.setInsertionPointToEnd(guarded.thenBlock());
    auto thenYield = scf::YieldOp::create(b, loc, escaping);
    for (Operation *op : rest)
      op->moveBefore(thenYield);
    // A failed check fails the dispatch; these values are never used.
    b.setInsertionPointToEnd(guarded.elseBlock());
    SmallVector<Value> poison;
    for (Value value : escaping)
      poison.push_back(ub::PoisonOp::create(b, loc, value.getType()));
    scf::YieldOp::create(b, loc, poison);
    for (auto [value, result] : llvm::zip(escaping, guarded.getResults()))
      value.replaceUsesWithIf(result, [&](OpOperand &use) {
        return use.getOwner() == terminator;
      });
    check.erase();
    return success();
  }
};

} // namespace
} // namespace strata::gpu
