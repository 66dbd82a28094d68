//===- CopiesToLinalg.cpp - memref.copy as linalg.copy --------------------===//

#include "compiler/codegen/cpu/Passes.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUCOPIESTOLINALGPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

struct CPUCopiesToLinalgPass
    : impl::CPUCopiesToLinalgPassBase<CPUCopiesToLinalgPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](memref::CopyOp copy) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    });
  }
};

} // namespace
} // namespace strata::cpu
