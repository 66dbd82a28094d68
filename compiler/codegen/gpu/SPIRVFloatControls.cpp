//===- SPIRVFloatControls.cpp - IEEE denormals, NaN and signed zeros ------===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_SPIRVFLOATCONTROLSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

struct SPIRVFloatControlsPass
    : impl::SPIRVFloatControlsPassBase<SPIRVFloatControlsPass> {
  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    // The float widths the kernels compute in.
    llvm::SmallSet<int32_t, 3> widths;
    auto note = [&](Type type) {
      if (auto floating = dyn_cast<FloatType>(getElementTypeOrSelf(type)))
        widths.insert(floating.getWidth());
    };
    module.walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        note(type);
      for (Type type : op->getOperandTypes())
        note(type);
    });
    if (widths.empty())
      return;
    SmallVector<int32_t> sorted(widths.begin(), widths.end());
    llvm::sort(sorted);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    for (auto entry : module.getOps<spirv::EntryPointOp>()) {
      auto function = module.lookupSymbol<spirv::FuncOp>(entry.getFn());
      if (!function)
        continue;
      for (int32_t width : sorted)
        for (spirv::ExecutionMode mode : {spirv::ExecutionMode::DenormPreserve,
                                          spirv::ExecutionMode::SignedZeroInfNanPreserve})
          spirv::ExecutionModeOp::create(b, entry.getLoc(), function, mode,
                                         ArrayRef<int32_t>{width});
    }
  }
};

} // namespace
} // namespace strata::gpu
