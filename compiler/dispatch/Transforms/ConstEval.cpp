//===- ConstEval.cpp - Evaluate constant relayouts at compile time --------===//
//
// strata-const-eval: a transpose or reshape whose input is a constant is
// computed by the compiler, and the module stores its result instead of
// running a kernel on every call. torch-mlir lowers every nn.Linear to a
// transpose of the constant weight followed by a matmul, and the channels-last
// rewrite of convolutions (strata-channels-last) transposes every filter; left
// alone these cost a dispatch per layer per call (in a BERT encoder, 5 of its
// 8 ms).
//
// Handled: linalg.transpose, a linalg.generic that only moves elements (one
// input, all loops parallel, permutation maps, the body yielding the input),
// tensor.expand_shape, tensor.collapse_shape and tensor.pad by a constant
// value — on dense and dense_resource constants of whole-byte element types.
// The result keeps the kind of its input: weights imported as dense_resource
// blobs stay blobs. Upstream's linalg constant folding handles only
// DenseElementsAttr, which real exports do not use for their weights.
//
// The original constant stays only while something else uses it; a weight
// read both transposed and not is then stored twice.
//
//===----------------------------------------------------------------------===//

#include <cstring>

#include "compiler/dispatch/Transforms/Constants.h"
#include "compiler/dispatch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::flow {

std::optional<ConstantBytes> constantBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Attribute attr;
  if (!type || !type.hasStaticShape() || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  int64_t expected =
      type.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
  ConstantBytes bytes;
  bytes.attr = attr;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || static_cast<int64_t>(blob->getData().size()) != expected)
      return std::nullopt;
    bytes.data = blob->getData();
    bytes.resource = true;
    return bytes;
  }
  auto dense = dyn_cast<DenseIntOrFPElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  if (dense.isSplat()) {
    bytes.splat = true;
    bytes.splatValue = dense.getSplatValue<Attribute>();
    return bytes;
  }
  bytes.data = dense.getRawData();
  if (static_cast<int64_t>(bytes.data.size()) != expected)
    return std::nullopt;
  return bytes;
}

double floatElement(const ConstantBytes &bytes, Type element, int64_t i) {
  if (bytes.splat)
    return cast<FloatAttr>(bytes.splatValue).getValueAsDouble();
  if (element.isF32()) {
    float value;
    std::memcpy(&value, bytes.data.data() + 4 * i, 4);
    return value;
  }
  double value;
  std::memcpy(&value, bytes.data.data() + 8 * i, 8);
  return value;
}

namespace {

/// A constant attribute of `type` holding `data` (or the splat of `from`), of
/// the same kind as `from`.
TypedAttr makeConstantAttr(RankedTensorType type, const ConstantBytes &from,
                           ArrayRef<char> data) {
  Attribute attr;
  if (from.splat)
    attr = SplatElementsAttr::get(type, from.splatValue);
  else if (from.resource)
    attr = DenseResourceElementsAttr::get(
        type, "strata_const_eval",
        HeapAsmResourceBlob::allocateAndCopyWithAlign(data, alignof(uint64_t)));
  else
    attr = DenseElementsAttr::getFromRawBuffer(type, data);
  return cast<TypedAttr>(attr);
}

/// out[i] = in[j] where the loop point that writes output index i reads input
/// index j: `inputMap` and `outputMap` are permutations of the same loops.
std::vector<char> permute(ArrayRef<char> in, ArrayRef<int64_t> inShape,
                          AffineMap inputMap, ArrayRef<int64_t> outShape,
                          AffineMap outputMap, int64_t elementBytes) {
  int64_t rank = outShape.size();
  // For output dimension k: the input dimension that walks the same loop.
  SmallVector<int64_t> inDimOf(rank);
  for (int64_t k = 0; k < rank; ++k) {
    unsigned loop = outputMap.getDimPosition(k);
    inDimOf[k] = *inputMap.getResultPosition(
        getAffineDimExpr(loop, inputMap.getContext()));
  }
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  int64_t count = 1;
  for (int64_t extent : outShape)
    count *= extent;
  std::vector<char> out(count * elementBytes);
  SmallVector<int64_t> index(rank, 0);
  int64_t source = 0; // linear input element of `index`
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out.data() + i * elementBytes,
                in.data() + source * elementBytes, elementBytes);
    // Advance `index` in row-major order, keeping `source` in step.
    for (int64_t k = rank - 1; k >= 0; --k) {
      int64_t stride = inStrides[inDimOf[k]];
      if (++index[k] < outShape[k]) {
        source += stride;
        break;
      }
      source -= stride * (outShape[k] - 1);
      index[k] = 0;
    }
  }
  return out;
}

