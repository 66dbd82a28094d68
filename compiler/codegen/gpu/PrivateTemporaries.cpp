//===- PrivateTemporaries.cpp - Temporaries in private memory -------------===//

#include "compiler/codegen/gpu/KernelABI.h"
#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUPRIVATETEMPORARIESPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

struct GPUPrivateTemporariesPass
    : impl::GPUPrivateTemporariesPassBase<GPUPrivateTemporariesPass> {
  void runOnOperation() override {
    Attribute function = spirv::StorageClassAttr::get(
        &getContext(), spirv::StorageClass::Function);
    WalkResult result = getOperation().walk([&](memref::AllocaOp alloca) {
      MemRefType type = alloca.getType();
      if (type.getMemorySpace())
        return WalkResult::advance();
      alloca.getResult().setType(MemRefType::get(
          type.getShape(), type.getElementType(), type.getLayout(), function));
      return failed(propagateMemorySpace(alloca.getResult()))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::gpu
