//===- PackWeights.cpp - Constant matmul weights in the tiles' layout -----===//
//
// strata-pack-weights: a linalg.matmul C[M, N] += A[M, K] * B[K, N] whose B
// is a constant reads, for each tile of n0 output columns, a strip of n0
// elements from every one of B's K rows: short pieces a whole row apart,
// which neither the prefetchers nor the TLB like (a 784 x 512 weight: 256
// bytes out of every 2 KiB). Packed, B is stored as Bp[N / n0][K][n0], so a
// tile's weights are one contiguous run, and the matmul becomes a contraction
// over the expanded output C[M, N / n0, n0]:
//
//   %bp = linalg.transpose (tensor.expand_shape %b to K x N1 x n0) [1, 0, 2]
//   %c3 = linalg.generic (m, n1, n0, k): A(m, k) * Bp(n1, k, n0) -> C(m, n1, n0)
//   %c  = tensor.collapse_shape %c3 to M x N
//
// strata-const-eval then computes %bp at compile time, so the module stores
// the packed weight and nothing moves at run time. The collapse is a view on
// the host; elementwise ops that read the result (bias, activation, a
// residual add) are rewritten to work on the expanded shape too, so that
// dispatch formation keeps them in the contraction's kernel.
//
// n0 is the width of the code generator's register tile, or a narrower one
// of 32 and 16 elements that divides N with at least two strips (N a
// multiple of 16; stripWidth); the CPU code generator tiles n0 by whole
// vector registers and splits the kernel along N / n0. Where no width
// divides N, B may be padded with zero columns to whole strips
// (paddedStripWidth), and the result sliced back to N columns.
//
// A 2-D NHWC convolution with a large constant filter (filterPacking: over
// 1 MiB, ResNet's last layers' 3 x 3 x 512 x 512; with 256-bit vectors over
// 256 KiB) is packed the same way: the filter W[KH][KW][C][F] as
// Wp[F / f0][KH][KW][C][f0], the convolution a linalg.generic over the
// output expanded to N x OH x OW x F1 x f0, f0 the output channels of the
// code generator's register tile (32, or 16 with 256-bit vectors). A tile
// then reads its KH x KW x C filter taps as one run, where it read 64 or 128
// bytes of every 2 KiB; smaller filters stay in the caches either way and
// are left alone.
//
//===----------------------------------------------------------------------===//

#include "compiler/dispatch/Transforms/Passes.h"

