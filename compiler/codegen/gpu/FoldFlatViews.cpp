//===- FoldFlatViews.cpp - Accesses through flat views use the binding ----===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUFOLDFLATVIEWSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// The 1-D memref a 1-D or 0-D `view` is the same as (from its first
/// element), when it reinterprets one with offset 0 and stride 1; else null.
Value flatSource(Value view) {
  auto cast = view.getDefiningOp<memref::ReinterpretCastOp>();
  if (!cast || cast.getType().getRank() > 1 ||
      cast.getSource().getType().getRank() != 1)
    return {};
  SmallVector<OpFoldResult> offsets = cast.getMixedOffsets();
  SmallVector<OpFoldResult> strides = cast.getMixedStrides();
  if (offsets.size() != 1 || !isConstantIntValue(offsets[0], 0) ||
      (!strides.empty() && !isConstantIntValue(strides[0], 1)))
    return {};
  return cast.getSource();
}

/// `op`'s memref operand (at `position`) becomes `source`; a 0-D view's
/// access gets index 0.
void useSource(Operation *op, unsigned position, Value source) {
  bool scalar = cast<MemRefType>(op->getOperand(position).getType()).getRank() == 0;
  op->setOperand(position, source);
  if (scalar) {
    OpBuilder b(op);
    op->insertOperands(op->getNumOperands(),
                       ValueRange{arith::ConstantIndexOp::create(b, op->getLoc(), 0)});
  }
}

struct GPUFoldFlatViewsPass
    : impl::GPUFoldFlatViewsPassBase<GPUFoldFlatViewsPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (Value source = flatSource(load.getMemRef()))
          useSource(load, 0, source);
      } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
        if (Value source = flatSource(store.getMemRef()))
          useSource(store, 1, source);
      } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
        auto view = dim.getSource().getDefiningOp<memref::ReinterpretCastOp>();
        std::optional<int64_t> index = dim.getConstantIndex();
        if (!view || !index)
          return;
        OpFoldResult size = view.getMixedSizes()[*index];
        OpBuilder b(dim);
        Value value = isa<Value>(size)
                          ? llvm::cast<Value>(size)
                          : Value(arith::ConstantIndexOp::create(
                                b, dim.getLoc(), *getConstantIntValue(size)));
        dim.replaceAllUsesWith(value);
        dim.erase();
      }
    });
  }
};

} // namespace
} // namespace strata::gpu
