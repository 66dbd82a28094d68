//===- PadsToGrids.cpp - A tensor.pad becomes one elementwise op ----------===//
//
// strata-gpu-pads-to-grids (Passes.td): out[i] = inside(i - low) ?
// source[clamp(i - low)] : padding(i), one parallel loop over the result.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUPADSTOGRIDSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// Whether the pass can rewrite `pad`: every padded dimension of the source
/// has a static extent of at least 1.
bool rewritable(tensor::PadOp pad) {
  RankedTensorType source = pad.getSourceType();
  for (int64_t d = 0; d < source.getRank(); ++d) {
    bool padded = !isZeroInteger(pad.getMixedLowPad()[d]) ||
                  !isZeroInteger(pad.getMixedHighPad()[d]);
    if (padded && (source.isDynamicDim(d) || source.getDimSize(d) < 1))
      return false;
  }
  return true;
}

void rewrite(tensor::PadOp pad) {
  OpBuilder b(pad);
  Location loc = pad.getLoc();
  Value source = pad.getSource();
  RankedTensorType sourceType = pad.getSourceType();
  RankedTensorType resultType = pad.getResultType();
  const int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> low = pad.getMixedLowPad();
  SmallVector<OpFoldResult> high = pad.getMixedHighPad();

  // The result's dynamic extents: low + source + high.
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    Value extent = tensor::DimOp::create(b, loc, source, d);
    for (OpFoldResult pad : {low[d], high[d]})
      if (!isZeroInteger(pad))
        extent = arith::AddIOp::create(
            b, loc, extent, getValueOrCreateConstantIndexOp(b, loc, pad));
    dynamicSizes.push_back(extent);
  }
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType(),
                                       dynamicSizes);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &at, Location, ValueRange) {
        Value inside;
        SmallVector<Value> indices, sourceIndices;
        for (int64_t d = 0; d < rank; ++d) {
          Value index = linalg::IndexOp::create(at, loc, d);
          indices.push_back(index);
          if (isZeroInteger(low[d]) && isZeroInteger(high[d])) {
            sourceIndices.push_back(index);
            continue;
          }
          // i - low, unsigned: below the source it wraps past its extent.
          Value shifted = isZeroInteger(low[d])
                              ? index
                              : arith::SubIOp::create(at, loc, index,
                                                      getValueOrCreateConstantIndexOp(at, loc, low[d]))
                                    .getResult();
          const int64_t extent = sourceType.getDimSize(d);
          Value in = arith::CmpIOp::create(
              at, loc, arith::CmpIPredicate::ult, shifted,
              arith::ConstantIndexOp::create(at, loc, extent));
          inside = inside ? arith::AndIOp::create(at, loc, inside, in).getResult()
                          : in;
          sourceIndices.push_back(arith::MinUIOp::create(
              at, loc, shifted,
              arith::ConstantIndexOp::create(at, loc, extent - 1)));
        }
        Value element =
            tensor::ExtractOp::create(at, loc, source, sourceIndices);
        // The padding value, computed at these indices.
        IRMapping mapping;
        Block &region = pad.getRegion().front();
        for (int64_t d = 0; d < rank; ++d)
          mapping.map(region.getArgument(d), indices[d]);
        for (Operation &op : region.without_terminator())
          at.clone(op, mapping);
        Value padding = mapping.lookupOrDefault(
            cast<tensor::YieldOp>(region.getTerminator()).getValue());
        Value result =
            inside ? arith::SelectOp::create(at, loc, inside, element, padding)
                         .getResult()
                   : element;
        linalg::YieldOp::create(at, loc, result);
      });
  pad.getResult().replaceAllUsesWith(generic.getResult(0));
  pad.erase();
}

struct GPUPadsToGridsPass
    : impl::GPUPadsToGridsPassBase<GPUPadsToGridsPass> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) {
      if (rewritable(pad))
        pads.push_back(pad);
    });
    for (tensor::PadOp pad : pads)
      rewrite(pad);
  }
};

} // namespace
} // namespace strata::gpu
