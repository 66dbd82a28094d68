//===- SelectTileSizes.cpp - Workgroup and vector tiles per linalg op ----===//
//
// The choices are deliberately simple and written down in Passes.td: one
// vector register along the contiguous dimension for elementwise ops and
// reductions, a register-blocked tile for contractions, and a workgroup tile
// that gives each workgroup a sizeable share of the largest op.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUSELECTTILESIZESPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// A product of extents, dynamic ones counted as `dynamicExtent`: the sizes
/// only balance work, so a guess is as good as it gets.
int64_t iterationCount(ArrayRef<int64_t> extents, int64_t dynamicExtent) {
  int64_t product = 1;
  for (int64_t extent : extents)
    product *= ShapedType::isDynamic(extent) ? dynamicExtent
                                             : std::max<int64_t>(1, extent);
  return product;
}

/// Rows per workgroup of a matmul blocked for the caches; kLargeBlockedRows
/// when the matmul has at least 4 times as many (static), kHugeBlockedRows
/// at least 4 times those: each workgroup packs every block of the
/// right-hand side it reads (TileAndVectorize), and twice the rows halve the
/// copies (SGEMM 2048: 217 to 235 GFLOP/s with 256 rows, 1024: 234 to 242;
/// with 512 rows and blocks 512 deep, 2048 a further 103 to 96 ms), while
/// smaller matmuls keep at least 4 workgroups for the threads (SGEMM 1024
/// in 2 workgroups of 512 rows was 7 % faster on 2 cores, but would leave
/// a third and fourth idle).
constexpr int64_t kBlockedRows = 128;
constexpr int64_t kLargeBlockedRows = 256;
constexpr int64_t kHugeBlockedRows = 512;

