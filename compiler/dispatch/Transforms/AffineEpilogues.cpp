//===- AffineEpilogues.cpp - Affine chains over constants as one FMA ------===//
//
// strata-affine-epilogues: in an elementwise linalg.generic, a chain of
// additions, subtractions, multiplications and divisions that carries one
// variable input x through constants (constant tensor inputs of one shape
// and indexing map, scalar constants, and what is computed from them alone,
// such as rsqrt(var + eps)) is an affine function a * x + b of x, a and b
// varying with the constants' index. The compiler computes a and b as two
// constant tensors (in double, rounded once to f32) and the chain becomes
// one math.fma of x with them.
//
// What it is for: PyTorch's inference batch norm, imported as
// ((x - mean) * rsqrt(var + eps)) * gamma + beta and fused into the
// elementwise epilogue of every convolution, cost a square root, a division
// and four loads per element of the convolution's output; after it, one
// multiply-add and two loads. The result may differ from the chain's in the
// last bits (one rounding instead of four); where x and the mean are large
// and close, the subtraction's exactness is traded for |a * mean| * 2^-24 of
// absolute error in b.
//
// Left alone: a chain already as short as one multiply and one add, a chain
// through two variable inputs (x + y), values of another type than f32.
//
//===----------------------------------------------------------------------===//

#include <cmath>

