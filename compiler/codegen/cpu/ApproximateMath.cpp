//===- ApproximateMath.cpp - Polynomial approximations of math ops --------===//
//
// strata-cpu-approximate-math: see Passes.td. A vectorized math.exp would
// otherwise be unrolled into one expf call per lane (softmax, GELU and
// sigmoid are dominated by them); upstream's approximations are plain
// vector arithmetic.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUAPPROXIMATEMATHPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// Upstream's log and log2 approximations clamp their input to the smallest
/// normal float, 2^-126, so the log of a subnormal would be log(2^-126).
/// Subnormal inputs are scaled by 2^24 into the normal range (exactly) and
/// 24 ln 2 (log2: 24) subtracted from the result.
void scaleSubnormalLogInputs(func::FuncOp func, bool log, bool log2) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (((log && isa<math::LogOp>(op)) || (log2 && isa<math::Log2Op>(op))) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32())
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    ImplicitLocOpBuilder b(op->getLoc(), op);
    Type type = op->getResult(0).getType();
    auto constant = [&](float value) -> Value {
      if (auto vector = dyn_cast<VectorType>(type))
        return arith::ConstantOp::create(
            b, DenseElementsAttr::get(vector, b.getF32FloatAttr(value)));
      return arith::ConstantOp::create(b, b.getF32FloatAttr(value));
    };
    Value x = op->getOperand(0);
    Value subnormal = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x,
                                            constant(0x1p-126f));
    Value scaled = arith::SelectOp::create(
        b, subnormal, arith::MulFOp::create(b, x, constant(0x1p24f)), x);
    Operation *scaledLog = b.clone(*op);
    scaledLog->setOperand(0, scaled);
    float offset = isa<math::LogOp>(op) ? 24 * 0.693147180559945309f : 24;
    Value result = arith::SubFOp::create(
        b, scaledLog->getResult(0),
        arith::SelectOp::create(b, subnormal, constant(offset), constant(0)));
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }
}

struct CPUApproximateMathPass
    : impl::CPUApproximateMathPassBase<CPUApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::StringSet<> names;
    for (const std::string &name : functions)
      names.insert(name);
    // Upstream asks by operation name ("math.exp").
    auto selected = [&](StringRef name) {
      return name.consume_front("math.") && names.contains(name);
    };
    scaleSubnormalLogInputs(getOperation(), names.contains("log"),
                            names.contains("log2"));
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, selected);
    populateMathPolynomialApproximationPatterns(patterns, selected);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::cpu