struct CPUSelectTileSizesPass
    : impl::CPUSelectTileSizesPassBase<CPUSelectTileSizesPass> {
  using Base::Base;

  /// The op's vector tile: `preferredVectorTile`, clamped to the extents
  /// of static loops, so that a loop shorter than a register is one exact
  /// tile rather than a masked one.
  /// A tile of several whole registers along a loop longer than one
  /// register but shorter than the tile keeps whole registers (24 columns:
  /// a tile of 16, then a peeled one of 8), since a vector of 24 lanes
  /// compiles to shuffles (a 3136 x 144 x 24 matmul took 20 times as long).
  SmallVector<int64_t> vectorTile(linalg::LinalgOp op) const {
    SmallVector<int64_t> tile = preferredVectorTile(op);
    int64_t lanes = op.getNumDpsInits() == 0
                        ? 1
                        : vectorLanes(op.getDpsInitOperand(0)->get().getType(),
                                      vectorBits);
    for (auto [size, extent] : llvm::zip(tile, op.getStaticLoopRanges())) {
      if (size == 0 || ShapedType::isDynamic(extent) || size <= extent)
        continue;
      if (lanes > 1 && size % lanes == 0 && extent > lanes)
        size = extent / lanes * lanes;
      else
        size = std::max<int64_t>(1, extent);
    }
    return tile;
  }

  /// Rows of a register tile with `vectors` registers per row (a
  /// contraction's rows, a convolution's output columns): `matmul-rows` when
  /// given, else as many as the vector registers hold beside the `vectors`
  /// registers of the right-hand side and one broadcast, at most 8. With
  /// AVX-512's 32 registers 8 x 2 was the fastest tile; with the 16 of AVX2
  /// an 8 x 2 tile spills its accumulators in the innermost loop (SGEMM 1024
  /// at a third of OpenBLAS), where 6 x 2 keeps them all in registers.
  static constexpr int64_t kMaxTileRows = 8;
  /// The most row tiles of a matmul whose row tiles are balanced
  /// (preferredVectorTile): those that split by columns (prefersColumns).
  static constexpr int64_t kFewTiles = 4;
  int64_t tileRows(int64_t vectors) const {
    vectors = std::max<int64_t>(1, vectors);
    return rowsFitting(vectors, vectors + 1);
  }

  /// `matmul-rows` when given, else how many rows of `perRow` registers the
  /// vector registers hold beside `reserved` ones, 1 to kMaxTileRows.
  int64_t rowsFitting(int64_t perRow, int64_t reserved) const {
    if (matmulRows > 0)
      return matmulRows;
    return std::clamp<int64_t>((vectorRegisters - reserved) / perRow, 1,
                               kMaxTileRows);
  }

  /// Output columns of a convolution's register tile with `vectors`
  /// registers of channels per column: `matmul-rows` when given, else
  /// vector-registers / (vectors + 1), at most 8. Besides its accumulators
  /// each column keeps about one register of input live (a conv_2d's
  /// broadcast value, reused across the filter's columns; a depthwise one's
  /// input vector). With AVX2's 16 registers ResNet-18 ran in 108 ms with 6
  /// columns of 2 registers, 65 with 4, 59 with 5 (trace of one process,
  /// interleaved); with 32 registers it stays 8.
  int64_t convolutionColumns(int64_t vectors) const {
    return rowsFitting(std::max<int64_t>(1, vectors) + 1, 0);
  }

  /// The output columns of `op`'s convolution tile (loop 2: n, oh, ow, ...):
  /// convolutionColumns, or fewer so that the tiles of a static row are as
  /// even as the same number of tiles can be. A short last tile has too few
  /// accumulators to hide the FMA latency (each takes one FMA per filter
  /// column in turn): 7 columns in tiles of 5 and 2 take 15 + 12 cycles per
  /// step of a Zen 3 core (llvm-mca), in tiles of 4 and 3 12 + 12, and
  /// ResNet-18's 3 x 3 x 512 x 512 layers on 7 x 7 images went from 4.0 to
  /// 3.75 ms. Rows of 14, 28, 56 and 112 keep 5.
  ///
  /// A strided convolution with several registers of channels keeps as many
  /// registers of the filter beside its columns: its input values are not
  /// reused across the filter's columns as a stride-1 one's are, so more of
  /// them are live at once, and with AVX2's 16 registers a tile of 5 columns
  /// spilled an accumulator to the stack in the innermost loop (ResNet-18's
  /// stride-2 3 x 3 layers ran at 60 to 72 GFLOP/s, the others at 92).
  int64_t convolutionTileColumns(linalg::LinalgOp op, int64_t vectors) const {
    int64_t columns = convolutionColumns(vectors);
    FailureOr<linalg::ConvolutionDimensions> dims =
        linalg::inferConvolutionDims(op);
    if (vectors > 1 && succeeded(dims) && dims->strides.size() == 2 &&
        dims->strides[1] > 1)
      columns = rowsFitting(vectors + 1, vectors);
    int64_t width = op.getStaticLoopRanges()[2];
    if (ShapedType::isDynamic(width) || width <= columns)
      return columns;
    int64_t tiles = (width + columns - 1) / columns;
    return (width + tiles - 1) / tiles;
  }

  /// The tile that fills the registers best, regardless of the extents.
  SmallVector<int64_t> preferredVectorTile(linalg::LinalgOp op) const {
    SmallVector<int64_t> tile(op.getNumLoops(), 1);
    if (tile.empty())
      return tile;
    // 2-D NHWC convolutions and poolings: one output row and one filter row
    // (oh = kh = 1), so that a tile is a 1-D convolution, which the
    // vectorizer handles (TileAndVectorize rewrites it as one); up to 8
    // output columns (convolutionColumns) and two registers of channels (one for poolings and
    // depthwise ones); the filter width is left whole (0: not tiled) and the
    // input channels go one at a time, like a matmul's k, so each step is
    // outer products (FMAs) into accumulators that stay in registers.
    auto outLanes = [&] {
      return vectorLanes(op.getDpsInitOperand(0)->get().getType(), vectorBits);
    };
    // Two registers of output channels (32 f32 lanes), so that each input
    // value broadcast feeds two FMAs and the 8 x 2 accumulators hide the
    // FMA latency: with one register, a step of 8 FMAs took 9 loads (one
    // filter register, 8 broadcasts), and ResNet-18's 28 x 28 layers ran at
    // 190 GFLOP/s where they now run at 245. Fewer channels than that are
    // clamped to their extent (vectorTile).
    constexpr int64_t kChannelRegisters = 2;
    // The same with a packed filter (strata-pack-weights): the registers
    // of channels within one strip.
    if (matchPackedConvolution(op)) {
      int64_t channels = kChannelRegisters * outLanes();
      int64_t strip = op.getStaticLoopRanges()[4];
      if (!ShapedType::isDynamic(strip))
        channels = std::min(channels, strip);
      return {1, 1, convolutionTileColumns(op, kChannelRegisters), 1, channels, 1, 0, 1}; // n oh ow f1 f0 kh kw c
    }
    if (isa<linalg::Conv2DNhwcHwcfOp>(op))
      return {1, 1, convolutionTileColumns(op, kChannelRegisters), kChannelRegisters * outLanes(), 1,
              0, 1}; // n oh ow f kh kw c
    if (isa<linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp,
            linalg::PoolingNhwcMinOp, linalg::PoolingNhwcSumOp>(op))
      return {1, 1, convolutionTileColumns(op, 1), outLanes(), 1, 0}; // n oh ow c kh kw
    // Contractions: an m x n register tile of accumulators, one k step at a
    // time; outer (batch, extra m/n/k) loops one at a time.
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (succeeded(dims) && !dims->m.empty() && !dims->n.empty() &&
        !dims->k.empty()) {
      int64_t lanes =
          vectorLanes(op.getDpsInitOperand(0)->get().getType(), vectorBits);
      int64_t rows = tileRows(matmulVectors), vectors = matmulVectors;
      // Fewer rows than a tile (a matrix-vector product, batch 1): the
      // accumulators' chains would be too few to hide the FMA latency, and
      // each k step would read a short piece of a weight row. Widen along n
      // instead, up to 4 registers, which keeps 4 independent chains and
      // reads 256 contiguous bytes of each row.
      int64_t m = op.getStaticLoopRanges()[dims->m.back()];
      if (!ShapedType::isDynamic(m) && m < rows)
        vectors = std::max<int64_t>(
            vectors, std::min<int64_t>(4, rows * vectors / (2 * m)));
      // A few more rows than a tile (at most kFewTiles tiles: a kernel split
      // by columns, each workgroup all of them): as few row tiles as the
      // registers hold, of about equal heights. With tiles of `rows` the last
      // one is short, and a tile of r rows keeps only 2r accumulator chains
      // (r * vectors) to hide the FMA latency, so a last tile of 1 row took
      // about as long as one of 4 (ViT's 17-token matmuls in 9 + 8 rows
      // instead of 8 + 8 + 1: its calls took 0.93 of the time); fewer,
      // taller tiles also read each row of the weights fewer times (the
      // sample MLP at batch 32 in 11 + 11 + 10 rows instead of 4 x 8: 0.97).
      if (matmulRows <= 0 && !ShapedType::isDynamic(m) && m > rows &&
          m <= kFewTiles * rows) {
        int64_t most = std::max<int64_t>(
            rows, (vectorRegisters - vectors - 1) / vectors);
        int64_t tiles = (m + most - 1) / most;
        rows = (m + tiles - 1) / tiles;
      }
      tile[dims->m.back()] = rows;
      tile[dims->n.back()] = vectors * lanes;
      return tile;
    }
    // Everything else: one register along the loop that walks the innermost
    // dimension of the largest operand, so loads and stores are contiguous.
    OpOperand *largest = nullptr;
    int64_t largestRank = -1;
    for (OpOperand &operand : op->getOpOperands()) {
      int64_t rank = op.getMatchingIndexingMap(&operand).getNumResults();
      if (rank > largestRank) {
        largest = &operand;
        largestRank = rank;
      }
    }
    unsigned loop = tile.size() - 1;
    if (largestRank > 0) {
      AffineMap map = op.getMatchingIndexingMap(largest);
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResults().back()))
        loop = dim.getPosition();
    }
    tile[loop] = vectorLanes(largest->get().getType(), vectorBits);
    // A permutation whose output's innermost dimension is short (an RGB
    // image from NCHW to NHWC: 3 channels) takes that dimension whole as
    // well: its tile reads one register along each of the few input rows
    // and writes them interleaved as one contiguous piece (a transpose in
    // registers, TileAndVectorize), where one register along the input
    // alone wrote element by element (MobileNetV2's input: 56 to 42 us).
    if (std::optional<unsigned> inner = shortPermutedOutput(op, loop))
      tile[*inner] = op.getStaticLoopRanges()[*inner];
    return tile;
  }

  /// The loop along the innermost output dimension of a permutation copy
  /// (isPermutationCopy), when it is not `inputLoop` and its static extent is
  /// at most kMaxPermutedExtent.
  static constexpr int64_t kMaxPermutedExtent = 4;
  static std::optional<unsigned> shortPermutedOutput(linalg::LinalgOp op, unsigned inputLoop) {
    if (!isPermutationCopy(op))
      return std::nullopt;
    unsigned inner = op.getNumLoops() - 1;
    int64_t extent = op.getStaticLoopRanges()[inner];
    if (inner == inputLoop || ShapedType::isDynamic(extent) || extent > kMaxPermutedExtent)
      return std::nullopt;
    return inner;
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });

    // Ops the user configured keep their sizes; the rest get a vector tile
    // now and a workgroup tile below.
    llvm::DenseMap<Operation *, TileSizes> sizes;
    int64_t userWorkgroupTile = 0;
    llvm::DenseMap<Operation *, unsigned> userLoop;
    SmallVector<linalg::LinalgOp> unconfigured;
    for (linalg::LinalgOp op : ops) {
      FailureOr<std::optional<TileSizes>> given = readTileSizes(op);
      if (failed(given))
        return signalPassFailure();
      if (*given) {
        for (auto [loop, size] : llvm::enumerate((*given)->workgroup))
          if (size) {
            userWorkgroupTile = size;
            userLoop[op] = loop;
          }
        continue;
      }
      sizes[op] = {SmallVector<int64_t>(op.getNumLoops(), 0), vectorTile(op)};
      unconfigured.push_back(op);
    }

    // A matmul with few rows, or a convolution with a large filter, splits
    // along its columns (output channels) when the rest of the kernel
    // allows: each workgroup then reads its own slice of the weights once
    // and keeps the few rows in cache, where a split by rows would make every
    // workgroup stream all of the weights (a BERT layer at sequence 16:
    // twice 2.4 MB per matmul; ResNet-18's last convolutions: 9.4 MB of
    // filter for each of 7 rows).
    unsigned columns = isKernel(func) && userLoop.empty() ? prefersColumns(ops) : 0;
    if (columns) {
      Builder b(func.getContext());
      func->setAttr(kSplitColumnsAttr, columns == 1
                                           ? Attribute(b.getUnitAttr())
                                           : b.getI64IntegerAttr(columns));
      if (failed(checkDistributable(
              func,
              [&](linalg::LinalgOp op) {
                return defaultDistributedLoop(op, columns);
              },
              /*emitErrors=*/false))) {
        columns = 0;
        func->removeAttr(kSplitColumnsAttr);
      }
    }
    auto distributedLoop = [&](linalg::LinalgOp op) -> std::optional<unsigned> {
      if (!sizes.contains(op)) {
        auto it = userLoop.find(op);
        if (it == userLoop.end())
          return std::nullopt;
        return it->second;
      }
      return defaultDistributedLoop(op, columns);
    };
    // Helpers are not dispatched: only kernels are split.
    bool split = isKernel(func) && !unconfigured.empty() &&
                 succeeded(checkDistributable(func, distributedLoop,
                                              /*emitErrors=*/false));
    if (split) {
      int64_t tile = userWorkgroupTile
                         ? userWorkgroupTile
                         : workgroupTile(ops, distributedLoop, sizes);
      GridTile grid = userWorkgroupTile || columns ? GridTile{} : gridTile(func, ops, tile);
      if (grid.columns)
        tile = grid.rows;
      for (linalg::LinalgOp op : unconfigured) {
        sizes[op].workgroup[*distributedLoop(op)] = tile;
        if (grid.columns)
          sizes[op].workgroup[*defaultDistributedLoop(op, /*columns=*/1)] = grid.columns;
      }
    }
    for (linalg::LinalgOp op : unconfigured)
      writeTileSizes(op, sizes[op]);
  }

  /// The op with the most iterations (the first of those), or null.
  linalg::LinalgOp rootOp(ArrayRef<linalg::LinalgOp> ops) const {
    linalg::LinalgOp root;
    int64_t rootIterations = -1;
    for (linalg::LinalgOp op : ops) {
      int64_t iterations =
          iterationCount(op.getStaticLoopRanges(), dynamicExtent);
      if (iterations > rootIterations) {
        root = op;
        rootIterations = iterations;
      }
    }
    return root;
  }

  /// How the kernel is split by columns (splitDimension), 0 when it is
  /// not: 1 when the op with the most iterations is a matmul (no batch
  /// loops) with at most 4 x 8 rows (4 tiles of matmul-rows when given), or at most kBlockedRows
  /// rows and enough work per row to be blocked for the caches, and at least
  /// 4 register tiles of columns, all static, or a 2-D NHWC convolution
  /// whose filter is over kLargeFilterBytes with at least 4 registers of
  /// output channels; 2 when it is such a matmul with packed weights
  /// (strata-pack-weights: m x n1 x n0 output, n1 the strips of columns),
  /// split along the strips.
  static constexpr int64_t kLargeFilterBytes = 1 << 20;
  unsigned prefersColumns(ArrayRef<linalg::LinalgOp> ops) const {
    linalg::LinalgOp root = rootOp(ops);
    if (!root)
      return 0;
    auto filter = [&] {
      return cast<ShapedType>(root.getDpsInputOperand(1)->get().getType());
    };
    auto largeFilter = [&] {
      return filter().hasStaticShape() &&
             filter().getNumElements() *
                     (filter().getElementTypeBitWidth() / 8) >
                 kLargeFilterBytes;
    };
    if (matchPackedConvolution(root))
      return largeFilter() ? 2 : 0;
    if (isa<linalg::Conv2DNhwcHwcfOp>(root)) {
      auto output = cast<ShapedType>(root.getDpsInitOperand(0)->get().getType());
      int64_t lanes = vectorLanes(output, vectorBits);
      return largeFilter() && output.hasStaticShape() &&
             output.getShape().back() >= 4 * lanes &&
             output.getShape().back() % lanes == 0;
    }
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(root);
    if (failed(dims) || !dims->batch.empty() || dims->m.size() != 1 ||
        dims->n.empty() || dims->n.size() > 2 || dims->k.empty())
      return 0;
    SmallVector<int64_t> ranges = root.getStaticLoopRanges();
    int64_t m = ranges[dims->m.front()], n = 1;
    for (unsigned loop : dims->n)
      n = ShapedType::isDynamic(ranges[loop]) || ShapedType::isDynamic(n)
              ? ShapedType::kDynamic
              : n * ranges[loop];
    int64_t lanes =
        vectorLanes(root.getDpsInitOperand(0)->get().getType(), vectorBits);
    if (ShapedType::isDynamic(m) || ShapedType::isDynamic(n) ||
        n < 4 * matmulVectors * lanes)
      return 0;
    unsigned columns = dims->n.size();
    if (m <= kFewTiles * (matmulRows > 0 ? matmulRows : kMaxTileRows))
      return columns;
    // A matmul blocked for the caches takes kBlockedRows rows per workgroup
    // (workgroupTile): with no more rows than that, a split by rows would
    // leave it one workgroup (an encoder layer's 128 x 256 x 1024 matmuls).
    int64_t k = iterationCount(
        llvm::map_to_vector(dims->k,
                            [&](unsigned loop) { return ranges[loop]; }),
        dynamicExtent);
    return m <= kBlockedRows && n * k >= 256 * 256 ? columns : 0;
  }

  /// A workgroup tile of rows and columns (gridTile), or none (zeros).
  struct GridTile {
    int64_t rows = 0, columns = 0;
  };
  static constexpr int64_t kGridColumns = 512;
  static constexpr int64_t kGridLeftBytes = 4 << 20;
  /// A large matmul's workgroups take tiles of rows and columns rather than
  /// of rows alone: as many workgroups, each with `factor` times the rows
  /// and 1/`factor` of the columns. Each workgroup packs every block of the
  /// right-hand side its columns read (TileAndVectorize's packBlock), so the
  /// matmul packs each block `factor` times less often. The factor is the
  /// count of row workgroups `tile` gives, so that each workgroup takes all
  /// the rows and packs its columns once (SGEMM 1024 with AVX2: four row
  /// workgroups of 258 rows each packed all of the right-hand side, 16 MiB
  /// of copies a call, about 7 % of its time), while the left-hand side is
  /// at most kGridLeftBytes; or 2 where that leaves too few columns (tiles
  /// of twice the rows and half the columns; SGEMM 1024 with AVX-512, calls
  /// of both alternated: 0.976 of the time on one thread, 0.962 on two,
  /// against tiles of rows). None (the kernel stays split by rows) unless
  /// the op with the most iterations is a plain linalg.matmul with static
  /// extents, at least two row tiles of at least kLargeBlockedRows, columns
  /// that split into `factor` pieces of whole cache blocks
  /// (kCacheBlockColumns; with a factor of 2, pieces at least kGridColumns
  /// wide), and every op writes an output of the matmul's shape that its
  /// columns can split.
  GridTile gridTile(func::FuncOp func, ArrayRef<linalg::LinalgOp> ops, int64_t tile) const {
    linalg::LinalgOp root = rootOp(ops);
    if (!root || !isa<linalg::MatmulOp>(root.getOperation()) || tile < kLargeBlockedRows ||
        root.getIndexingMapsArray() != linalg::MatmulOp::getDefaultIndexingMaps(func.getContext()))
      return {};
    auto output = cast<ShapedType>(root.getDpsInitOperand(0)->get().getType());
    if (!output.hasStaticShape())
      return {};
    int64_t rows = output.getDimSize(0), columns = output.getDimSize(1);
    const int64_t rowTiles = llvm::divideCeil(rows, tile);
    auto fits = [&](int64_t factor, int64_t least) {
      return factor >= 2 && columns % (factor * kCacheBlockColumns) == 0 &&
             columns / factor >= least;
    };
    // All the rows only while their left-hand side stays in a shared L3
    // between the workgroup's blocks of columns, each of which reads all of
    // it (SGEMM 2048 with AVX2 ran 7 % slower with its 16 MiB).
    auto lhs = cast<ShapedType>(root.getDpsInputOperand(0)->get().getType());
    const bool allRows =
        lhs.hasStaticShape() &&
        lhs.getNumElements() * lhs.getElementTypeBitWidth() / 8 <= kGridLeftBytes &&
        fits(rowTiles, kCacheBlockColumns);
    if (!allRows && (rows % (2 * tile) != 0 || !fits(2, kGridColumns)))
      return {};
    const int64_t factor = allRows ? rowTiles : 2;
    for (linalg::LinalgOp op : ops)
      if (op.getNumDpsInits() != 1 ||
          cast<ShapedType>(op.getDpsInitOperand(0)->get().getType()).getShape() != output.getShape())
        return {};
    // Each op's column loop exists and its tiles read only what they wrote.
    if (failed(checkDistributable(
            func, [](linalg::LinalgOp op) { return defaultDistributedLoop(op, /*columns=*/1); },
            /*emitErrors=*/false, /*splitColumns=*/1)))
      return {};
    // Workgroup tiles of two loops are whole: all the rows, or 2 x `tile`.
    return {allRows ? rows : 2 * tile, columns / factor};
  }

  /// What a transcendental function or a division in an op's body costs,
  /// in iterations of a simple elementwise op (an approximated exp is about
  /// 15 vector instructions, a division's throughput a fraction of an
  /// add's).
  static constexpr int64_t kExpensiveOpCost = 8;

  /// The rows of the distributed loop one workgroup gets: about
  /// `workgroupIterations` iterations of work (the ops' iterations, weighted
  /// by their outputs and expensive operations), no more rows than the
  /// longest op has, and a whole number of the root's
  /// vector tiles, so that its tiles are not split between workgroups.
  int64_t
  workgroupTile(ArrayRef<linalg::LinalgOp> ops,
                llvm::function_ref<std::optional<unsigned>(linalg::LinalgOp)>
                    distributedLoop,
                llvm::DenseMap<Operation *, TileSizes> &sizes) const {
    linalg::LinalgOp root = rootOp(ops);
    int64_t longest = 0;
    bool allStatic = true;
    for (linalg::LinalgOp op : ops) {
      int64_t extent = op.getStaticLoopRanges()[*distributedLoop(op)];
      if (ShapedType::isDynamic(extent))
        allStatic = false;
      else
        longest = std::max(longest, extent);
    }
    unsigned rootLoop = *distributedLoop(root);
    auto iterationsPerRow = [&](linalg::LinalgOp op) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      ranges.erase(ranges.begin() + *distributedLoop(op));
      return iterationCount(ranges, dynamicExtent);
    };
    // The work of a row: each op's iterations, counted once per output (a
    // Winograd input transform's 16 outputs are 16 times the work of an
    // elementwise op's one: in a 65536-iteration workgroup, its 28 x 28 x 64
    // blocks were one workgroup, which a second thread could not share) and
    // kExpensiveOpCost times more for each transcendental function or
    // division (a softmax's exponentials over 4 x 128 x 128 scores were one
    // workgroup of 90 us).
    int64_t perRow = 0;
    for (linalg::LinalgOp op : ops) {
      int64_t expensive = 0;
      op->walk([&](Operation *inner) {
        if (inner->getDialect() && inner->getDialect()->getNamespace() == "math")
          ++expensive;
        else if (isa<arith::DivFOp, arith::RemFOp>(inner))
          ++expensive;
      });
      perRow += iterationsPerRow(op) *
                (std::max<int64_t>(1, op.getNumDpsInits()) + kExpensiveOpCost * expensive);
    }
    int64_t tile =
        std::max<int64_t>(1, (workgroupIterations + perRow - 1) / perRow);
    // A matmul large enough to be blocked for the caches (TileAndVectorize)
    // takes at least kBlockedRows rows per workgroup, so that each block of
    // its right-hand side is read by that many rows once it is in L2.
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(root);
    if (succeeded(dims) && dims->m.size() == 1 &&
        dims->m.front() == rootLoop && iterationsPerRow(root) >= 256 * 256) {
      int64_t rows = root.getStaticLoopRanges()[rootLoop];
      int64_t blocked = kBlockedRows;
      for (int64_t larger : {kLargeBlockedRows, kHugeBlockedRows})
        if (!ShapedType::isDynamic(rows) && rows >= 4 * larger)
          blocked = larger;
      tile = std::max<int64_t>(tile, blocked);
    }
    if (allStatic)
      tile = std::min(tile, std::max<int64_t>(1, longest));
    int64_t multiple = 1;
    auto it = sizes.find(root);
    if (it != sizes.end())
      multiple = std::max<int64_t>(1, it->second.vector[rootLoop]);
    tile = (tile + multiple - 1) / multiple * multiple;
    // Rounding up must not take the tile past the extent: a tile that covers
    // the whole loop then has the loop's static size, where a larger one
    // would leave a dynamic, masked tile.
    if (allStatic)
      tile = std::min(tile, std::max<int64_t>(1, longest));
    // A few workgroups, an odd number of them: one more, where the vector
    // tiles allow, so that two threads (or four, from 3 to 4) get equal
    // shares. Three workgroups on two threads take two thirds of the time of
    // one instead of half (a Winograd output transform over 28 block rows:
    // 10 rows a workgroup).
    if (allStatic && tile < longest) {
      int64_t count = (longest + tile - 1) / tile;
      if (count % 2 && count < 8) {
        int64_t even = (longest + count) / (count + 1);
        even = std::max<int64_t>(multiple, even / multiple * multiple);
        if (((longest + even - 1) / even) % 2 == 0)
          tile = even;
      }
    }
    return tile;
  }
};

} // namespace
} // namespace strata::cpu