#include "compiler/codegen/PackedMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::flow {
namespace {

/// Marks the contractions this pass made and the elementwise ops it moved to
/// their expanded shape: their results are collapsed back to M x N.
constexpr llvm::StringLiteral kPackedAttr = "flow.packed";

/// The strip width of a matmul with M rows and N columns for a target with
/// `vectorBits`-bit vectors: the width of the CPU code generator's register
/// tile, so that a tile reads each row of its strip whole and the weights
/// stream in order: 2 registers once M fills more than 2 rows, 4 for 1 or
/// 2 rows (a matrix-vector product widens its tile to 4 registers); or the
/// next narrower one that leaves at least two strips.
///
/// Strips wider than the tile read in pieces (a 32-column tile over a strip
/// of 64 takes 128 bytes out of every 256) stream worse: with AVX-512 and
/// strips of 64, BERT at sequence 16 took 3.80 ms a call on a Sapphire
/// Rapids core, GPT-2 0.52, the sample MLP at batch 32 0.30 and ResNet-18
/// 21.5; with tile-wide strips of 32 3.21, 0.43, 0.28 and 20.8 (two rounds
/// interleaved), while the MLP at batch 1 kept its strips of 64 (with 32,
/// 20.4 became 24.1 us on two threads). With 256-bit vectors (AVX2) the
/// same: BERT, whose weights come from memory on every call, ran in 17 to 24
/// ms on a Zen 3 core with strips of 64 and 10 to 20 with strips of 16.
/// Other widths keep 64, 32 or 16 (not measured with tile-wide strips).
int64_t stripWidth(int64_t n, int64_t m, int64_t vectorBits) {
  SmallVector<int64_t> widths = {64, 32, 16};
  if (vectorBits == 512 && m > 2)
    widths = {32, 16};
  else if (vectorBits == 256)
    widths = m <= 2 ? SmallVector<int64_t>{32, 16} : SmallVector<int64_t>{16};
  for (int64_t width : widths)
    if (n % width == 0 && n / width >= 2)
      return width;
  return 0;
}

/// Where stripWidth finds no width that divides n: the first of its widths
/// (widest first) with at least two strips once n is padded to a multiple
/// of it, padding at most n / 16 columns, or 0. The weights are then padded
/// with zero columns before they are packed, and the result sliced back: a
/// classifier's 1000 columns in 32 strips of 32 (AVX2, one row). Read in
/// place, such a weight gave each tile 128 bytes of every 4000, a page
/// apart, which the prefetchers do not follow: MobileNetV2's 1280 x 1000
/// classifier, whose 5 MB come from memory on every call, read them at
/// about 10 GB/s.
int64_t paddedStripWidth(int64_t n, int64_t m, int64_t vectorBits) {
  for (int64_t width : {int64_t(64), int64_t(32), int64_t(16)}) {
    const int64_t padded = width * llvm::divideCeil(n, width);
    if (stripWidth(padded, m, vectorBits) == width && padded / width >= 2 &&
        16 * (padded - n) <= n)
      return width;
  }
  return 0;
}

/// `value` with dimension `dim` split into (size / width, width).
Value expandDim(PatternRewriter &rewriter, Location loc, Value value,
                unsigned dim, int64_t width) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == dim) {
      groups.push_back({int64_t(shape.size()), int64_t(shape.size()) + 1});
      shape.append({type.getDimSize(d) / width, width});
    } else {
      groups.push_back({int64_t(shape.size())});
      shape.push_back(type.getDimSize(d));
    }
  }
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
      value, groups);
}

/// `value` (rank r + 1, dimensions dim and dim + 1 the split ones) collapsed
/// back to rank r.
Value collapseDim(PatternRewriter &rewriter, Location loc, Value value,
                  unsigned dim) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == dim + 1)
      continue;
    groups.push_back(d == dim ? ReassociationIndices{d, d + 1}
                              : ReassociationIndices{d});
  }
  auto collapse = tensor::CollapseShapeOp::create(rewriter, loc, value, groups);
  collapse->setAttr(kPackedAttr, rewriter.getUnitAttr());
  return collapse;
}

/// The element type when `op` (input, weights; one output) is static, of
/// one float type, and its weights (input 1) a constant; null otherwise.
FloatType packableElement(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return nullptr;
  auto element = dyn_cast<FloatType>(
      getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()));
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = cast<RankedTensorType>(operand.get().getType());
    if (!type.hasStaticShape() || type.getElementType() != element)
      return nullptr;
  }
  return matchPattern(op.getDpsInputs()[1], m_Constant()) ? element : nullptr;
}

/// The weights `weights` in strips: dimension `dim` (the last) split into
/// (size / width, width) and the strips moved to the front, so that each
/// strip is one contiguous run; strata-const-eval computes it.
Value packStrips(PatternRewriter &rewriter, Location loc, Value weights,
                 unsigned dim, int64_t width) {
  Value strips = expandDim(rewriter, loc, weights, dim, width);
  auto type = cast<RankedTensorType>(strips.getType());
  SmallVector<int64_t> permutation = {int64_t(dim)};
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != int64_t(dim))
      permutation.push_back(d);
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, applyPermutation(type.getShape(), permutation),
      type.getElementType());
  return linalg::TransposeOp::create(rewriter, loc, strips, empty, permutation)
      ->getResult(0);
}

