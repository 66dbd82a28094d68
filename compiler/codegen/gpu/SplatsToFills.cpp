//===- SplatsToFills.cpp - Splat tensor constants become fills ------------===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUSPLATSTOFILLSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

struct GPUSplatsToFillsPass
    : impl::GPUSplatsToFillsPassBase<GPUSplatsToFillsPass> {
  void runOnOperation() override {
    SmallVector<arith::ConstantOp> constants;
    getOperation().walk([&](arith::ConstantOp constant) {
      if (isa<RankedTensorType>(constant.getType()))
        constants.push_back(constant);
    });
    for (arith::ConstantOp constant : constants) {
      auto type = cast<RankedTensorType>(constant.getType());
      auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!elements || !elements.isSplat()) {
        constant.emitOpError("is a tensor constant inside a kernel; GPU "
                             "kernels take splats only (larger constants "
                             "belong outside the dispatch)");
        return signalPassFailure();
      }
      OpBuilder b(constant);
      Location loc = constant.getLoc();
      Value scalar = arith::ConstantOp::create(
          b, loc, type.getElementType(),
          cast<TypedAttr>(elements.getSplatValue<Attribute>()));
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      Value fill =
          linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
      constant.getResult().replaceAllUsesWith(fill);
      constant.erase();
    }
  }
};

} // namespace
} // namespace strata::gpu
