//===- ChannelsLast.cpp - Convolutions in NHWC whatever the input layout --===//
//
// strata-channels-last: PyTorch models arrive in NCHW (torch-mlir:
// linalg.conv_2d_nchw_fchw; TOSA: conv_2d_nhwc_fhwc between transposes back
// to NCHW), while the CPU code generator's fast convolution is NHWC with an
// HWCF filter, vectorized along the channels. This pass
//
// 1. rewrites every NCHW convolution and pooling as its NHWC form between
//    transposes (input to NHWC, result back to NCHW), and every FHWC filter
//    as HWCF, the filter transposes being constants that strata-const-eval
//    then computes at compile time;
// 2. moves the transposes of activations out of the way so that they cancel:
//    an elementwise linalg.generic reading a transposed tensor is computed in
//    the transpose's source layout instead (its indexing maps permuted) and
//    its result transposed back, a tensor.pad of a transposed tensor pads the
//    source, a transpose of a fill or of an empty tensor is a fill or empty
//    tensor of the new shape, and two transposes in a row compose.
//
// A ResNet then runs channels-last from the first convolution to the global
// pooling, with one transpose at each edge (the input image and the pooled
// features). 3. Last, a pad that ended up before a transpose that cancelled
// nothing (the input image's) moves back after it, next to its convolution. Every rewrite keeps the values the same; only their layout in
// memory changes.
//
//===----------------------------------------------------------------------===//

#include "compiler/dispatch/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::flow {
namespace {

// Permutations in linalg.transpose's sense: result dimension j is input
// dimension perm[j].
constexpr int64_t kToNHWC[] = {0, 2, 3, 1};
constexpr int64_t kToNCHW[] = {0, 3, 1, 2};
constexpr int64_t kFHWCToHWCF[] = {1, 2, 3, 0};
constexpr int64_t kFCHWToHWCFValues[] = {2, 3, 1, 0};
constexpr int64_t kCHWToHWCValues[] = {1, 2, 0};
const ArrayRef<int64_t> kFCHWToHWCF = kFCHWToHWCFValues;
const ArrayRef<int64_t> kCHWToHWC = kCHWToHWCValues;
const ArrayRef<int64_t> kNoFilter;

Value transpose(PatternRewriter &rewriter, Location loc, Value input,
                ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : perm)
    sizes.push_back(tensor::getMixedSize(rewriter, loc, input, d));
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                       type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, input, init, perm)
      ->getResult(0);
}

SmallVector<NamedAttribute> windowAttributes(Operation *op) {
  SmallVector<NamedAttribute> attributes;
  for (StringRef name : {"strides", "dilations"})
    if (Attribute value = op->getAttr(name))
      attributes.emplace_back(StringAttr::get(op->getContext(), name), value);
  return attributes;
}

/// op(in NCHW, filter) = toNCHW(op'(toNHWC(in), permute(filter))) for an
/// NCHW convolution or pooling and its NHWC form `NhwcOp`; FilterPerm
/// permutes the filter (FCHW to HWCF, CHW to HWC), empty for a pooling's
/// window, which has no layout.
template <typename NchwOp, typename NhwcOp, const ArrayRef<int64_t> &FilterPerm>
struct NchwToNhwc : OpRewritePattern<NchwOp> {
  using OpRewritePattern<NchwOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(NchwOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Location loc = op.getLoc();
    Value input = transpose(rewriter, loc, op.getDpsInputs()[0], kToNHWC);
    Value filter = op.getDpsInputs()[1];
    if (!FilterPerm.empty())
      filter = transpose(rewriter, loc, filter, FilterPerm);
    Value init = transpose(rewriter, loc, op.getDpsInits()[0], kToNHWC);
    auto nhwc = NhwcOp::create(rewriter, loc, TypeRange{init.getType()},
                               ValueRange{input, filter}, ValueRange{init},
                               windowAttributes(op));
    rewriter.replaceOp(op,
                       transpose(rewriter, loc, nhwc->getResult(0), kToNCHW));
    return success();
  }
};

