//===- Winograd.cpp - 3x3 convolutions as Winograd F(2x2, 3x3) ------------===//
//
// strata-winograd: a 3 x 3 convolution of stride 1 with a constant filter
// becomes Winograd's F(2x2, 3x3) (Lavin and Gray, 2015), which computes each
// 2 x 2 block of the output from a 4 x 4 block of the input with 16
// products per channel pair instead of 36:
//
//   V_ab = (B^T d B)_ab  for every 4 x 4 input block d (blocks overlap by 2),
//   M_ab = V_ab * U_ab   a matmul per (a, b): blocks x C times C x F, where
//                        U = G g G^T is the filter transformed at compile time,
//   Y    = A^T M A       the 2 x 2 output block.
//
// B^T and A^T hold only 0 and +-1, so the two transforms are additions and
// subtractions: one elementwise linalg.generic with 16 results reading the
// 16 input values of each block, and one over every output position (p, q)
// writing every second row and column of the output. The 16 matmuls have constant
// right-hand sides, which strata-pack-weights then packs like any layer's
// weights. G holds halves, so U is computed in double and rounded once; the
// result differs from the direct convolution's by rounding (about 1e-6
// relative on ResNet-18's layers).
//
// Rewritten: linalg.conv_2d_nhwc_hwcf of batch 1, strides and dilations 1, a
// constant f32 3 x 3 x C x F filter with C and F at least 16, at least 32
// blocks of output (kDefaultMinBlocks), static shapes,
// and an output that starts as a fill of zero; an odd output height or width
// is computed one larger from the input padded with zeros, then cut. The 2-D NHWC convolutions of channels-last models are of this
// form after strata-channels-last (the padding is a tensor.pad before them).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <iterator>

#include "compiler/dispatch/Transforms/Constants.h"
#include "compiler/dispatch/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::flow {
namespace {

constexpr int kBT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr int kAT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/// The fewest input and output channels rewritten: below them the matmuls
/// are too small for the transforms to pay.
constexpr int64_t kMinChannels = 16;

/// The fewest 2 x 2 output blocks rewritten by default (the pass's
/// min-blocks option). Each of the 16 transformed
/// filters (C x F each, 16/9 of the filter's size together) serves one row
/// per block, so on a small image the matmuls stream the filters from
/// memory and do little with them: ResNet-18's 3 x 3 x 512 x 512 layers on
/// 7 x 7 images (16 blocks, 9.4 MB of filter becoming 16.8) ran at 8 GB/s
/// and 60 GFLOP/s, and as direct convolutions the model took 20.5 ms a call
/// on a Sapphire Rapids core instead of 22.1 (interleaved); with 14 x 14
/// images (49 blocks) Winograd stays ahead (21.6 ms without it there too).
constexpr int64_t kDefaultMinBlocks = 32;

bool allOnes(DenseIntElementsAttr attr) {
  return llvm::all_of(attr.getValues<APInt>(), [](const APInt &v) { return v.isOne(); });
}

/// The signed sum of `terms` (coefficient +1 or -1, value), built at `b`,
/// from a positive term where there is one (b - a, not -a + b).
Value signedSum(OpBuilder &b, Location loc, ArrayRef<std::pair<int, Value>> terms) {
  SmallVector<std::pair<int, Value>> ordered;
  for (int sign : {1, -1})
    for (auto term : terms)
      if (term.first == sign)
        ordered.push_back(term);
  Value sum;
  for (auto [sign, value] : ordered) {
    if (!sum)
      sum = sign > 0 ? value : arith::NegFOp::create(b, loc, value).getResult();
    else if (sign > 0)
      sum = arith::AddFOp::create(b, loc, sum, value);
    else
      sum = arith::SubFOp::create(b, loc, sum, value);
  }
  return sum;
}

/// V_ab = (B^T d B)_ab for all 16 (a, b), each rows x cols x C, from the
/// (padded) NHWC `input`: one linalg.generic over (th, tw, c) that reads the
/// 16 values d_ij of a block once (input[0, 2 th + i, 2 tw + j, c]) and
/// writes the 16 results, B applied to the columns first
/// (t_ib = sum_j d_ij B^T[b][j]), then B^T to the rows
/// (V_ab = sum_i B^T[a][i] t_ib): 32 additions where 16 kernels, one per
/// (a, b), each read 4 shifted views of the input. ResNet-18's 208 input
/// transform kernels took 1.2 ms of a 21 ms call on one thread.
SmallVector<Value> inputTransform(OpBuilder &b, Location loc, Value input, int64_t rows, int64_t cols,
                                  int64_t channels) {
  MLIRContext *context = b.getContext();
  AffineExpr th, tw, c;
  bindDims(context, th, tw, c);
  SmallVector<Value> inputs(16, input), inits;
  SmallVector<AffineMap> maps;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      maps.push_back(AffineMap::get(3, 0, {b.getAffineConstantExpr(0), th * 2 + i, tw * 2 + j, c}, context));
  SmallVector<Type> types;
  for (int k = 0; k < 16; ++k) {
    Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{rows, cols, channels}, b.getF32Type());
    inits.push_back(empty);
    types.push_back(empty.getType());
    maps.push_back(b.getMultiDimIdentityMap(3));
  }
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, types, inputs, inits, maps, iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value columns[4][4];
        for (int i = 0; i < 4; ++i)
          for (int k = 0; k < 4; ++k) {
            SmallVector<std::pair<int, Value>> terms;
            for (int j = 0; j < 4; ++j)
              if (kBT[k][j])
                terms.push_back({kBT[k][j], args[i * 4 + j]});
            columns[i][k] = signedSum(nb, nl, terms);
          }
        SmallVector<Value> results;
        for (int a = 0; a < 4; ++a)
          for (int k = 0; k < 4; ++k) {
            SmallVector<std::pair<int, Value>> terms;
            for (int i = 0; i < 4; ++i)
              if (kBT[a][i])
                terms.push_back({kBT[a][i], columns[i][k]});
            results.push_back(signedSum(nb, nl, terms));
          }
        linalg::YieldOp::create(nb, nl, results);
      });
  return SmallVector<Value>(generic.getResults());
}