/// Replaces `op` by the multiply-accumulate linalg.generic `build` makes
/// into `init` (`op`'s output, or a padded one) with dimension `dim` split
/// into strips of `width`, collapsed back and, when padded, sliced to `op`'s
/// result type.
void replaceByPacked(PatternRewriter &rewriter, linalg::LinalgOp op, Value init,
                     unsigned dim, int64_t width,
                     llvm::function_ref<linalg::GenericOp(Value init)> build) {
  Location loc = op.getLoc();
  linalg::GenericOp generic = build(expandDim(rewriter, loc, init, dim, width));
  generic->setAttr(kPackedAttr, rewriter.getUnitAttr());
  Value result = collapseDim(rewriter, loc, generic->getResult(0), dim);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getType() != type) {
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0)),
        strides(type.getRank(), rewriter.getIndexAttr(1)), sizes;
    for (int64_t size : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    result = tensor::ExtractSliceOp::create(rewriter, loc, type, result, offsets,
                                            sizes, strides);
  }
  rewriter.replaceOp(op, result);
}

/// `value` padded with `padding` at the end of its last dimension to
/// `size`.
Value padColumns(PatternRewriter &rewriter, Location loc, Value value,
                 int64_t size, Value padding) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = size;
  return tensor::createPadHighOp(
      RankedTensorType::get(shape, type.getElementType()), value, padding,
      /*nofold=*/false, loc, rewriter);
}

struct PackMatmul : OpRewritePattern<linalg::MatmulOp> {
  PackMatmul(MLIRContext *context, int64_t vectorBits)
      : OpRewritePattern(context), vectorBits(vectorBits) {}
  int64_t vectorBits;
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getIndexingMapsArray() !=
            linalg::MatmulOp::getDefaultIndexingMaps(op.getContext()) ||
        !packableElement(op))
      return rewriter.notifyMatchFailure(
          op, "not a static float matmul of constant weights");
    const int64_t n =
        cast<RankedTensorType>(op.getDpsInputs()[1].getType()).getDimSize(1);
    const int64_t m =
        cast<RankedTensorType>(op.getDpsInputs()[0].getType()).getDimSize(0);
    Location loc = op.getLoc();
    Value weights = op.getDpsInputs()[1], init = op.getDpsInits()[0];
    int64_t width = stripWidth(n, m, vectorBits);
    if (!width) {
      // Padded to whole strips: zero columns of weights, and an output
      // started from the same fill, wider (folded into one fill).
      width = paddedStripWidth(n, m, vectorBits);
      auto fill = init.getDefiningOp<linalg::FillOp>();
      if (!width || !fill)
        return rewriter.notifyMatchFailure(op, "columns not in strips");
      const int64_t padded = width * llvm::divideCeil(n, width);
      Value zero = arith::ConstantOp::create(
          rewriter, loc, rewriter.getZeroAttr(getElementTypeOrSelf(weights.getType())));
      weights = padColumns(rewriter, loc, weights, padded, zero);
      init = padColumns(rewriter, loc, init, padded, fill.getDpsInputs()[0]);
    }

    // K x N -> N1 x K x n0.
    Value packed = packStrips(rewriter, loc, weights, 1, width);
    replaceByPacked(rewriter, op, init, 1, width, [&](Value init) {
      return codegen::createPackedMatmul(rewriter, op.getLoc(),
                                         op.getDpsInputs()[0], packed, init);
    });
    return success();
  }
};

/// How the filter of a 2-D NHWC convolution is packed for a target with
/// `vectorBits`-bit vectors: filters over `minBytes` are, in strips of
/// `strip` output channels, the two registers of channels of the code
/// generator's convolution tile (SelectTileSizes). With AVX-512 32 channels,
/// filters over 1 MiB. With 256-bit vectors (AVX2) 16 channels, since a
/// 16-channel tile reading half of each 128-byte row of a 32-channel strip
/// uses every other cache line, whose sets then hold half as much: ResNet-18's
/// 3 x 3 x 512 x 512 layers on 7 x 7 images took 4.6 to 5.2 ms on a Zen 3
/// core with strips of 32, 3.8 to 4.0 with strips of 16. And filters over
/// 256 KiB: a 3 x 3 x 128 x 128 one (590 KB) read in place gives each tile
/// 64 bytes of every 512, and 128 channels on 28 x 28 took 4.0 to 4.5 ms,
/// 3.3 to 3.6 packed; 64 channels on 56 x 56 (147 KB) gained nothing.
struct FilterPacking {
  int64_t strip, minBytes;
};
FilterPacking filterPacking(int64_t vectorBits) {
  if (vectorBits == 256)
    return {16, 256 << 10};
  return {32, 1 << 20};
}