#include "compiler/dispatch/Transforms/Constants.h"
#include "compiler/dispatch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::flow {
namespace {

/// The most elements of a and b computed at compile time.
constexpr int64_t kMaxElements = int64_t{1} << 20;

/// How a value of the body depends on the variable input: not at all (a
/// constant per element of the constants' index), affinely, or otherwise.
enum class Kind { kConstant, kAffine, kOther };

bool isFloat32Or64(Type type) { return type.isF32() || type.isF64(); }

/// The ops a chain of constants may compute.
bool isConstantOp(Operation *op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::TruncFOp, arith::ExtFOp, math::RsqrtOp,
             math::SqrtOp>(op);
}

/// A constant tensor input's elements, read as doubles.
struct ConstantInput {
  ConstantBytes bytes;
  Type element;
  bool scalar = false;  // 0-d: the same element everywhere
  double at(int64_t i) const { return floatElement(bytes, element, scalar ? 0 : i); }
};

/// a * x + b, or a constant b (a = 0).
struct Affine {
  double a = 0, b = 0;
};

/// `value` rounded to `type` (f32 or f64), as the kernel would compute it.
double roundTo(Type type, double value) {
  return type.isF32() ? double(float(value)) : value;
}

struct FoldAffineChain : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops())
      return failure();
    Block &body = *op.getBody();
    const unsigned inputs = op.getNumDpsInputs();
    DenseMap<Value, Kind> kinds;
    DenseMap<Value, ConstantInput> constants;
    for (unsigned i = 0; i < inputs; ++i) {
      BlockArgument arg = body.getArgument(i);
      std::optional<ConstantBytes> bytes = constantBytes(op.getDpsInputs()[i]);
      if (bytes && isFloat32Or64(arg.getType())) {
        kinds[arg] = Kind::kConstant;
        constants[arg] = {*bytes, arg.getType(),
                          cast<RankedTensorType>(op.getDpsInputs()[i].getType()).getRank() == 0};
      } else {
        kinds[arg] = arg.getType().isF32() ? Kind::kAffine : Kind::kOther;
      }
    }
    auto kindOf = [&](Value value) {
      auto found = kinds.find(value);
      if (found != kinds.end())
        return found->second;
      FloatAttr attr;
      if (value.getParentBlock() != &body &&
          matchPattern(value, m_Constant(&attr)) && isFloat32Or64(value.getType()))
        return Kind::kConstant;
      return Kind::kOther;
    };
    // Each op's kind, in program order.
    for (Operation &inner : body.without_terminator()) {
      Kind kind = Kind::kOther;
      SmallVector<Kind> operands;
      for (Value operand : inner.getOperands())
        operands.push_back(kindOf(operand));
      auto count = [&](Kind k) { return llvm::count(operands, k); };
      const bool f32 = inner.getNumResults() == 1 && inner.getResult(0).getType().isF32();
      if (inner.getNumResults() == 1 && isConstantOp(&inner) &&
          count(Kind::kConstant) == int64_t(operands.size()) &&
          isFloat32Or64(inner.getResult(0).getType()))
        kind = Kind::kConstant;
      else if (f32 && isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(inner) &&
               count(Kind::kAffine) == 1 && count(Kind::kConstant) == 1)
        kind = Kind::kAffine;
      else if (f32 && isa<arith::DivFOp>(inner) && operands[0] == Kind::kAffine &&
               operands[1] == Kind::kConstant)
        kind = Kind::kAffine;
      else if (f32 && isa<arith::NegFOp>(inner) && operands[0] == Kind::kAffine)
        kind = Kind::kAffine;
      for (Value result : inner.getResults())
        kinds[result] = kind;
    }
    // The chain's end: the one affine value something else uses.
    Value end;
    for (auto [value, kind] : kinds) {
      if (kind != Kind::kAffine || isa<BlockArgument>(value))
        continue;
      bool usedOutside = llvm::any_of(value.getUsers(), [&](Operation *user) {
        return user->getNumResults() != 1 ||
               kindOf(user->getResult(0)) != Kind::kAffine;
      });
      if (!usedOutside)
        continue;
      if (end)
        return rewriter.notifyMatchFailure(op, "more than one affine chain");
      end = value;
    }
    if (!end)
      return rewriter.notifyMatchFailure(op, "no affine chain");
    // The chain: the ops `end` depends on, back to the variable input.
    SetVector<Operation *> chain;
    SmallVector<Value> work = {end};
    Value x;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner() == &body && kindOf(arg) == Kind::kAffine) {
          if (x && x != arg)
            return rewriter.notifyMatchFailure(op, "two variable inputs");
          x = arg;
        }
        continue;
      }
      Operation *def = value.getDefiningOp();
      if (def->getBlock() != &body || !chain.insert(def))
        continue;
      for (Value operand : def->getOperands())
        work.push_back(operand);
    }
    // Worth it: more than a multiply and an add, or a division or root.
    const bool costly = chain.size() > 2 || llvm::any_of(chain, [](Operation *o) {
      return isa<arith::DivFOp, math::RsqrtOp, math::SqrtOp>(o);
    });
    if (!x || !costly)
      return rewriter.notifyMatchFailure(op, "nothing to gain");
    // The constant inputs the chain reads: one shape and map, or 0-d.
    AffineMap map;
    RankedTensorType shape;
    for (Operation *def : chain)
      for (Value operand : def->getOperands()) {
        auto arg = dyn_cast<BlockArgument>(operand);
        if (!arg || arg.getOwner() != &body || !constants.count(arg))
          continue;
        auto type = cast<RankedTensorType>(op.getDpsInputs()[arg.getArgNumber()].getType());
        if (type.getRank() == 0)
          continue;
        AffineMap argMap = op.getMatchingIndexingMap(op.getDpsInputOperand(arg.getArgNumber()));
        if (shape && (type.getShape() != shape.getShape() || argMap != map))
          return rewriter.notifyMatchFailure(op, "constants of different shapes");
        shape = type;
        map = argMap;
      }
    if (!shape)
      return rewriter.notifyMatchFailure(op, "no constant tensor in the chain");

    // a and b per element of the constants' index (a per-channel vector in
    // the cases this is for; a chain over constants as large as x is left
    // alone rather than computed at compile time).
    const int64_t count = shape.getNumElements();
    if (count > kMaxElements)
      return rewriter.notifyMatchFailure(op, "constants too large");
    SmallVector<Operation *> ordered(chain.begin(), chain.end());
    llvm::sort(ordered, [](Operation *l, Operation *r) { return l->isBeforeInBlock(r); });
    SmallVector<float> as(count), bs(count);
    DenseMap<Value, Affine> values;
    for (int64_t i = 0; i < count; ++i) {
      values.clear();
      values[x] = {1, 0};
      auto valueOf = [&](Value v) -> Affine {
        auto found = values.find(v);
        if (found != values.end())
          return found->second;
        if (auto arg = dyn_cast<BlockArgument>(v); arg && constants.count(arg))
          return {0, constants.find(arg)->second.at(i)};
        FloatAttr attr;
        matchPattern(v, m_Constant(&attr));
        return {0, attr.getValueAsDouble()};
      };
      for (Operation *def : ordered) {
        Affine l = valueOf(def->getOperand(0));
        Affine r = def->getNumOperands() > 1 ? valueOf(def->getOperand(1)) : Affine{};
        Type type = def->getResult(0).getType();
        Affine out;
        if (kinds[def->getResult(0)] == Kind::kConstant) {
          double v = l.b;
          if (isa<arith::AddFOp>(def)) v = l.b + r.b;
          else if (isa<arith::SubFOp>(def)) v = l.b - r.b;
          else if (isa<arith::MulFOp>(def)) v = l.b * r.b;
          else if (isa<arith::DivFOp>(def)) v = l.b / r.b;
          else if (isa<arith::NegFOp>(def)) v = -l.b;
          else if (isa<math::RsqrtOp>(def)) v = 1.0 / std::sqrt(l.b);
          else if (isa<math::SqrtOp>(def)) v = std::sqrt(l.b);
          out = {0, roundTo(type, v)};
        } else if (isa<arith::AddFOp>(def)) {
          out = {l.a + r.a, l.b + r.b};
        } else if (isa<arith::SubFOp>(def)) {
          out = {l.a - r.a, l.b - r.b};
        } else if (isa<arith::MulFOp>(def)) {
          // One side is the constant (a = 0).
          out = kinds.lookup(def->getOperand(0)) == Kind::kAffine
                    ? Affine{l.a * r.b, l.b * r.b}
                    : Affine{r.a * l.b, r.b * l.b};
        } else if (isa<arith::DivFOp>(def)) {
          out = {l.a / r.b, l.b / r.b};
        } else {  // negf
          out = {-l.a, -l.b};
        }
        values[def->getResult(0)] = out;
      }
      Affine result = values[end];
      as[i] = float(result.a);
      bs[i] = float(result.b);
      // An infinite or NaN a or b (a division by zero, rsqrt(0), an
      // overflow) would not give what the chain gives for every x.
      if (!std::isfinite(as[i]) || !std::isfinite(bs[i]))
        return rewriter.notifyMatchFailure(op, "a or b is not finite");
    }

    // The generic again, with a and b as two more inputs.
    auto f32Type = RankedTensorType::get(shape.getShape(), rewriter.getF32Type());
    Location loc = op.getLoc();
    Value aTensor = arith::ConstantOp::create(
        rewriter, loc, f32Type, DenseElementsAttr::get(f32Type, ArrayRef<float>(as)));
    Value bTensor = arith::ConstantOp::create(
        rewriter, loc, f32Type, DenseElementsAttr::get(f32Type, ArrayRef<float>(bs)));
    SmallVector<Value> newInputs(op.getDpsInputs());
    newInputs.append({aTensor, bTensor});
    SmallVector<AffineMap> maps(op.getIndexingMapsArray());
    maps.insert(maps.begin() + inputs, {map, map});
    auto fused = linalg::GenericOp::create(rewriter, loc, op.getResultTypes(), newInputs,
                                           op.getDpsInits(), maps, op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), fused.getRegion(), fused.getRegion().end());
    Block &newBody = *fused.getBody();
    Value a = newBody.insertArgument(inputs, rewriter.getF32Type(), loc);
    Value b = newBody.insertArgument(inputs + 1, rewriter.getF32Type(), loc);
    rewriter.setInsertionPoint(end.getDefiningOp());
    Value fma = math::FmaOp::create(rewriter, loc, x, a, b);
    rewriter.replaceAllUsesWith(end, fma);
    // The chain's ops and whatever else only it used.
    SmallVector<Operation *> bodyOps;
    for (Operation &inner : newBody.without_terminator())
      bodyOps.push_back(&inner);
    for (Operation *inner : llvm::reverse(bodyOps))
      if (inner->use_empty() && isMemoryEffectFree(inner))
        rewriter.eraseOp(inner);
    rewriter.replaceOp(op, fused.getResults());
    return success();
  }
};

struct AffineEpiloguesPass : PassWrapper<AffineEpiloguesPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AffineEpiloguesPass)

  StringRef getArgument() const override { return "strata-affine-epilogues"; }
  StringRef getDescription() const override {
    return "Folds elementwise affine chains over constants into one multiply-add";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect, math::MathDialect>();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldAffineChain>(&getContext());
    // The constants the chain read, now unused, leave the op.
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createAffineEpiloguesPass() {
  return std::make_unique<AffineEpiloguesPass>();
}

} // namespace strata::flow
