//===- LowerChecks.cpp - Failed kernel checks return their code ----------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPULOWERCHECKSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

struct CPULowerChecksPass : impl::CPULowerChecksPassBase<CPULowerChecksPass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (failed(lower(function)))
        return signalPassFailure();
  }

  LogicalResult lower(func::FuncOp function) {
    SmallVector<cf::AssertOp> checks;
    function.walk([&](cf::AssertOp check) { checks.push_back(check); });
    if (checks.empty())
      return success();
    Type i32 = IntegerType::get(function.getContext(), 32);
    if (function.getFunctionType().getResults() != ArrayRef<Type>{i32})
      return checks.front().emitOpError(
          "cannot be reported: the function around it returns no i32 status "
          "(only kernel bodies prepared by strata-cpu-wrap-kernel-abi do)");
    IRRewriter rewriter(function.getContext());
    // One failure block per check number, shared by its copies (peeled or
    // unrolled loops repeat a check).
    DenseMap<int32_t, Block *> failed;
    for (cf::AssertOp check : checks) {
      auto number = check->getAttrOfType<IntegerAttr>(kCheckAttr);
      if (!number)
        return check.emitOpError(
            "was not numbered as a kernel check, so its failure could not be "
            "reported");
      int32_t index = number.getInt();
      Block *&fail = failed[index];
      if (!fail) {
        fail = rewriter.createBlock(&function.getBody(),
                                    function.getBody().end());
        rewriter.setInsertionPointToStart(fail);
        Value code = arith::ConstantOp::create(
            rewriter, check.getLoc(), i32,
            rewriter.getIntegerAttr(i32, kCheckReturnCodeBase + index));
        func::ReturnOp::create(rewriter, check.getLoc(), code);
      }
      Block *before = check->getBlock();
      Block *after =
          rewriter.splitBlock(before, std::next(check->getIterator()));
      rewriter.setInsertionPoint(check);
      cf::CondBranchOp::create(rewriter, check.getLoc(), check.getArg(), after,
                               ValueRange(), fail, ValueRange());
      rewriter.eraseOp(check);
    }
    return success();
  }
};

} // namespace
} // namespace strata::cpu
