//===- ComputeInDestinations.cpp - No temporaries for pads and inits -----===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUCOMPUTEINDESTINATIONSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// The element of a splat tensor constant, or null.
TypedAttr splatValue(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return nullptr;
  return dyn_cast<TypedAttr>(dense.getSplatValue<Attribute>());
}

/// A statically shaped pad by a value defined outside it, written as fills
/// of its border only (two slabs per padded dimension, each over the
/// interior of the dimensions before it, so they do not overlap) and a copy
/// of its source into the interior. Upstream's rewrite fills the whole
/// destination first, writing the interior twice: for MobileNetV2's padded
/// activations, 5 MB of zeros per layer.
FailureOr<Value> padAsBorderFills(RewriterBase &rewriter, tensor::PadOp pad) {
  auto type = pad.getResultType();
  auto sourceType = pad.getSourceType();
  Value padding = pad.getConstantPaddingValue();
  std::optional<SmallVector<int64_t>> low =
      getConstantIntValues(pad.getMixedLowPad());
  std::optional<SmallVector<int64_t>> high =
      getConstantIntValues(pad.getMixedHighPad());
  if (!type.hasStaticShape() || !sourceType.hasStaticShape() || !padding ||
      !low || !high)
    return failure();
  Location loc = pad.getLoc();
  Value result = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
  int64_t rank = type.getRank();
  auto fillSlab = [&](int64_t dim, int64_t offset, int64_t size) {
    if (size == 0)
      return;
    SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape());
    for (int64_t d = 0; d < dim; ++d) {
      offsets[d] = (*low)[d];
      sizes[d] = sourceType.getDimSize(d);
    }
    offsets[dim] = offset;
    sizes[dim] = size;
    MLIRContext *context = rewriter.getContext();
    SmallVector<OpFoldResult> at = getAsIndexOpFoldResult(context, offsets);
    SmallVector<OpFoldResult> extent = getAsIndexOpFoldResult(context, sizes);
    SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
    Value slab = tensor::ExtractSliceOp::create(rewriter, loc, result, at,
                                                extent, ones);
    Value filled =
        linalg::FillOp::create(rewriter, loc, padding, slab)->getResult(0);
    result = tensor::InsertSliceOp::create(rewriter, loc, filled, result, at,
                                           extent, ones);
  };
  // The source first: a slab sliced out of a tensor.empty would fold into
  // a separate empty tensor, filled in a temporary and copied.
  MLIRContext *context = rewriter.getContext();
  SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
  result = tensor::InsertSliceOp::create(
      rewriter, loc, pad.getSource(), result,
      getAsIndexOpFoldResult(context, *low),
      getAsIndexOpFoldResult(context, sourceType.getShape()), ones);
  for (int64_t d = 0; d < rank; ++d) {
    fillSlab(d, 0, (*low)[d]);
    fillSlab(d, (*low)[d] + sourceType.getDimSize(d), (*high)[d]);
  }
  return result;
}

struct CPUComputeInDestinationsPass
    : impl::CPUComputeInDestinationsPassBase<CPUComputeInDestinationsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>())
      if (isKernel(kernel) && failed(rewrite(kernel)))
        return signalPassFailure();
  }

  LogicalResult rewrite(func::FuncOp kernel) {
    IRRewriter rewriter(kernel.getContext());
    // Pads and concatenations: a fill and copies into a tensor.empty.
    SmallVector<Operation *> composites;
    kernel.walk([&](Operation *op) {
      if (isa<tensor::PadOp, tensor::ConcatOp>(op))
        composites.push_back(op);
    });
    for (Operation *op : composites) {
      rewriter.setInsertionPoint(op);
      bool rewritten;
      if (auto pad = dyn_cast<tensor::PadOp>(op)) {
        FailureOr<Value> bordered = padAsBorderFills(rewriter, pad);
        if (succeeded(bordered))
          rewriter.replaceOp(pad, *bordered);
        rewritten = succeeded(bordered) ||
                    succeeded(linalg::rewriteInDestinationPassingStyle(rewriter, pad));
      } else {
        FailureOr<SmallVector<Value>> parts =
            cast<tensor::ConcatOp>(op).decomposeOperation(rewriter);
        rewritten = succeeded(parts);
        if (rewritten)
          rewriter.replaceOp(op, *parts);
      }
      if (!rewritten)
        return op->emitOpError("cannot be written as a fill and copies into "
                               "its destination");
    }

    // Inits that are kernel arguments: copied once into a fresh tensor,
    // which becomes the output binding. Inits that are splat constants
    // (ONNX convolutions starting from a folded zero bias): a fill of a
    // fresh tensor, rather than a copy of a constant the size of the result.
    SmallVector<OpOperand *> inits;
    kernel.walk([&](DestinationStyleOpInterface op) {
      if (!op.hasPureTensorSemantics())
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        if (!isa<RankedTensorType>(init.get().getType()))
          continue;
        auto argument = dyn_cast<BlockArgument>(init.get());
        if ((argument && argument.getOwner() == &kernel.front()) ||
            splatValue(init.get()))
          inits.push_back(&init);
      }
    });
    for (OpOperand *init : inits) {
      Value value = init->get();
      auto type = cast<RankedTensorType>(value.getType());
      rewriter.setInsertionPoint(init->getOwner());
      Location loc = init->getOwner()->getLoc();
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, value);
      Value empty = tensor::EmptyOp::create(rewriter, loc, sizes,
                                            type.getElementType());
      Value start;
      if (TypedAttr splat = splatValue(value))
        start = linalg::FillOp::create(
                    rewriter, loc,
                    arith::ConstantOp::create(rewriter, loc, splat).getResult(),
                    empty)
                    .getResult(0);
      else
        start = linalg::CopyOp::create(rewriter, loc, value, empty).getResult(0);
      rewriter.modifyOpInPlace(init->getOwner(), [&] { init->set(start); });
    }
    return success();
  }
};

} // namespace
} // namespace strata::cpu