/// The elementwise op that is the convolution's only user and that the
/// output transform can compute too (a batch norm, an activation): all loops
/// parallel, its result in the convolution's shape and layout, the
/// convolution read once as an input through the identity, its other
/// operands per output channel.
/// Null when there is none, or when the output is cut (an odd size: the
/// epilogue's other operands would be read past their end).
linalg::GenericOp fusableEpilogue(linalg::Conv2DNhwcHwcfOp conv, bool cut) {
  Value result = conv.getResult(0);
  if (cut || !result.hasOneUse())
    return nullptr;
  auto epilogue = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
  if (!epilogue || epilogue.getNumDpsInits() != 1 || epilogue.getNumReductionLoops() != 0 ||
      epilogue.getNumLoops() != 4)
    return nullptr;
  auto epilogueType = dyn_cast<RankedTensorType>(epilogue.getResult(0).getType());
  if (!epilogueType || epilogueType.getShape() != cast<RankedTensorType>(result.getType()).getShape() ||
      !epilogue.getIndexingMapsArray().back().isIdentity() ||
      epilogue.payloadUsesValueFromOperand(epilogue.getDpsInitOperand(0)) ||
      llvm::any_of(epilogue.getBody()->getOperations(), [](Operation &op) { return isa<linalg::IndexOp>(op); }))
    return nullptr;
  // The other operands per channel (a batch norm's scale and shift): one
  // that varies along the image (a residual) would be read at the output
  // transform's strided positions, which vectorize badly (a ResNet-18 layer's
  // output transform took 3.1 ms with its residual, 0.53 ms without).
  int uses = 0;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (input->get() != result) {
      for (unsigned imageDim : {0, 1, 2})
        if (map.isFunctionOfDim(imageDim))
          return nullptr;
      continue;
    }
    if (!map.isIdentity())
      return nullptr;
    ++uses;
  }
  return uses == 1 ? epilogue : nullptr;
}

