//===- ExactOps.cpp - Exact expansions of ops GPUs lower loosely ---------===//
//
// Each rewrite keeps the op's definition (the CPU's result) where a GPU back
// end would call a helper function a kernel cannot have (math.ipowi), leave
// a case open (the sign of a zero from arith.maximumf/minimumf) or find no
// lowering at all (math.trunc on SPIR-V).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUEXACTOPSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// x^e by repeated squaring; negative e as math-to-funcs defines it.
struct ExpandIPowI : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IPowIOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isa<IntegerType>(type))
      return rewriter.notifyMatchFailure(op, "vector powers stay as they are");
    Location loc = op.getLoc();
    Value base = op.getLhs(), exponent = op.getRhs();
    Value zero = arith::ConstantIntOp::create(rewriter, loc, type, 0);
    Value one = arith::ConstantIntOp::create(rewriter, loc, type, 1);
    Value minusOne = arith::ConstantIntOp::create(rewriter, loc, type, -1);
    Value negative = arith::CmpIOp::create(rewriter, loc,
                                           arith::CmpIPredicate::slt, exponent, zero);
    Value count = arith::SelectOp::create(rewriter, loc, negative, zero, exponent);
    auto isOdd = [&](OpBuilder &b, Value value) {
      Value bit = arith::AndIOp::create(b, loc, value, one);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit, zero);
    };
    // while (e != 0) { if (e & 1) r *= x; x *= x; e >>= 1; }
    Type types[] = {type, type, type};
    auto loop = scf::WhileOp::create(
        rewriter, loc, types, ValueRange{one, base, count},
        [&](OpBuilder &b, Location, ValueRange args) {
          Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                             args[2], zero);
          scf::ConditionOp::create(b, loc, more, args);
        },
        [&](OpBuilder &b, Location, ValueRange args) {
          Value product = arith::MulIOp::create(b, loc, args[0], args[1]);
          Value result = arith::SelectOp::create(b, loc, isOdd(b, args[2]),
                                                 product, args[0]);
          Value square = arith::MulIOp::create(b, loc, args[1], args[1]);
          Value rest = arith::ShRUIOp::create(b, loc, args[2], one);
          scf::YieldOp::create(b, loc, ValueRange{result, square, rest});
        });
    // Negative exponents: 1 for x = 1, (-1)^e for x = -1, 0 otherwise (x = 0
    // divides by zero in the definition; 0 here).
    Value signedOne = arith::SelectOp::create(rewriter, loc, isOdd(rewriter, exponent),
                                              minusOne, one);
    Value isMinusOne = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                             base, minusOne);
    Value isOne = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, base, one);
    Value inverse = arith::SelectOp::create(
        rewriter, loc, isOne, one,
        arith::SelectOp::create(rewriter, loc, isMinusOne, signedOne, zero));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, inverse,
                                                 loop.getResult(0));
    return success();
  }
};

/// IEEE maximum/minimum with -0 < +0: compares and selects, ties by the
/// AND (maximum) or OR (minimum) of the operands' bits.
template <typename Op, bool kMaximum>
struct ExpandMinMax : OpRewritePattern<Op> {
  using OpRewritePattern<Op>::OpRewritePattern;
  LogicalResult matchAndRewrite(Op op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "vector min/max stay as they are");
    Location loc = op.getLoc();
    Value a = op.getLhs(), b = op.getRhs();
    Type bits = rewriter.getIntegerType(type.getWidth());
    Value aBits = arith::BitcastOp::create(rewriter, loc, bits, a);
    Value bBits = arith::BitcastOp::create(rewriter, loc, bits, b);
    Value tieBits = kMaximum ? Value(arith::AndIOp::create(rewriter, loc, aBits, bBits))
                             : Value(arith::OrIOp::create(rewriter, loc, aBits, bBits));
    Value tie = arith::BitcastOp::create(rewriter, loc, type, tieBits);
    // An unordered pair: a + b is a NaN.
    Value nan = arith::AddFOp::create(rewriter, loc, a, b);
    auto cmp = [&](arith::CmpFPredicate predicate) {
      return arith::CmpFOp::create(rewriter, loc, predicate, a, b);
    };
    Value equal = arith::SelectOp::create(rewriter, loc, cmp(arith::CmpFPredicate::OEQ),
                                          tie, nan);
    Value bWins = arith::SelectOp::create(
        rewriter, loc, cmp(kMaximum ? arith::CmpFPredicate::OLT : arith::CmpFPredicate::OGT),
        b, equal);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(
        op, cmp(kMaximum ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT), a, bWins);
    return success();
  }
};

/// trunc(x) = copysign(floor(|x|), x): exact, and keeps -0, infinities and
/// NaNs.
struct ExpandTrunc : OpRewritePattern<math::TruncOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::TruncOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value magnitude = math::AbsFOp::create(rewriter, loc, op.getOperand());
    Value floor = math::FloorOp::create(rewriter, loc, magnitude);
    rewriter.replaceOpWithNewOp<math::CopySignOp>(op, floor, op.getOperand());
    return success();
  }
};

struct GPUExactOpsPass : impl::GPUExactOpsPassBase<GPUExactOpsPass> {
  using GPUExactOpsPassBase::GPUExactOpsPassBase;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto wanted = [&](StringRef name) {
      return ops.empty() || llvm::is_contained(ops, name.str());
    };
    for (const std::string &name : ops)
      if (!llvm::is_contained({"ipowi", "maximumf", "minimumf", "trunc"}, name)) {
        getOperation()->emitError("strata-gpu-exact-ops: unknown op '")
            << name << "' (expected ipowi, maximumf, minimumf or trunc)";
        return signalPassFailure();
      }
    RewritePatternSet patterns(context);
    if (wanted("ipowi"))
      patterns.add<ExpandIPowI>(context);
    if (wanted("maximumf"))
      patterns.add<ExpandMinMax<arith::MaximumFOp, true>>(context);
    if (wanted("minimumf"))
      patterns.add<ExpandMinMax<arith::MinimumFOp, false>>(context);
    if (wanted("trunc"))
      patterns.add<ExpandTrunc>(context);
    // Only the ops above change: constants stay where they are.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata::gpu
