//===- FuseElementwise.cpp - Elementwise fusion before dispatch formation -===//
//
// strata-fuse-elementwise: upstream's elementwise producer/consumer fusion
// and constant folding of linalg ops, without moving reshapes. Upstream's
// own pass also folds tensor.expand_shape/collapse_shape into neighbouring
// linalg ops by expanding their iteration space: a linalg.matmul feeding an
// attention head split becomes a 4-d linalg.generic contraction that codegen
// can no longer tile as a matmul, and a bias add after it is split off the
// matmul's dispatch. Here a reshape stays where it is and costs nothing: the
// host program treats it as a view of the same buffer.
//
// A linalg op on tensors whose results nobody uses is erased even when its
// body holds cf.assert checks (torch-mlir's bounds checks make upstream keep
// such an op, since an assert has side effects): the checks guard accesses
// that then never happen, and the op would otherwise cost a dispatch and a
// temporary.
//
//===----------------------------------------------------------------------===//

#include "compiler/dispatch/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::flow {
namespace {

/// Fuses a producer into its consumer only when the producer has no other
/// use, so no work is duplicated.
bool singleUseProducer(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  return producer && producer->hasOneUse();
}

struct EraseUnusedLinalgOp : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    // (Canonicalization first drops unused outputs, which leaves a generic
    // with no results and only its checks.)
    if (!op.hasPureTensorSemantics() || !op->use_empty())
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

struct FuseElementwisePass
    : PassWrapper<FuseElementwisePass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwisePass)

  StringRef getArgument() const override { return "strata-fuse-elementwise"; }
  StringRef getDescription() const override {
    return "Fuses elementwise linalg ops without moving reshapes";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<affine::AffineDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, singleUseProducer);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUseProducer);
    patterns.add<EraseUnusedLinalgOp>(context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createFuseElementwisePass() {
  return std::make_unique<FuseElementwisePass>();
}

} // namespace strata::flow
