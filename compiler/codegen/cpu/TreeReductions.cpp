//===- TreeReductions.cpp - Float min/max reductions as halving trees -----===//
//
// strata-cpu-tree-reductions: see Passes.td. Lowered by upstream, a
// reduction of a register's lanes into one value is one scalar step per
// lane in a single dependency chain; for a max of maximumf's rules each
// step is a max plus the compares and blends of its NaN and signed-zero
// rules: a softmax's row maximum of 128 values took about a thousand cycles.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUTREEREDUCTIONSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// A vector.multi_reduction of floats (add, or min/max of either NaN rule)
/// over the innermost dimension only, of 2^n lanes (static, unmasked): the
/// two halves of that dimension combined lane by lane n times (one vector op
/// each, over all the other dimensions at once), then the accumulator. The
/// min/max kinds are associative and commutative (maxnum and minnum may
/// return either zero of +0 and -0 whatever the order), so the result is
/// the same; a sum is regrouped as a tree, as tiling already regroups it.
struct TreeReduction : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    using vector::CombiningKind;
    CombiningKind kind = op.getKind();
    if (kind != CombiningKind::ADD && kind != CombiningKind::MAXNUMF &&
        kind != CombiningKind::MINNUMF && kind != CombiningKind::MAXIMUMF &&
        kind != CombiningKind::MINIMUMF)
      return failure();
    VectorType type = op.getSourceVectorType();
    const int64_t rank = type.getRank();
    if (rank == 0 || type.isScalable() || !isa<FloatType>(type.getElementType()) ||
        op->getParentOfType<vector::MaskOp>())
      return failure();
    SmallVector<bool> reduced = op.getReductionMask();
    for (int64_t d = 0; d < rank; ++d)
      if (reduced[d] != (d == rank - 1))
        return failure();
    const int64_t lanes = type.getShape().back();
    if (lanes < 2 || !llvm::isPowerOf2_64(lanes))
      return failure();
    Location loc = op.getLoc();
    Value vector = op.getSource();
    SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()), strides(rank, 1);
    for (int64_t half = lanes / 2; half >= 1; half /= 2) {
      sizes.back() = half;
      offsets.back() = 0;
      Value low = vector::ExtractStridedSliceOp::create(rewriter, loc, vector, offsets, sizes, strides);
      offsets.back() = half;
      Value high = vector::ExtractStridedSliceOp::create(rewriter, loc, vector, offsets, sizes, strides);
      vector = vector::makeArithReduction(rewriter, loc, kind, low, high);
    }
    // vector<... x 1>: the result's shape, or one lane for a scalar result.
    Value result = rank == 1 ? vector::ExtractOp::create(rewriter, loc, vector, ArrayRef<int64_t>{0}).getResult()
                             : vector::ShapeCastOp::create(rewriter, loc, op.getDestType(), vector).getResult();
    result = vector::makeArithReduction(rewriter, loc, kind, result, op.getAcc());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CPUTreeReductionsPass : impl::CPUTreeReductionsPassBase<CPUTreeReductionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TreeReduction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::cpu
