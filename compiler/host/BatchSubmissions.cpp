//===- BatchSubmissions.cpp - Where the host waits for the device ---------===//
//
// strata-batch-submissions (Passes.h): the dispatches of a block are
// recorded into one command buffer; a flow.submit goes where the host needs
// what they did: before a tensor.extract of a tensor a recorded dispatch
// wrote (directly or through a reshape, a view of the same buffer), before a
// call (the callee may read any tensor) and before the block's terminator.
// Reading a weight or an argument, checks and scalar arithmetic need no
// submit, so they do not split the batch.
//
//===----------------------------------------------------------------------===//

#include "compiler/dispatch/IR/FlowOps.h"
#include "compiler/host/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace strata::host {
namespace {

/// The dispatch result `value` views (through reshapes), or null.
Operation *writerOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<flow::DispatchOp>(def))
      return def;
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             tensor::ReshapeOp>(def))
      return nullptr;
    value = def->getOperand(0);
  }
  return nullptr;
}

void batchBlock(Block &block) {
  DenseSet<Operation *> recorded; // dispatches since the last submit
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isa<flow::DispatchOp>(op)) {
      recorded.insert(&op);
      continue;
    }
    if (isa<flow::SubmitOp>(op)) {
      recorded.clear();
      continue;
    }
    if (recorded.empty())
      continue;
    bool needs = false;
    if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      needs = recorded.contains(writerOf(extract.getTensor()));
    else
      needs = isa<func::CallOp>(op) || op.hasTrait<OpTrait::IsTerminator>();
    if (!needs)
      continue;
    OpBuilder b(&op);
    flow::SubmitOp::create(b, op.getLoc());
    recorded.clear();
  }
}

struct BatchSubmissionsPass
    : PassWrapper<BatchSubmissionsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BatchSubmissionsPass)
  StringRef getArgument() const final { return "strata-batch-submissions"; }
  StringRef getDescription() const final {
    return "Submits the recorded dispatches where the host needs their "
           "results";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<flow::FlowDialect>();
  }
  void runOnOperation() override {
    for (func::FuncOp function : hostFunctions(getOperation()))
      for (Block &block : function.getBody())
        batchBlock(block);
  }
};

} // namespace

std::unique_ptr<Pass> createBatchSubmissionsPass() {
  return std::make_unique<BatchSubmissionsPass>();
}

} // namespace strata::host