/// conv(in, filter FHWC) = conv(in, toHWCF(filter)).
struct ConvFhwcToHwcf : OpRewritePattern<linalg::Conv2DNhwcFhwcOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNhwcFhwcOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Location loc = op.getLoc();
    Value filter =
        transpose(rewriter, loc, op.getDpsInputs()[1], kFHWCToHWCF);
    rewriter.replaceOpWithNewOp<linalg::Conv2DNhwcHwcfOp>(
        op, op->getResultTypes(), ValueRange{op.getDpsInputs()[0], filter},
        op.getDpsInits(), windowAttributes(op));
    return success();
  }
};

/// A 1x1 convolution with unit strides is a matmul of the pixels
/// (N*H*W rows) by the filter (C x F): the matmul's register-blocked,
/// cache-blocked code applies, where the convolution's would walk one output
/// row at a time.
struct PointwiseConvToMatmul : OpRewritePattern<linalg::Conv2DNhwcHwcfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::Conv2DNhwcHwcfOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Value input = op.getDpsInputs()[0], filter = op.getDpsInputs()[1];
    Value init = op.getDpsInits()[0];
    auto filterType = cast<RankedTensorType>(filter.getType());
    auto initType = cast<RankedTensorType>(init.getType());
    auto inputType = cast<RankedTensorType>(input.getType());
    auto unit = [](DenseIntElementsAttr values) {
      return !values || llvm::all_of(values.getValues<APInt>(),
                                     [](const APInt &v) { return v == 1; });
    };
    if (!inputType.hasStaticShape() || !initType.hasStaticShape() ||
        filterType.getDimSize(0) != 1 || filterType.getDimSize(1) != 1 ||
        !unit(op.getStrides()) ||
        inputType.getShape().take_front(3) != initType.getShape().take_front(3))
      return failure();
    Location loc = op.getLoc();
    SmallVector<ReassociationIndices> pixels = {{0, 1, 2}, {3}};
    SmallVector<ReassociationIndices> taps = {{0, 1, 2}, {3}};
    Value rows = tensor::CollapseShapeOp::create(rewriter, loc, input, pixels);
    Value weights =
        tensor::CollapseShapeOp::create(rewriter, loc, filter, taps);
    // (A fill of an empty output moves past this reshape and the reshape
    // of the empty tensor folds: the patterns below.)
    Value out = tensor::CollapseShapeOp::create(rewriter, loc, init, pixels);
    Value product = linalg::MatmulOp::create(rewriter, loc,
                                             TypeRange{out.getType()},
                                             ValueRange{rows, weights},
                                             ValueRange{out})
                        ->getResult(0);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, initType, product,
                                                       pixels);
    return success();
  }
};

/// A generic input indexed with constant 0 in unit dimensions (a batch
/// norm's tensor<Cx1x1> parameters, read at (c, 0, 0)) is read without them
/// (a tensor<C> at (c)): the vectorizer then sees a contiguous vector along
/// the channels instead of a strided read. The reshape is a view on the host,
/// or folded into the constant.
struct DropUnitDimsOfInput : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      AffineMap map = op.getMatchingIndexingMap(input);
      if (!type || type.getRank() < 2)
        continue;
      SmallVector<bool> dropped(type.getRank(), false);
      bool any = false, kept = false;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        auto zero = dyn_cast<AffineConstantExpr>(map.getResult(d));
        dropped[d] = zero && zero.getValue() == 0 && type.getDimSize(d) == 1;
        any |= dropped[d];
        kept |= !dropped[d];
      }
      if (!any || !kept)
        continue;
      // Each dropped dimension joins the group of the kept one before it
      // (the leading ones, the first kept one).
      SmallVector<ReassociationIndices> groups;
      SmallVector<AffineExpr> results;
      SmallVector<int64_t> shape;
      ReassociationIndices leading;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (dropped[d]) {
          (groups.empty() ? leading : groups.back()).push_back(d);
          continue;
        }
        groups.push_back(leading);
        leading.clear();
        groups.back().push_back(d);
        results.push_back(map.getResult(d));
        shape.push_back(type.getDimSize(d));
      }
      Value collapsed = tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(), type.clone(shape), input->get(), groups);
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[input->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, results, op.getContext());
      rewriter.modifyOpInPlace(op, [&] {
        input->set(collapsed);
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};

/// Whether GenericInSourceLayout may rewrite `op` around a transposed input.
bool computesElementwise(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() || op.hasIndexSemantics())
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isIdentity())
      return false;
  return true;
}