/// Y[2 th + p, 2 tw + q] = (A^T M A)_pq over the rows x cols x F products
/// M_ab, written in place by one generic over (th, p, tw, q, f): the
/// coefficients of A^T's rows p and q are selected by p and q (uniform within
/// a vector along f). With an `epilogue` (fusableEpilogue), its body follows,
/// its other operands read at the output's (0, 2 th + p, 2 tw + q, f), and
/// the result is the epilogue's.
Value outputTransform(OpBuilder &b, Location loc, Value (&products)[4][4], int64_t rows, int64_t cols,
                      int64_t filters, Value convolution, linalg::GenericOp epilogue) {
  MLIRContext *context = b.getContext();
  AffineExpr th, p, tw, q, f;
  bindDims(context, th, p, tw, q, f);
  SmallVector<Value> inputs;
  for (auto &row : products)
    inputs.append(std::begin(row), std::end(row));
  SmallVector<AffineMap> maps(inputs.size(), AffineMap::get(5, 0, {th, tw, f}, context));
  Type resultType = b.getF32Type();
  if (epilogue) {
    // The epilogue's (n, h, w, f) at the output's (th, p, tw, q, f).
    AffineMap outputPosition =
        AffineMap::get(5, 0, {b.getAffineConstantExpr(0), th * 2 + p, tw * 2 + q, f}, context);
    for (OpOperand *input : epilogue.getDpsInputOperands()) {
      if (input->get() == convolution)
        continue;
      inputs.push_back(input->get());
      maps.push_back(epilogue.getMatchingIndexingMap(input).compose(outputPosition));
    }
    resultType = getElementTypeOrSelf(epilogue.getResult(0).getType());
  }
  maps.push_back(b.getMultiDimIdentityMap(5));
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{rows, 2, cols, 2, filters}, resultType);
  SmallVector<utils::IteratorType> iterators(5, utils::IteratorType::parallel);
  auto body = [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value zeroIndex = arith::ConstantIndexOp::create(nb, nl, 0);
    auto second = [&](unsigned dim) {
      Value index = linalg::IndexOp::create(nb, nl, dim);
      return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, index, zeroIndex).getResult();
    };
    Value pSecond = second(1), qSecond = second(3);
    auto coefficient = [&](Value isSecond, int k) {
      Value first = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(float(kAT[0][k])));
      Value other = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(float(kAT[1][k])));
      return arith::SelectOp::create(nb, nl, isSecond, other, first).getResult();
    };
    // sum_a cp_a * (sum_b cq_b * M_ab), as multiply-adds.
    auto accumulate = [&](Value sum, Value c, Value x) {
      return sum ? math::FmaOp::create(nb, nl, c, x, sum).getResult() : arith::MulFOp::create(nb, nl, c, x).getResult();
    };
    Value sum;
    for (int a = 0; a < 4; ++a) {
      Value row;
      for (int k = 0; k < 4; ++k)
        row = accumulate(row, coefficient(qSecond, k), args[a * 4 + k]);
      sum = accumulate(sum, coefficient(pSecond, a), row);
    }
    if (!epilogue) {
      linalg::YieldOp::create(nb, nl, sum);
      return;
    }
    IRMapping mapping;
    Block *body = epilogue.getBody();
    unsigned next = 16;
    for (OpOperand *input : epilogue.getDpsInputOperands())
      mapping.map(body->getArgument(input->getOperandNumber()),
                  input->get() == convolution ? sum : args[next++]);
    for (Operation &op : body->without_terminator())
      nb.clone(op, mapping);
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    linalg::YieldOp::create(nb, nl, mapping.lookupOrDefault(yield.getValues()[0]));
  };
  return linalg::GenericOp::create(b, loc, empty.getType(), inputs, empty, maps, iterators, body).getResult(0);
}

struct WinogradConvolution : OpRewritePattern<linalg::Conv2DNhwcHwcfOp> {
  WinogradConvolution(MLIRContext *context, int64_t minBlocks)
      : OpRewritePattern(context), minBlocks(minBlocks) {}
  int64_t minBlocks;

