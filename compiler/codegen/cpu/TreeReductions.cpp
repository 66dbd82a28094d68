//===- TreeReductions.cpp - Float reductions as halving trees -------------===//
//
// strata-cpu-tree-reductions: see Passes.td. Lowered by upstream, a
// reduction of a register's lanes into one value is one scalar step per
// lane in a single dependency chain; for a max of maximumf's rules each
// step is a max plus the compares and blends of its NaN and signed-zero
// rules: a softmax's row maximum of 128 values took about a thousand cycles.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUTREEREDUCTIONSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// Whether `op` is an unmasked float reduction of a kind these rewrites
/// handle (add, or min/max of either NaN rule) that reduces the innermost
/// dimension of a fixed-length vector and no other.
bool reducesInnermostOnly(vector::MultiDimReductionOp op) {
  using vector::CombiningKind;
  CombiningKind kind = op.getKind();
  VectorType type = op.getSourceVectorType();
  if ((kind != CombiningKind::ADD && kind != CombiningKind::MAXNUMF && kind != CombiningKind::MINNUMF &&
       kind != CombiningKind::MAXIMUMF && kind != CombiningKind::MINIMUMF) ||
      type.getRank() == 0 || type.isScalable() || !isa<FloatType>(type.getElementType()) ||
      op->getParentOfType<vector::MaskOp>())
    return false;
  SmallVector<bool> reduced = op.getReductionMask();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (reduced[d] != (d == type.getRank() - 1))
      return false;
  return true;
}

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
    if (!reducesInnermostOnly(op))
      return failure();
    vector::CombiningKind kind = op.getKind();
    VectorType type = op.getSourceVectorType();
    const int64_t rank = type.getRank();
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

/// A loop whose step reduces one register of a row into the running value
/// (scf.for carrying %acc: %r = vector.multi_reduction %v, %acc [last];
/// yield %r) carries a register of lanes instead: each step combines %v
/// into it lane by lane, and the lanes are reduced once after the loop
/// (TreeReduction), where each step made a tree of its own, one after the
/// other. The register starts as the running value broadcast (min and max:
/// taking it again changes nothing) or as zeros (a sum, which adds the
/// running value after the loop).
struct LoopCarriedLanes : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::ForOp loop, PatternRewriter &rewriter) const override {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (auto [index, carried] : llvm::enumerate(loop.getRegionIterArgs())) {
      auto reduction = yield.getOperand(index).getDefiningOp<vector::MultiDimReductionOp>();
      if (!reduction || reduction.getAcc() != carried || !carried.hasOneUse() ||
          !reduction->getResult(0).hasOneUse() || !reducesInnermostOnly(reduction) ||
          reduction.getDestType() != carried.getType())
        continue;
      rewriter.replaceOp(loop, carryLanes(rewriter, loop, index, reduction, reduction.getSourceVectorType()));
      return success();
    }
    return failure();
  }

  static SmallVector<Value> carryLanes(PatternRewriter &rewriter, scf::ForOp loop, unsigned index,
                                       vector::MultiDimReductionOp reduction, VectorType lanes) {
    Location loc = reduction.getLoc();
    const bool sum = reduction.getKind() == vector::CombiningKind::ADD;
    Value init = loop.getInitArgs()[index];
    rewriter.setInsertionPoint(loop);
    // The running value (a scalar, or rows made rows x 1) broadcast along
    // the lanes.
    Value start;
    if (sum) {
      start = arith::ConstantOp::create(rewriter, loc, lanes, rewriter.getZeroAttr(lanes));
    } else if (lanes.getRank() == 1) {
      start = vector::BroadcastOp::create(rewriter, loc, lanes, init);
    } else {
      SmallVector<int64_t> columnShape(lanes.getShape());
      columnShape.back() = 1;
      auto column = VectorType::get(columnShape, lanes.getElementType());
      start = vector::BroadcastOp::create(rewriter, loc, lanes,
                                          vector::ShapeCastOp::create(rewriter, loc, column, init));
    }
    SmallVector<Value> inits(loop.getInitArgs());
    inits[index] = start;
    auto widened = scf::ForOp::create(rewriter, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
                                      loop.getStep(), inits);
    // The body, moved over, the step's reduction now a lane-by-lane one.
    Block *body = widened.getBody();
    if (!body->empty() && body->back().hasTrait<OpTrait::IsTerminator>())
      rewriter.eraseOp(&body->back());
    SmallVector<Value> arguments = {widened.getInductionVar()};
    llvm::append_range(arguments, widened.getRegionIterArgs());
    rewriter.mergeBlocks(loop.getBody(), body, arguments);
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    rewriter.setInsertionPoint(reduction);
    Value combined = vector::makeArithReduction(rewriter, loc, reduction.getKind(), reduction.getSource(),
                                                widened.getRegionIterArgs()[index]);
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(index, combined); });
    rewriter.eraseOp(reduction);
    // After the loop: the lanes reduced into the running value.
    rewriter.setInsertionPointAfter(widened);
    SmallVector<bool> innermost(lanes.getRank(), false);
    innermost.back() = true;
    Value result = vector::MultiDimReductionOp::create(rewriter, loc, widened.getResult(index), init, innermost,
                                                       reduction.getKind());
    SmallVector<Value> results(widened.getResults());
    results[index] = result;
    return results;
  }
};

struct CPUTreeReductionsPass : impl::CPUTreeReductionsPassBase<CPUTreeReductionsPass> {
  void runOnOperation() override {
    // Loops first, so that each step's reduction is still whole when its
    // loop is matched; then the remaining reductions, the loops' new ones
    // included.
    RewritePatternSet loops(&getContext()), trees(&getContext());
    loops.add<LoopCarriedLanes>(&getContext());
    trees.add<TreeReduction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(loops))) ||
        failed(applyPatternsGreedily(getOperation(), std::move(trees))))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::cpu