struct PackConvolution : OpRewritePattern<linalg::Conv2DNhwcHwcfOp> {
  PackConvolution(MLIRContext *context, int64_t vectorBits)
      : OpRewritePattern(context), packing(filterPacking(vectorBits)) {}
  FilterPacking packing;

  LogicalResult matchAndRewrite(linalg::Conv2DNhwcHwcfOp op,
                                PatternRewriter &rewriter) const override {
    FloatType element = packableElement(op);
    if (!element)
      return rewriter.notifyMatchFailure(
          op, "not a static float convolution of a constant filter");
    auto filterType = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
    int64_t f = filterType.getDimSize(3), strip = packing.strip;
    if (f % strip != 0 || f / strip < 2 ||
        filterType.getNumElements() * (element.getWidth() / 8) <=
            packing.minBytes)
      return rewriter.notifyMatchFailure(op, "filter small or not in strips");

    // W[KH][KW][C][F] -> Wp[F1][KH][KW][C][strip].
    Value packed = packStrips(rewriter, op.getLoc(), op.getDpsInputs()[1], 3,
                              strip);
    auto stride = [](DenseIntElementsAttr attr, int i) {
      return attr ? attr.getValues<int64_t>()[i] : int64_t(1);
    };
    DenseIntElementsAttr strides = op.getStrides(), dilations = op.getDilations();
    MLIRContext *context = op.getContext();
    AffineExpr n, oh, ow, f1, f0, kh, kw, c;
    bindDims(context, n, oh, ow, f1, f0, kh, kw, c);
    SmallVector<utils::IteratorType> iterators(5,
                                               utils::IteratorType::parallel);
    iterators.append(3, utils::IteratorType::reduction);
    SmallVector<AffineMap> maps = {
        AffineMap::get(8, 0,
                       {n, oh * stride(strides, 0) + kh * stride(dilations, 0),
                        ow * stride(strides, 1) + kw * stride(dilations, 1), c},
                       context),
        AffineMap::get(8, 0, {f1, kh, kw, c, f0}, context),
        AffineMap::get(8, 0, {n, oh, ow, f1, f0}, context)};
    replaceByPacked(rewriter, op, op.getDpsInits()[0], 3, strip, [&](Value init) {
      return linalg::GenericOp::create(
          rewriter, op.getLoc(), init.getType(),
          ValueRange{op.getDpsInputs()[0], packed}, ValueRange{init}, maps,
          iterators, codegen::multiplyAccumulate);
    });
    return success();
  }
};

/// The packed result `value` is a collapse of, with the dimension it split.
std::optional<std::pair<Value, unsigned>> packedSource(Value value) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !collapse->hasAttr(kPackedAttr))
    return std::nullopt;
  for (auto [d, group] : llvm::enumerate(collapse.getReassociationIndices()))
    if (group.size() == 2)
      return std::make_pair(collapse.getSrc(), unsigned(d));
  return std::nullopt;
}