  LogicalResult matchAndRewrite(linalg::Conv2DNhwcHwcfOp op, PatternRewriter &rewriter) const override {
    if (!allOnes(op.getStrides()) || !allOnes(op.getDilations()))
      return rewriter.notifyMatchFailure(op, "strided or dilated");
    Value input = op.getInputs()[0], filter = op.getInputs()[1], init = op.getOutputs()[0];
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    auto filterType = dyn_cast<RankedTensorType>(filter.getType());
    auto outputType = dyn_cast<RankedTensorType>(init.getType());
    if (!inputType || !filterType || !outputType || !inputType.hasStaticShape() ||
        !filterType.hasStaticShape() || !outputType.hasStaticShape() || !filterType.getElementType().isF32() ||
        !inputType.getElementType().isF32() || !outputType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not static f32");
    ArrayRef<int64_t> in = inputType.getShape(), w = filterType.getShape(), out = outputType.getShape();
    const int64_t channels = w[2], filters = w[3];
    if (in[0] != 1 || w[0] != 3 || w[1] != 3 || in[1] != out[1] + 2 || in[2] != out[2] + 2 ||
        channels < kMinChannels || filters < kMinChannels)
      return rewriter.notifyMatchFailure(op, "not a 3 x 3 convolution of batch 1");
    const int64_t rows = (out[1] + 1) / 2, cols = (out[2] + 1) / 2, blocks = rows * cols;
    if (blocks < minBlocks)
      return rewriter.notifyMatchFailure(op, "too few output blocks");
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return rewriter.notifyMatchFailure(op, "the output does not start as zeros");
    std::optional<ConstantBytes> bytes = constantBytes(filter);
    if (!bytes || bytes->splat)
      return rewriter.notifyMatchFailure(op, "the filter is not a constant");

    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    // An epilogue computed by the output transform: everything goes where
    // it is, after whatever its other operands need.
    linalg::GenericOp epilogue = fusableEpilogue(op, out[1] % 2 || out[2] % 2);
    if (epilogue)
      rewriter.setInsertionPoint(epilogue);
    // An odd output height or width is computed one larger, from the input
    // padded with zeros below or to the right, and cut back at the end
    // (ResNet-18's 7 x 7 images: 16 blocks of 2 x 2 for 49 outputs).
    Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f));
    if (out[1] % 2 || out[2] % 2) {
      SmallVector<OpFoldResult> low(4, rewriter.getIndexAttr(0)), high(4, rewriter.getIndexAttr(0));
      high[1] = rewriter.getIndexAttr(out[1] % 2);
      high[2] = rewriter.getIndexAttr(out[2] % 2);
      auto paddedType = RankedTensorType::get({1, in[1] + out[1] % 2, in[2] + out[2] % 2, channels}, f32);
      input = tensor::PadOp::create(rewriter, loc, paddedType, input, low, high, zero);
    }
    // V_ab, each blocks x C, from one kernel; the 16 matmuls after it are
    // independent dispatches in a row, which the runtime may run at once.
    SmallVector<Value> transforms = inputTransform(rewriter, loc, input, rows, cols, channels);
    Value transformedInput[4][4];
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        transformedInput[a][b] = tensor::CollapseShapeOp::create(
            rewriter, loc, RankedTensorType::get({blocks, channels}, f32), transforms[a * 4 + b],
            ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    // M_ab = V_ab * U_ab, each blocks x F and seen as rows x cols x F.
    Value products[4][4];
    std::vector<double> transformed(static_cast<size_t>(channels * filters));
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        // U_ab = sum_ij G[a][i] g[i][j] G[b][j].
        std::fill(transformed.begin(), transformed.end(), 0.0);
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            for (int64_t k = 0; k < channels * filters; ++k)
              transformed[k] += kG[a][i] * kG[b][j] * floatElement(*bytes, f32, (i * 3 + j) * channels * filters + k);
        std::vector<float> rounded(transformed.begin(), transformed.end());
        auto weightType = RankedTensorType::get({channels, filters}, f32);
        Value weights = arith::ConstantOp::create(
            rewriter, loc, DenseElementsAttr::get(weightType, ArrayRef<float>(rounded)));
        Value productInit = linalg::FillOp::create(
                                rewriter, loc, zero,
                                tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{blocks, filters}, f32)
                                    .getResult())
                                .getResult(0);
        Value product =
            linalg::MatmulOp::create(rewriter, loc, ValueRange{transformedInput[a][b], weights}, ValueRange{productInit}).getResult(0);
        products[a][b] = tensor::ExpandShapeOp::create(
            rewriter, loc, RankedTensorType::get({rows, cols, filters}, f32), product,
            ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      }
    }

    Value result = outputTransform(rewriter, loc, products, rows, cols, filters, op.getResult(0), epilogue);
    Type element = getElementTypeOrSelf(result.getType());
    Value image = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({2 * rows, 2 * cols, filters}, element), result,
        ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}, {4}});
    if (epilogue) {
      // The epilogue's result is computed here; the convolution had no other user.
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(epilogue, epilogue.getResult(0).getType(), image,
                                                         ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
      rewriter.eraseOp(op);
      return success();
    }
    if (out[1] % 2 || out[2] % 2)
      image = tensor::ExtractSliceOp::create(
          rewriter, loc, RankedTensorType::get({out[1], out[2], filters}, f32), image,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0), rewriter.getIndexAttr(0), rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(out[1]), rewriter.getIndexAttr(out[2]),
                                 rewriter.getIndexAttr(filters)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1), rewriter.getIndexAttr(1), rewriter.getIndexAttr(1)});
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, outputType, image,
                                                       ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    return success();
  }
};

struct WinogradPass : PassWrapper<WinogradPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(WinogradPass)

  WinogradPass() = default;
  WinogradPass(const WinogradPass &other) : PassWrapper(other) {}

  Option<int64_t> minBlocks{*this, "min-blocks",
                            llvm::cl::desc("The fewest 2 x 2 blocks of output a rewritten "
                                           "convolution has"),
                            llvm::cl::init(kDefaultMinBlocks)};

  StringRef getArgument() const override { return "strata-winograd"; }
  StringRef getDescription() const override {
    return "Computes 3x3 stride-1 convolutions with constant filters as Winograd F(2x2, 3x3)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect, math::MathDialect, tensor::TensorDialect>();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<WinogradConvolution>(&getContext(), minBlocks);
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createWinogradPass() { return std::make_unique<WinogradPass>(); }

} // namespace strata::flow
