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
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUAPPROXIMATEMATHPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

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
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, selected);
    populateMathPolynomialApproximationPatterns(patterns, selected);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::cpu
