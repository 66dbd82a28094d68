//===- FuseCompareBranch.cpp - vm.cmp + vm.cond_br -> vm.cmp_br -----------===//
//
// A loop latch `%c = vm.cmp.lt.i64.s %i, %n; vm.cond_br %c, ^loop, ^exit`
// costs two dispatches and a register for %c; the fused row costs one
// dispatch and no register.
//
//===----------------------------------------------------------------------===//

#include "compiler/vm/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

using namespace mlir;

namespace strata::vm {

#define GEN_PASS_DEF_VMFUSECOMPAREBRANCHPASS
#include "compiler/vm/Transforms/Passes.h.inc"

namespace {

template <typename CmpOpT, typename CmpBrOpT>
struct FuseCompareBranch : OpRewritePattern<CondBrOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CondBrOp branch,
                                PatternRewriter &rewriter) const override {
    // The compare must die at the branch (else its result is still needed)
    // and sit in the branch's block, so that its operands, which dominate
    // the compare, are available at the branch.
    auto compare = branch.getCondition().getDefiningOp<CmpOpT>();
    if (!compare || !compare->hasOneUse() ||
        compare->getBlock() != branch->getBlock())
      return failure();
    rewriter.replaceOpWithNewOp<CmpBrOpT>(
        branch, compare.getLhs(), compare.getRhs(),
        branch.getTrueDestOperands(), branch.getFalseDestOperands(),
        branch.getTrueDest(), branch.getFalseDest());
    rewriter.eraseOp(compare);
    return success();
  }
};

struct VMFuseCompareBranchPass
    : impl::VMFuseCompareBranchPassBase<VMFuseCompareBranchPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseCompareBranch<CmpLtSI32Op, CmpBrLtI32SOp>,
                 FuseCompareBranch<CmpLeSI32Op, CmpBrLeI32SOp>,
                 FuseCompareBranch<CmpLtSI64Op, CmpBrLtI64SOp>,
                 FuseCompareBranch<CmpLeSI64Op, CmpBrLeI64SOp>>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
} // namespace strata::vm
