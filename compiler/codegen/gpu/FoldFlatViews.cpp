//===- FoldFlatViews.cpp - Accesses through flat views use the binding ----===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUFOLDFLATVIEWSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// An access through a 1-D or 0-D `memref.reinterpret_cast` of a 1-D
/// memref becomes an access of that memref at offset + index * stride,
/// repeatedly while the memref is itself such a view. `position` is the
/// access's memref operand; its index follows it.
void accessSource(Operation *op, unsigned position) {
  while (true) {
    auto view =
        op->getOperand(position).getDefiningOp<memref::ReinterpretCastOp>();
    if (!view || view.getType().getRank() > 1 ||
        view.getSource().getType().getRank() != 1)
      return;
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto value = [&](OpFoldResult r) {
      return getValueOrCreateConstantIndexOp(b, loc, r);
    };
    Value index = value(view.getMixedOffsets()[0]);
    if (view.getType().getRank() == 1) {
      Value scaled = op->getOperand(position + 1);
      OpFoldResult stride = view.getMixedStrides()[0];
      if (!isConstantIntValue(stride, 1))
        scaled = arith::MulIOp::create(b, loc, scaled, value(stride));
      index = isConstantIntValue(view.getMixedOffsets()[0], 0)
                  ? scaled
                  : arith::AddIOp::create(b, loc, index, scaled).getResult();
      op->setOperand(position + 1, index);
    } else {
      op->insertOperands(position + 1, ValueRange{index});
    }
    op->setOperand(position, view.getSource());
  }
}

struct GPUFoldFlatViewsPass
    : impl::GPUFoldFlatViewsPassBase<GPUFoldFlatViewsPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (isa<memref::LoadOp, vector::LoadOp>(op)) {
        accessSource(op, 0);
      } else if (isa<memref::StoreOp, vector::StoreOp>(op)) {
        accessSource(op, 1);
      } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
        auto view = dim.getSource().getDefiningOp<memref::ReinterpretCastOp>();
        std::optional<int64_t> index = dim.getConstantIndex();
        if (!view || !index)
          return;
        OpFoldResult size = view.getMixedSizes()[*index];
        OpBuilder b(dim);
        dim.replaceAllUsesWith(
            getValueOrCreateConstantIndexOp(b, dim.getLoc(), size));
        dim.erase();
      }
    });
  }
};

} // namespace
} // namespace strata::gpu