/// Folded permutations by input constant, maps and result type: the same
/// weight relaid out the same way in several functions (entry points for
/// batch 1 and batch 32) is computed and stored once.
using PermutationKey = std::tuple<Attribute, AffineMap, AffineMap, Type>;
using PermutationCache = DenseMap<PermutationKey, TypedAttr>;

LogicalResult foldPermutation(PatternRewriter &rewriter, Operation *op,
                              Value input, AffineMap inputMap,
                              AffineMap outputMap, PermutationCache &cache) {
  std::optional<ConstantBytes> bytes = constantBytes(input);
  if (!bytes)
    return rewriter.notifyMatchFailure(op, "input is not a constant");
  auto inType = cast<RankedTensorType>(input.getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  TypedAttr &folded = cache[{bytes->attr, inputMap, outputMap, outType}];
  if (!folded) {
    std::vector<char> data;
    if (!bytes->splat)
      data = permute(bytes->data, inType.getShape(), inputMap,
                     outType.getShape(), outputMap,
                     inType.getElementTypeBitWidth() / 8);
    folded = makeConstantAttr(outType, *bytes, data);
  }
  rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, outType, folded);
  return success();
}

struct FoldTranspose : OpRewritePattern<linalg::TransposeOp> {
  FoldTranspose(MLIRContext *context, PermutationCache &cache)
      : OpRewritePattern(context), cache(cache) {}
  PermutationCache &cache;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    // out[i0, ..., in-1] = in[permutation applied]: output dimension k walks
    // input dimension permutation[k].
    MLIRContext *context = op.getContext();
    AffineMap outputMap = AffineMap::getMultiDimIdentityMap(
        op.getPermutation().size(), context);
    AffineMap inputMap = AffineMap::getPermutationMap(
        invertPermutationVector(op.getPermutation()), context);
    return foldPermutation(rewriter, op, op.getInput(), inputMap, outputMap,
                           cache);
  }
};

struct FoldCopyGeneric : OpRewritePattern<linalg::GenericOp> {
  FoldCopyGeneric(MLIRContext *context, PermutationCache &cache)
      : OpRewritePattern(context), cache(cache) {}
  PermutationCache &cache;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
        op.getNumDpsInits() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops())
      return failure();
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    if (yield.getNumOperands() != 1 ||
        yield.getOperand(0) != op.getBody()->getArgument(0))
      return failure();
    auto maps = op.getIndexingMapsArray();
    if (!maps[0].isPermutation() || !maps[1].isPermutation())
      return failure();
    return foldPermutation(rewriter, op, op.getDpsInputs()[0], maps[0],
                           maps[1], cache);
  }
};

template <typename ReshapeOp>
struct FoldReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ConstantBytes> bytes = constantBytes(op.getSrc());
    auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
    // A reshape of a constant that has other uses stays: on the host it is
    // a free view, and folding would store the data twice.
    if (!bytes || !type || !type.hasStaticShape() || !op.getSrc().hasOneUse())
      return failure();
    // A blob keeps its bytes: the reshaped constant refers to the same one.
    TypedAttr folded;
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(bytes->attr))
      folded = DenseResourceElementsAttr::get(type, resource.getRawHandle());
    else
      folded = makeConstantAttr(type, *bytes, bytes->data);
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, folded);
    return success();
  }
};

/// The bytes of scalar `value` (a float or integer attribute) as an element
/// of `elementBytes` bytes, little-endian; none for another attribute.
std::optional<std::vector<char>> scalarBytes(Attribute value, int64_t elementBytes) {
  APInt bits;
  if (auto number = dyn_cast<FloatAttr>(value))
    bits = number.getValue().bitcastToAPInt();
  else if (auto number = dyn_cast<IntegerAttr>(value))
    bits = number.getValue();
  else
    return std::nullopt;
  if (bits.getBitWidth() != 8 * elementBytes)
    return std::nullopt;
  std::vector<char> bytes(elementBytes);
  for (int64_t b = 0; b < elementBytes; ++b)
    bytes[b] = static_cast<char>(bits.extractBitsAsZExtValue(8, 8 * b));
  return bytes;
}