/// An all-parallel generic with identity output maps whose input is
/// x = transpose(z, perm), read with the identity map, is computed in z's
/// layout: y = transpose(y', perm) with y' = generic over z's loops.
struct GenericInSourceLayout : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!computesElementwise(op))
      return failure();
    linalg::TransposeOp transposed;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto producer = input->get().getDefiningOp<linalg::TransposeOp>();
      // (A transposed constant is left to strata-const-eval: moving it would
      // turn one compile-time transpose into two of activations.)
      if (producer && op.getMatchingIndexingMap(input).isIdentity() &&
          !matchPattern(producer.getInput(), m_Constant())) {
        transposed = producer;
        break;
      }
    }
    if (!transposed)
      return rewriter.notifyMatchFailure(op, "no input is a transpose");
    ArrayRef<int64_t> perm = transposed.getPermutation();
    SmallVector<int64_t> inverse = invertPermutationVector(perm);
    MLIRContext *context = op.getContext();
    Location loc = op.getLoc();
    // Loop d_j of the old space is loop e_perm[j] of the new one.
    SmallVector<AffineExpr> oldInNew;
    for (int64_t p : perm)
      oldInNew.push_back(getAffineDimExpr(p, context));
    AffineMap substitution =
        AffineMap::get(perm.size(), 0, oldInNew, context);

    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      auto producer = input->get().getDefiningOp<linalg::TransposeOp>();
      if (producer && map.isIdentity() && producer.getPermutation() == perm) {
        inputs.push_back(producer.getInput());
        maps.push_back(AffineMap::getMultiDimIdentityMap(perm.size(), context));
      } else {
        inputs.push_back(input->get());
        maps.push_back(map.compose(substitution));
      }
    }
    SmallVector<Value> inits;
    for (Value init : op.getDpsInits()) {
      inits.push_back(transpose(rewriter, loc, init, inverse));
      maps.push_back(AffineMap::getMultiDimIdentityMap(perm.size(), context));
    }
    SmallVector<Type> resultTypes;
    for (Value init : inits)
      resultTypes.push_back(init.getType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultTypes, inputs, inits, maps,
        op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                                generic.getRegion().begin());
    SmallVector<Value> results;
    for (Value result : generic->getResults())
      results.push_back(transpose(rewriter, loc, result, perm));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// A generic reading x = transpose(z, perm) through a map other than the
/// identity (or any map, when it reduces) reads z instead, the transpose
/// folded into its map: z[k] = x[j] for perm[j] = k.
struct FoldTransposeIntoGeneric : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    bool elementwise = computesElementwise(op);
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto producer = input->get().getDefiningOp<linalg::TransposeOp>();
      AffineMap map = op.getMatchingIndexingMap(input);
      if (!producer || (elementwise && map.isIdentity()) ||
          matchPattern(producer.getInput(), m_Constant()))
        continue;
      SmallVector<AffineExpr> results;
      for (int64_t j : invertPermutationVector(producer.getPermutation()))
        results.push_back(map.getResult(j));
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[input->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, results, op.getContext());
      rewriter.modifyOpInPlace(op, [&] {
        input->set(producer.getInput());
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};

/// pad(transpose(z, perm)) = transpose(pad'(z), perm), the pad amounts
/// permuted.
struct PadInSourceLayout : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rewriter) const override {
    auto transposed = op.getSource().getDefiningOp<linalg::TransposeOp>();
    Value padding = op.getConstantPaddingValue();
    if (!transposed || !padding || op.getNofold())
      return failure();
    ArrayRef<int64_t> perm = transposed.getPermutation();
    SmallVector<int64_t> inverse = invertPermutationVector(perm);
    SmallVector<OpFoldResult> low = op.getMixedLowPad();
    SmallVector<OpFoldResult> high = op.getMixedHighPad();
    SmallVector<OpFoldResult> sourceLow, sourceHigh;
    for (int64_t k : inverse) {
      sourceLow.push_back(low[k]);
      sourceHigh.push_back(high[k]);
    }
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> shape;
    for (int64_t k : inverse)
      shape.push_back(type.getDimSize(k));
    auto padded = tensor::PadOp::create(
        rewriter, op.getLoc(), type.clone(shape), transposed.getInput(),
        sourceLow, sourceHigh, padding);
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), padded, perm));
    return success();
  }
};