/// An elementwise linalg.generic that reads a packed result through its
/// collapse, with an identity map, is moved to the expanded shape: the loop
/// of the split dimension becomes two, every operand indexed by it is
/// expanded there (a bias of N elements becomes N1 x n0; a constant one is
/// folded by strata-const-eval), and its results are collapsed back.
struct ExpandElementwiseConsumer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op->hasAttr(kPackedAttr) ||
        op.getNumParallelLoops() != op.getNumLoops())
      return failure();
    // The split loop: the one an identity-mapped packed operand splits.
    std::optional<unsigned> splitLoop;
    int64_t width = 0;
    for (OpOperand *input : op.getDpsInputOperands()) {
      std::optional<std::pair<Value, unsigned>> source =
          packedSource(input->get());
      if (!source || !op.getMatchingIndexingMap(input).isIdentity())
        continue;
      splitLoop = source->second;
      width = cast<RankedTensorType>(source->first.getType())
                  .getDimSize(source->second + 1);
      break;
    }
    if (!splitLoop)
      return failure();
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (!type || !type.hasStaticShape() || !map.isProjectedPermutation())
        return failure();
      if (op.isDpsInit(&operand) && !map.isIdentity())
        return failure();
      std::optional<unsigned> at = map.getResultPosition(
          getAffineDimExpr(*splitLoop, op.getContext()));
      if (at && type.getDimSize(*at) % width != 0)
        return failure();
    }

    // Loops: d < split stay, split becomes (split, split + 1), d > split
    // shifts by one.
    MLIRContext *context = op.getContext();
    Location loc = op.getLoc();
    unsigned loops = op.getNumLoops() + 1;
    SmallVector<Value> inputs, inits;
    SmallVector<AffineMap> maps;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      SmallVector<AffineExpr> results;
      std::optional<unsigned> splitAt;
      for (auto [position, expr] : llvm::enumerate(map.getResults())) {
        unsigned loop = cast<AffineDimExpr>(expr).getPosition();
        if (loop == *splitLoop) {
          splitAt = position;
          results.push_back(getAffineDimExpr(loop, context));
          results.push_back(getAffineDimExpr(loop + 1, context));
        } else {
          results.push_back(
              getAffineDimExpr(loop < *splitLoop ? loop : loop + 1, context));
        }
      }
      maps.push_back(AffineMap::get(loops, 0, results, context));
      Value value = operand.get();
      std::optional<std::pair<Value, unsigned>> source = packedSource(value);
      if (source && splitAt && source->second == *splitAt)
        value = source->first;
      else if (splitAt)
        value = expandDim(rewriter, loc, value, *splitAt, width);
      (op.isDpsInit(&operand) ? inits : inputs).push_back(value);
    }
    SmallVector<utils::IteratorType> iterators(loops,
                                               utils::IteratorType::parallel);
    SmallVector<Type> types = llvm::map_to_vector(
        inits, [](Value init) { return init.getType(); });
    auto expanded = linalg::GenericOp::create(rewriter, loc, types, inputs,
                                              inits, maps, iterators);
    rewriter.inlineRegionBefore(op.getRegion(), expanded.getRegion(),
                                expanded.getRegion().begin());
    expanded->setAttr(kPackedAttr, rewriter.getUnitAttr());
    SmallVector<Value> results;
    for (Value result : expanded->getResults())
      results.push_back(collapseDim(rewriter, loc, result, *splitLoop));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct PackWeightsPass : PassWrapper<PackWeightsPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PackWeightsPass)

  PackWeightsPass() = default;
  PackWeightsPass(const PackWeightsPass &other) : PassWrapper(other) {}
  explicit PackWeightsPass(int64_t bits) { vectorBits = bits; }

  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Width of the CPU target's vector registers in bits "
                     "(the narrowest of the module's CPU targets)"),
      llvm::cl::init(512)};

  StringRef getArgument() const override { return "strata-pack-weights"; }
  StringRef getDescription() const override {
    return "Stores constant matmul weights and large convolution filters in "
           "strips of the output channels a tile reads";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<PackMatmul, PackConvolution>(context, vectorBits);
    patterns.add<ExpandElementwiseConsumer>(context);
    // An expanded output starts as an expanded fill of an empty tensor: a
    // fill of a new empty tensor of the expanded shape, which dispatch
    // formation keeps inside the kernel.
    linalg::FillOp::getCanonicalizationPatterns(patterns, context);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // The marks served the rewrite only.
    getOperation()->walk([](Operation *op) { op->removeAttr(kPackedAttr); });
  }
};

} // namespace

std::unique_ptr<Pass> createPackWeightsPass(int64_t vectorBits) {
  return std::make_unique<PackWeightsPass>(vectorBits);
}

} // namespace strata::flow