/// Folded pads by input constant, padding value, low padding and result
/// type: a weight padded the same way in several functions is stored once
/// (the permutations of it that follow then hit PermutationCache too).
using PadKey = std::tuple<Attribute, Attribute, Attribute, Type>;
using PadCache = DenseMap<PadKey, TypedAttr>;

/// A tensor.pad of a constant by a constant value, with static padding:
/// the padded constant (strata-pack-weights pads a classifier's weights to
/// whole strips).
struct FoldPad : OpRewritePattern<tensor::PadOp> {
  FoldPad(MLIRContext *context, PadCache &cache)
      : OpRewritePattern(context), cache(cache) {}
  PadCache &cache;
  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ConstantBytes> bytes = constantBytes(op.getSource());
    auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
    Value paddingValue = op.getConstantPaddingValue();
    Attribute padding;
    if (!bytes || !type || !type.hasStaticShape() || !paddingValue ||
        !matchPattern(paddingValue, m_Constant(&padding)) ||
        !op.getLow().empty() || !op.getHigh().empty())
      return failure();
    TypedAttr &folded =
        cache[{bytes->attr, padding, rewriter.getDenseI64ArrayAttr(op.getStaticLow()), type}];
    if (!folded)
      folded = pad(op, *bytes, padding);
    if (!folded)
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, folded);
    return success();
  }

  /// `op`'s result for its constant source `bytes` and padding value
  /// `padding`, or null.
  static TypedAttr pad(tensor::PadOp op, const ConstantBytes &bytes, Attribute padding) {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    const int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    std::optional<std::vector<char>> value = scalarBytes(padding, elementBytes);
    if (!value)
      return {};
    if (bytes.splat && bytes.splatValue == padding)
      return cast<TypedAttr>(SplatElementsAttr::get(type, padding));
    auto source = cast<RankedTensorType>(op.getSource().getType());
    // The source's bytes: the constant's own, or a splat's element repeated.
    ArrayRef<char> in = bytes.data;
    std::vector<char> splatData;
    if (bytes.splat) {
      std::optional<std::vector<char>> element = scalarBytes(bytes.splatValue, elementBytes);
      if (!element)
        return {};
      for (int64_t i = 0; i < source.getNumElements(); ++i)
        splatData.insert(splatData.end(), element->begin(), element->end());
      in = splatData;
    }
    std::vector<char> out;
    out.reserve(type.getNumElements() * elementBytes);
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      out.insert(out.end(), value->begin(), value->end());
    // Each innermost row of the source, at its place in the result.
    ArrayRef<int64_t> low = op.getStaticLow(), inShape = source.getShape();
    const int64_t rank = source.getRank(), row = rank ? inShape.back() : 1;
    SmallVector<int64_t> outStrides = computeStrides(type.getShape());
    SmallVector<int64_t> index(rank, 0);
    for (int64_t start = 0; row && start < source.getNumElements(); start += row) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d)
        at += (index[d] + low[d]) * outStrides[d];
      std::memcpy(out.data() + at * elementBytes, in.data() + start * elementBytes,
                  row * elementBytes);
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++index[d] < inShape[d])
          break;
        index[d] = 0;
      }
    }
    ConstantBytes kind = bytes;
    kind.splat = false;
    return makeConstantAttr(type, kind, out);
  }
};

struct ConstEvalPass : PassWrapper<ConstEvalPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConstEvalPass)

  StringRef getArgument() const override { return "strata-const-eval"; }
  StringRef getDescription() const override {
    return "Computes transposes and reshapes of constants at compile time";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    PermutationCache cache;
    PadCache pads;
    patterns.add<FoldTranspose, FoldCopyGeneric>(context, cache);
    patterns.add<FoldReshape<tensor::ExpandShapeOp>,
                 FoldReshape<tensor::CollapseShapeOp>>(context);
    patterns.add<FoldPad>(context, pads);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createConstEvalPass() {
  return std::make_unique<ConstEvalPass>();
}

} // namespace strata::flow