/// transpose(pad(z), perm) = pad'(transpose(z, perm)), the pad amounts
/// permuted, once nothing is left to cancel: z is not a transpose. The input
/// image of an NCHW model is then transposed unpadded and padded right
/// before the first convolution, whose kernel takes the pad in on the CPU
/// (strata-form-dispatches' pads-into-windows), instead of padded in NCHW
/// and transposed, two kernels writing the image.
struct PadAfterTranspose : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto pad = op.getInput().getDefiningOp<tensor::PadOp>();
    if (!pad || !pad->hasOneUse() || pad.getNofold() || !pad.getConstantPaddingValue() ||
        pad.getSource().getDefiningOp<linalg::TransposeOp>())
      return failure();
    ArrayRef<int64_t> perm = op.getPermutation();
    SmallVector<OpFoldResult> low = pad.getMixedLowPad(), high = pad.getMixedHighPad();
    SmallVector<OpFoldResult> permutedLow, permutedHigh;
    for (int64_t k : perm) {
      permutedLow.push_back(low[k]);
      permutedHigh.push_back(high[k]);
    }
    Value transposed = transpose(rewriter, op.getLoc(), pad.getSource(), perm);
    rewriter.replaceOpWithNewOp<tensor::PadOp>(op, op.getResult()[0].getType(), transposed, permutedLow,
                                               permutedHigh, pad.getConstantPaddingValue());
    return success();
  }
};

/// transpose(fill(v, init)) = fill(v, transpose(init)), and
/// transpose(empty) = empty of the transposed shape.
struct TransposeOfFillOrEmpty : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    Location loc = op.getLoc();
    if (input.getDefiningOp<tensor::EmptyOp>()) {
      rewriter.replaceOp(op, op.getInit());
      return success();
    }
    auto fill = input.getDefiningOp<linalg::FillOp>();
    if (!fill || !fill.hasPureTensorSemantics())
      return failure();
    Value init =
        transpose(rewriter, loc, fill.getDpsInits()[0], op.getPermutation());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(op, fill.getDpsInputs()[0],
                                                init);
    return success();
  }
};

struct ChannelsLastPass : PassWrapper<ChannelsLastPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ChannelsLastPass)

  StringRef getArgument() const override { return "strata-channels-last"; }
  StringRef getDescription() const override {
    return "Runs convolutions and poolings channels-last, moving the "
           "transposes of activations to the edges";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect, tensor::TensorDialect>();
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<
        NchwToNhwc<linalg::Conv2DNchwFchwOp, linalg::Conv2DNhwcHwcfOp,
                   kFCHWToHWCF>,
        NchwToNhwc<linalg::DepthwiseConv2DNchwChwOp,
                   linalg::DepthwiseConv2DNhwcHwcOp, kCHWToHWC>,
        NchwToNhwc<linalg::PoolingNchwMaxOp, linalg::PoolingNhwcMaxOp,
                   kNoFilter>,
        NchwToNhwc<linalg::PoolingNchwSumOp, linalg::PoolingNhwcSumOp,
                   kNoFilter>,
        ConvFhwcToHwcf, PointwiseConvToMatmul, GenericInSourceLayout,
        FoldTransposeIntoGeneric, PadInSourceLayout, TransposeOfFillOrEmpty,
        DropUnitDimsOfInput>(context);
    // Two transposes in a row compose (and an identity one folds away).
    linalg::TransposeOp::getCanonicalizationPatterns(patterns, context);
    // A reshape of a fill is a fill of the reshape, and a reshape of an
    // empty tensor an empty tensor: the 1x1 convolutions' outputs start as
    // fills of empty matrices, which dispatch formation clones into kernels.
    linalg::FillOp::getCanonicalizationPatterns(patterns, context);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    // The elementwise ops after a 1x1 convolution (batch norm, activation)
    // run on its matmul's rows x channels too, so that the matmul's reshape
    // back to NHWC comes after them and dispatch formation fuses them into
    // the matmul's kernel (each op collapsed lets the next one follow).
    linalg::populateFoldReshapeOpsByCollapsingPatterns(
        patterns, [](OpOperand *operand) {
          auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
          return expand && expand.getSrc().getDefiningOp<linalg::LinalgOp>();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    RewritePatternSet padsLast(context);
    padsLast.add<PadAfterTranspose>(context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(padsLast))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createChannelsLastPass() {
  return std::make_unique<ChannelsLastPass>();
}

} // namespace strata::flow
