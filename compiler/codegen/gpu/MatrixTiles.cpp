//===- MatrixTiles.cpp - Matmul kernels in tiles on the matrix cores ------===//
//
// strata-gpu-matrix-tiles (Passes.td). The lane layouts of the instructions,
// with l the lane and v the element of the lane's vector:
//
//   MFMA 16x16xK (K = 4: one f32 per lane; K = 16: vector<4xf16>), wave 64:
//     A[l % 16][(K / 4) * (l / 16) + v], B[(K / 4) * (l / 16) + v][l % 16],
//     C vector<4xf32>: C[4 * (l / 16) + v][l % 16]
//   WMMA 16x16x16 f16 on gfx11, wave 32 (lanes 16-31 repeat 0-15 for A, B):
//     A vector<16xf16>: A[l % 16][v], B: B[v][l % 16],
//     C vector<8xf32>: C[2 * v + l / 16][l % 16]
//   NVIDIA mma.sync m16n8k16 (f16 or bf16, f32 accumulators), warp 32, with
//   g = l / 4 and t = l % 4, each 32-bit register holding two elements
//   adjacent along K:
//     A registers 0-3: A[g][2t..], A[g + 8][2t..], A[g][2t + 8..],
//       A[g + 8][2t + 8..]; B registers 0-1: B[2t..][g], B[2t + 8..][g];
//     C f32 0-3: C[g][2t], C[g][2t + 1], C[g + 8][2t], C[g + 8][2t + 1]
//
// (AMD's CDNA and RDNA3 instruction-set references; no AMD GPU has run these
// kernels yet, see docs/codegen-gpu.md.)
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/gpu/KernelABI.h"
#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVEnums.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUMATRIXTILESPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

// The matrix-core and scalar kinds: 32x32 tiles of C, 64 invocations.
constexpr int64_t kTile = 32;
constexpr int64_t kInvocations = 64;
// The shared kind: tiles of 64 or 128 rows and columns, K in steps of 8
// staged in workgroup memory, 8x8 elements of C per invocation.
constexpr int64_t kSharedK = 8;
constexpr int64_t kSharedThreadTile = 8;
// The tensor-core kind (f16 and bf16 on NVIDIA): K in steps of 32 staged
// in workgroup memory, four warps of 32, each a quarter of the tile (eight
// for wide tiles of 128x256, each 64x64 in two rows of four).
constexpr int64_t kMmaK = 32;
constexpr int64_t kMmaInvocations = 128;
constexpr int64_t kMmaWideCols = 256;
// Words (two elements along K) of a staged row: 16 of data, 4 of padding,
// so that the eight rows a fragment load touches fall in distinct banks.
constexpr int64_t kMmaRowWords = kMmaK / 2 + 4;
// Static workgroup memory a CUDA kernel may declare (3 cp.async buffers of
// a 128x128 tile's A and B fill it); more is dynamic shared memory.
constexpr int64_t kStaticWorkgroupMemory = 48 * 1024;

// Matmuls of few rows (a static M of at most kFewRows, with every kind, or
// of kFewRowsCuda with CUDA's): 32 columns per workgroup, K split over its
// warps of 32 (halves of a wave of 64 on CDNA). Up to 32 rows the kernel
// beats CUDA's 64x64 tiles staged in workgroup memory (the batch-32 MLP on
// an H200: 0.152 to 0.103 ms); it has not run on another GPU at 32 rows.
constexpr int64_t kFewRows = 16;
constexpr int64_t kFewRowsCuda = 32;
constexpr int64_t kFewRowsColumns = 32;
constexpr int64_t kFewRowsInvocations = 256;
constexpr int64_t kFewRowsUnroll = 4;

// Tiles of C that fill a large GPU (an H100 has 132 multiprocessors).
constexpr int64_t kEnoughTiles = 128;

/// The tile of C one workgroup computes at a time, and its invocations.
struct TileShape {
  int64_t rows = kTile, cols = kTile, invocations = kInvocations;
};

/// A 2-D NHWC convolution as the matmul it is (implicit GEMM): row m of A
/// is output pixel (n, oh, ow) = m in row-major order, column k is filter
/// tap (kh, kw, c) = k likewise, so A[m, k] = input[n, oh * sh + kh * dh,
/// ow * sw + kw * dw, c], B is the HWCF filter viewed as (KH * KW * C) x F
/// and C the output as (N * OH * OW) x F. A is read in place, never
/// copied out.
struct ConvGeometry {
  int64_t outH = 0, outW = 0, kW = 0, channels = 0;
  int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
};

/// A kernel the pass rewrites: C (+)= A * B, then elementwise ops on C.
struct MatmulKernel {
  linalg::FillOp fill;  // null: C's values accumulate
  // C's values copied from a binding before they accumulate (a bias
  // broadcast by another kernel): the sums start from that binding's.
  linalg::CopyOp copy;
  linalg::MatmulOp matmul;
  linalg::Conv2DNhwcHwcfOp conv;  // instead of the matmul
  ConvGeometry geometry;
  SmallVector<linalg::GenericOp> epilogue;
  // For a convolution: a its input, b its filter, c its output (their
  // matrix views are made when the kernel is written).
  Value a, b, c;
  // M when static (N * OH * OW for a convolution), else dynamic.
  int64_t m = ShapedType::kDynamic;
  int64_t n = 0, k = 0;
  // The K loop's extent: K, or for the `shared` FMA tiles K rounded up to
  // a step of 8, A's and B's elements past K read as zeros (a ResNet's first
  // layer: 7 * 7 * 3 = 147).
  int64_t kSteps = 0;
  bool f16 = false;  // A and B are f16 (else f32, or bf16 for `shared`)
  // `mma` with f16 or bf16 operands: the tensor cores (else `shared`).
  bool tensorCores = false;
  // A static M of at most kFewRows (kFewRowsCuda with `mma`): K split over
  // the workgroup's warps (fewRowsBody).
  bool fewRows = false;
  TileShape shape;
};

bool isElementwiseOnC(linalg::GenericOp generic, Value c) {
  const unsigned rank = cast<MemRefType>(c.getType()).getRank();
  if (generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != c ||
      generic.getNumLoops() != rank ||
      generic.getNumParallelLoops() != rank)
    return false;
  if (!generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity())
    return false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return false;
    // C is read where it is written; other inputs are bindings the kernel
    // only reads.
    if (input->get() == c ? !map.isIdentity()
                          : !isa<MemRefType>(input->get().getType()))
      return false;
  }
  // Scalar ops only: no nested regions, no memory.
  for (Operation &op : generic.getBody()->without_terminator())
    if (op.getNumRegions() || !isMemoryEffectFree(&op) ||
        isa<linalg::IndexOp>(op))
      return false;
  return true;
}

/// The workgroup-memory tile for an M x N result: 128 x 128 where that
/// leaves enough tiles to fill a GPU, else halved (rows first); 64 columns
/// where N is not a multiple of 128 (the last tile's columns past N
/// masked). None for an N under 64 or a static M under 32, which the
/// general distribution serves better.
std::optional<TileShape> sharedTileShape(int64_t m, int64_t n) {
  if (n < 64 || (!ShapedType::isDynamic(m) && m < 32))
    return std::nullopt;
  TileShape shape;
  shape.rows = 128;
  shape.cols = n % 128 == 0 ? 128 : 64;
  auto tiles = [&] {
    return ShapedType::isDynamic(m)
               ? std::numeric_limits<int64_t>::max()
               : (m + shape.rows - 1) / shape.rows *
                     ((n + shape.cols - 1) / shape.cols);
  };
  if (tiles() < kEnoughTiles)
    shape.rows = 64;
  if (tiles() < kEnoughTiles)
    shape.cols = 64;
  shape.invocations = shape.rows * shape.cols /
                      (kSharedThreadTile * kSharedThreadTile);
  return shape;
}

/// A memref whose elements are contiguous in row-major order.
bool isContiguous(Value value) {
  auto type = cast<MemRefType>(value.getType());
  return type.getLayout().isIdentity();
}

/// The convolution's operands and geometry, when it is one the tiles can
/// read in place: static except the batch, contiguous operands.
bool matchConvolution(MatmulKernel &match) {
  linalg::Conv2DNhwcHwcfOp conv = match.conv;
  match.a = conv.getDpsInputs()[0];
  match.b = conv.getDpsInputs()[1];
  match.c = conv.getDpsInits()[0];
  auto input = cast<MemRefType>(match.a.getType());
  auto filter = cast<MemRefType>(match.b.getType());
  auto output = cast<MemRefType>(match.c.getType());
  if (!isContiguous(match.a) || !isContiguous(match.b) ||
      !isContiguous(match.c) || !filter.hasStaticShape())
    return false;
  for (int64_t d = 1; d < 4; ++d)
    if (input.isDynamicDim(d) || output.isDynamicDim(d))
      return false;
  ConvGeometry &g = match.geometry;
  g.outH = output.getDimSize(1);
  g.outW = output.getDimSize(2);
  g.kW = filter.getDimSize(1);
  g.channels = filter.getDimSize(2);
  auto strides = conv.getStrides().getValues<int64_t>();
  auto dilations = conv.getDilations().getValues<int64_t>();
  g.strideH = strides[0];
  g.strideW = strides[1];
  g.dilationH = dilations[0];
  g.dilationW = dilations[1];
  match.n = filter.getDimSize(3);
  match.k = filter.getDimSize(0) * filter.getDimSize(1) * filter.getDimSize(2);
  match.m = output.isDynamicDim(0)
                ? ShapedType::kDynamic
                : output.getDimSize(0) * g.outH * g.outW;
  return g.outH > 0 && g.outW > 0;
}

/// The kinds of NVIDIA's tensor cores: `mma` (mma.sync, sm_80 and later) and
/// `wgmma` (sm_90a's warpgroup instructions where its tiles apply, mma.sync
/// elsewhere).
bool nvidiaKind(StringRef kind) { return kind == "mma" || kind == "wgmma"; }

/// Whether a memref has static strides, its rows contiguous: the
/// tensor-core tiles copy such operands 16 bytes at a time by `cp.async`.
bool asyncCopyable(Value memref) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(cast<MemRefType>(memref.getType()).getStridesAndOffset(strides, offset)) &&
         !ShapedType::isDynamic(offset) && llvm::none_of(strides, ShapedType::isDynamic) &&
         strides.back() == 1;
}

/// The kernel's matmul (or convolution), when its whole body is what the
/// pass rewrites and the shapes fit the tiles of `kind`.
std::optional<MatmulKernel> matchKernel(func::FuncOp kernel, StringRef kind,
                                        int64_t fmaTilesFrom, bool mmaWideTiles,
                                        int64_t mmaStages) {
  if (!kernel.getBody().hasOneBlock())
    return std::nullopt;
  MatmulKernel match;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    const bool contraction = match.matmul || match.conv;
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (match.fill || match.copy || contraction)
        return std::nullopt;
      match.fill = fill;
      continue;
    }
    if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
      if (match.fill || match.copy || contraction ||
          !copy.hasPureBufferSemantics())
        return std::nullopt;
      match.copy = copy;
      continue;
    }
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
      if (contraction || matmul.hasUserDefinedMaps() ||
          !matmul.hasPureBufferSemantics())
        return std::nullopt;
      match.matmul = matmul;
      continue;
    }
    if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op)) {
      // Convolutions take the workgroup-memory tiles only.
      if (contraction || !conv.hasPureBufferSemantics() ||
          (kind != "shared" && !nvidiaKind(kind)))
        return std::nullopt;
      match.conv = conv;
      continue;
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
      if (!contraction || !generic.hasPureBufferSemantics())
        return std::nullopt;
      match.epilogue.push_back(generic);
      continue;
    }
    if (!isMemoryEffectFree(&op) || op.getNumRegions())
      return std::nullopt;
  }
  if (match.conv) {
    if (!matchConvolution(match))
      return std::nullopt;
  } else if (match.matmul) {
    match.a = match.matmul.getDpsInputs()[0];
    match.b = match.matmul.getDpsInputs()[1];
    match.c = match.matmul.getDpsInits()[0];
  } else {
    return std::nullopt;
  }
  if (match.fill && (match.fill.getDpsInits()[0] != match.c ||
                     !match.fill.value().getType().isFloat()))
    return std::nullopt;
  // The copied binding has C's type, so a convolution's (contiguous) output
  // makes it contiguous too.
  if (match.copy) {
    Value source = match.copy.getDpsInputs()[0];
    if (match.copy.getDpsInits()[0] != match.c || source == match.c ||
        source.getType() != match.c.getType())
      return std::nullopt;
  }
  for (linalg::GenericOp generic : match.epilogue)
    if (!isElementwiseOnC(generic, match.c))
      return std::nullopt;
  auto aType = cast<MemRefType>(match.a.getType());
  auto bType = cast<MemRefType>(match.b.getType());
  auto cType = cast<MemRefType>(match.c.getType());
  Type ea = aType.getElementType(), eb = bType.getElementType(),
       ec = cType.getElementType();
  // `mma` runs f16 and bf16 matmuls on the tensor cores, f32 ones as
  // `shared`.
  const bool shared = kind == "shared" || nvidiaKind(kind);
  // The shared kind computes in f32 from any float operands it widens.
  auto operand = [&](Type t) {
    return t.isF32() || t.isF16() || (shared && t.isBF16());
  };
  if (ea != eb || !operand(ea) || !operand(ec))
    return std::nullopt;
  if (ea.isF32() && !ec.isF32())
    return std::nullopt;
  match.f16 = ea.isF16();
  match.tensorCores = nvidiaKind(kind) && (ea.isF16() || ea.isBF16());
  if (match.matmul) {
    match.n = bType.getDimSize(1);
    match.k = bType.getDimSize(0);
    match.m = cType.getDimSize(0);
  } else if (match.tensorCores && match.geometry.channels % 8 != 0) {
    // The tensor-core tiles load A in runs of 8 along K: 8 channels of one
    // filter tap.
    return std::nullopt;
  }
  match.kSteps = match.k;
  const int64_t fewRows = nvidiaKind(kind) ? kFewRowsCuda : kFewRows;
  if (match.matmul && !cType.isDynamicDim(0) && cType.getDimSize(0) <= fewRows &&
      !ShapedType::isDynamic(match.n) && !ShapedType::isDynamic(match.k) &&
      match.k > 0 && match.n > 0) {
    match.fewRows = true;
    match.tensorCores = false;
    match.shape.rows = cType.getDimSize(0);
    match.shape.cols = kFewRowsColumns;
    match.shape.invocations = kFewRowsInvocations;
    return match;
  }
  const int64_t kStep = match.tensorCores ? kMmaK
                        : shared          ? kSharedK
                        : match.f16       ? 16
                                          : 4;
  const bool fmaTiles = shared && !match.tensorCores;
  // The tensor cores take a K that is a multiple of 8 where the tiles are
  // copied by cp.async: the last step's chunks past K are zero-filled.
  const bool zeroFilled = match.tensorCores && !ShapedType::isDynamic(match.k) &&
                          match.k % 8 == 0 && mmaStages > 1 && asyncCopyable(match.a) &&
                          asyncCopyable(match.b);
  if (ShapedType::isDynamic(match.n) || ShapedType::isDynamic(match.k) ||
      (match.k % kStep != 0 && !fmaTiles && !zeroFilled) || match.k == 0)
    return std::nullopt;
  match.kSteps = (match.k + kStep - 1) / kStep * kStep;
  if (shared) {
    std::optional<TileShape> shape = sharedTileShape(match.m, match.n);
    if (!shape)
      return std::nullopt;
    // On the FMAs, few tiles leave most of a large GPU idle, where one
    // output element per invocation fills it: a convolution, or a matmul
    // with a last tile of columns or step of K past the matrix, takes the
    // tiles from fmaTilesFrom of them (a batch of images, early layers).
    // Matmuls of whole tiles and steps take them at any count, as they did
    // when measured on a GPU (docs/codegen-gpu.md).
    const bool wholeMatmul = match.matmul && match.n % 64 == 0 &&
                             match.k % kSharedK == 0;
    if (!match.tensorCores && !wholeMatmul && !ShapedType::isDynamic(match.m) &&
        (match.m + shape->rows - 1) / shape->rows *
                ((match.n + shape->cols - 1) / shape->cols) <
            fmaTilesFrom)
      return std::nullopt;
    // The tensor cores read B in runs of 8 columns, none across N.
    if (match.tensorCores && match.n % 8 != 0)
      return std::nullopt;
    match.shape = *shape;
    if (match.tensorCores) {
      match.shape.invocations = kMmaInvocations;
      // Wide tiles where asked, N allows them and they still fill a GPU:
      // a third less of A and B read per multiply-add.
      const int64_t rows = match.shape.rows;
      const bool enough = ShapedType::isDynamic(match.m) ||
                          (match.m + rows - 1) / rows * (match.n / kMmaWideCols) >= kEnoughTiles;
      if (mmaWideTiles && rows == 128 && match.n % kMmaWideCols == 0 && enough) {
        match.shape.cols = kMmaWideCols;
        match.shape.invocations = 2 * kMmaInvocations;
      }
    }
  } else if (match.n % kTile != 0) {
    return std::nullopt;
  }
  // A dynamic M is C's, a binding the kernel receives, so the host can size
  // the grid.
  if (cType.isDynamicDim(0) && !isa<BlockArgument>(match.c))
    return std::nullopt;
  return match;
}

/// f16 to f32; f32 as it is.
Value widen(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

/// One accumulator element an invocation holds: C[row, col]'s sum.
struct Element {
  Value row, col, value;
};

/// Writes the tiled form of one matched kernel.
class TileWriter {
public:
  TileWriter(func::FuncOp kernel, MatmulKernel &match, int64_t maxWorkgroupCount,
             int64_t mmaStages, int64_t mmaWorkgroupMemory)
      : kernel(kernel), match(match), maxWorkgroupCount(maxWorkgroupCount),
        mmaStages(mmaStages), mmaWorkgroupMemory(mmaWorkgroupMemory),
        loc(contraction()->getLoc()), b(contraction()) {
    // A convolution's filter and output as matrices (contiguous, so these
    // views are plain reshapes).
    bMatrix = match.b;
    cMatrix = match.c;
    cStart = match.copy ? match.copy.getDpsInputs()[0] : match.c;
    if (match.conv) {
      SmallVector<ReassociationIndices> firstThree = {{0, 1, 2}, {3}};
      bMatrix = memref::CollapseShapeOp::create(b, loc, match.b, firstThree);
      cMatrix = memref::CollapseShapeOp::create(b, loc, match.c, firstThree);
      cStart = match.copy ? memref::CollapseShapeOp::create(b, loc, cStart, firstThree)
                                .getResult()
                          : cMatrix;
    }
    cType = cast<MemRefType>(cMatrix.getType());
  }

  /// Replaces the kernel's body by the tile loop; `kind` is "mfma",
  /// "wmma32", "scalar" (wmma32 has f16 instructions only), "shared" or
  /// "mma" (f32 kernels staged as "shared"). Fails, with an error, where
  /// the tensor-core buffers of `mmaStages` exceed `mmaWorkgroupMemory`.
  LogicalResult write(StringRef kind) {
    const TileShape &shape = match.shape;
    pipelined = match.tensorCores && mmaStages > 1 && copiesAsync();
    // One warpgroup (four warps) multiplies the whole tile, m64 blocks of
    // its rows by all its columns; of the wide tiles' 128x256, each of two
    // warpgroups 64 rows.
    wgmma = pipelined && kind == "wgmma" &&
            ((shape.invocations == kMmaInvocations && shape.cols <= 128) ||
             (shape.invocations == 2 * kMmaInvocations && shape.rows == 128 &&
              shape.cols == kMmaWideCols));
    if (pipelined) {
      const int64_t bytes = mmaStages * (shape.rows + shape.cols) * kMmaK * 2;
      if (bytes > mmaWorkgroupMemory)
        return kernel.emitError("strata-gpu-matrix-tiles: mma-stages=")
               << mmaStages << " needs " << bytes << " bytes of workgroup memory for "
               << shape.rows << "x" << shape.cols << " tiles, more than the "
               << mmaWorkgroupMemory << " a kernel may have on every target arch";
      // Past what a kernel may declare: dynamic shared memory, whose
      // limit the driver raises when it loads the kernel.
      if (bytes > kStaticWorkgroupMemory)
        kernel->setAttr("strata.dynamic_workgroup_memory", UnitAttr::get(kernel.getContext()));
    }
    const bool staticM = !cType.isDynamicDim(0);
    masked = !staticM || cType.getDimSize(0) % shape.rows != 0 ||
             (match.fewRows &&
              shape.rows % (shape.invocations / kFewRowsColumns) != 0);
    columnsMasked = match.n % shape.cols != 0;
    m = staticM ? index(cType.getDimSize(0))
                : memref::DimOp::create(b, loc, cMatrix, index(0)).getResult();
    lastRow = arith::SubIOp::create(b, loc, m, index(1));
    const int64_t tilesN = (match.n + shape.cols - 1) / shape.cols;
    Value tiles = arith::MulIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, m, index(shape.rows)),
        index(tilesN));
    thread = mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value block = mlir::gpu::BlockIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value grid = mlir::gpu::GridDimOp::create(b, loc, mlir::gpu::Dimension::x);
    // Workgroup memory is allocated once, at the top of the kernel.
    int64_t workgroupBytes = 0;
    const bool shared = kind == "shared" || (nvidiaKind(kind) && !match.tensorCores);
    if (match.fewRows)
      allocatePartials(workgroupBytes);
    else if (match.tensorCores)
      allocateMma(workgroupBytes);
    else if (shared)
      allocateShared(workgroupBytes);
    auto tileLoop = scf::ForOp::create(b, loc, block, tiles, grid);
    b.setInsertionPointToStart(tileLoop.getBody());
    Value tile = tileLoop.getInductionVar();
    row0 = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, tile, index(tilesN)),
        index(shape.rows));
    col0 = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, tile, index(tilesN)),
        index(shape.cols));

    const bool matrix = kind == "mfma" || (kind == "wmma32" && match.f16);
    SmallVector<Element> elements =
        match.fewRows       ? fewRowsBody()
        : match.tensorCores ? (wgmma       ? wgmmaBody()
                               : pipelined ? mmaPipelinedBody()
                                           : mmaBody())
        : shared          ? sharedBody()
        : matrix          ? matrixBody(/*wmma=*/kind == "wmma32")
                          : scalarBody();
    for (const Element &element : elements)
      store(element);

    // The grid: one tile per workgroup at a time, any count being correct.
    Builder attrs(kernel.getContext());
    kernel->setAttr("strata.workgroup_size",
                    attrs.getDenseI32ArrayAttr(
                        {int32_t(shape.invocations), 1, 1}));
    if (workgroupBytes)
      kernel->setAttr("strata.workgroup_memory",
                      attrs.getI64IntegerAttr(workgroupBytes));
    if (staticM) {
      int64_t count = std::clamp<int64_t>(
          (cType.getDimSize(0) + shape.rows - 1) / shape.rows * tilesN, 1,
          maxWorkgroupCount);
      kernel->setAttr("strata.workgroup_count",
                      attrs.getDenseI32ArrayAttr({int32_t(count), 1, 1}));
    } else {
      // The host dispatches ceil(factor * M / invocations) workgroups:
      // M / rows * N / cols with factor = invocations / rows * N / cols.
      // A convolution's M is its batch (the output's first extent, which
      // the word holds) times OH * OW.
      unsigned word = PushConstantLayout::of(kernel).dimWord(
          kernel, cast<BlockArgument>(match.c).getArgNumber(), 0);
      int64_t factor = shape.invocations * tilesN / shape.rows;
      if (match.conv)
        factor *= match.geometry.outH * match.geometry.outW;
      kernel->setAttr(
          "strata.workgroup_count",
          attrs.getDictionaryAttr(
              {attrs.getNamedAttr("factor", attrs.getI64IntegerAttr(factor)),
               attrs.getNamedAttr("words", attrs.getDenseI32ArrayAttr({int32_t(word)})),
               attrs.getNamedAttr("max", attrs.getI64IntegerAttr(maxWorkgroupCount))}));
    }
    kernel->setAttr("strata.matrix_tiles",
                    attrs.getStringAttr(match.fewRows       ? "few-rows"
                                        : wgmma             ? "wgmma"
                                        : match.tensorCores ? "mma"
                                        : shared          ? "shared"
                                        : matrix          ? kind
                                                          : "scalar"));

    for (linalg::GenericOp generic : llvm::reverse(match.epilogue))
      generic->erase();
    contraction()->erase();
    if (match.fill)
      match.fill->erase();
    if (match.copy)
      match.copy->erase();
    return success();
  }

private:
  Operation *contraction() const {
    return match.conv ? match.conv.getOperation() : match.matmul.getOperation();
  }

  /// An index constant, at the top of the kernel where it dominates every
  /// use; one per value.
  Value index(int64_t value) {
    Value &constant = constants[value];
    if (!constant) {
      OpBuilder top = OpBuilder::atBlockBegin(&kernel.getBody().front());
      constant = arith::ConstantIndexOp::create(top, loc, value);
    }
    return constant;
  }

  Value add(OpBuilder &at, Value x, int64_t c) {
    return c == 0 ? x : arith::AddIOp::create(at, loc, x, index(c)).getResult();
  }

  /// The indices of A[row, k] in match.a: the same for a matmul; for a
  /// convolution, the input element output pixel `row` reads at filter tap
  /// `k` (ConvGeometry).
  SmallVector<Value> indicesOfA(OpBuilder &at, Value row, Value k) {
    if (!match.conv)
      return {row, k};
    const ConvGeometry &g = match.geometry;
    auto div = [&](Value x, int64_t d) {
      return arith::DivUIOp::create(at, loc, x, index(d)).getResult();
    };
    auto rem = [&](Value x, int64_t d) {
      return arith::RemUIOp::create(at, loc, x, index(d)).getResult();
    };
    auto scale = [&](Value x, int64_t s) {
      return s == 1 ? x : arith::MulIOp::create(at, loc, x, index(s)).getResult();
    };
    auto mulAdd = [&](Value x, int64_t s, Value y, int64_t t) {
      return arith::AddIOp::create(at, loc, scale(x, s), scale(y, t)).getResult();
    };
    Value pixels = div(row, g.outW);
    Value tap = div(k, g.channels);
    Value ih = mulAdd(rem(pixels, g.outH), g.strideH, div(tap, g.kW), g.dilationH);
    Value iw = mulAdd(rem(row, g.outW), g.strideW, rem(tap, g.kW), g.dilationW);
    return {div(pixels, g.outH), ih, iw, rem(k, g.channels)};
  }

  /// The indices of the output element C[row, col] in match.c.
  SmallVector<Value> indicesOfC(Value row, Value col) {
    if (!match.conv)
      return {row, col};
    const ConvGeometry &g = match.geometry;
    Value pixels = arith::DivUIOp::create(b, loc, row, index(g.outW));
    return {arith::DivUIOp::create(b, loc, pixels, index(g.outH)),
            arith::RemUIOp::create(b, loc, pixels, index(g.outH)),
            arith::RemUIOp::create(b, loc, row, index(g.outW)), col};
  }

  /// A[row, k], the row clamped: rows past M compute what is never stored.
  Value loadA(OpBuilder &at, Value row, Value k) {
    if (masked)
      row = arith::MinUIOp::create(at, loc, row, lastRow);
    return zeroPastK(at, k, [&](Value inK) {
      return memref::LoadOp::create(at, loc, match.a, indicesOfA(at, row, inK));
    });
  }

  Value loadB(OpBuilder &at, Value k, Value col) {
    return zeroPastK(at, k, [&](Value inK) {
      return memref::LoadOp::create(at, loc, bMatrix, ValueRange{inK, col});
    });
  }

  /// The first of `run` columns of B a tile reads at `col`, kept inside N
  /// where the last tile's columns pass it (what they compute is never
  /// stored): N - run at most (N a multiple of `run`).
  Value clampColumn(OpBuilder &at, Value col, int64_t run) {
    if (!columnsMasked)
      return col;
    return arith::MinUIOp::create(at, loc, col, index(match.n - run));
  }

  /// load(k), or where the K loop runs past K (kSteps > K), load(K - 1)
  /// replaced by zero for k >= K.
  Value zeroPastK(OpBuilder &at, Value k,
                  llvm::function_ref<Value(Value)> load) {
    if (match.kSteps == match.k)
      return load(k);
    Value value = load(arith::MinUIOp::create(at, loc, k, index(match.k - 1)));
    Value inside = arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ult, k,
                                         index(match.k));
    Value zero = arith::ConstantOp::create(at, loc, at.getZeroAttr(value.getType()));
    return arith::SelectOp::create(at, loc, inside, value, zero);
  }

  /// Column thread % 32, rows 16 * (thread / 32) + 0..15, by FMAs.
  SmallVector<Element> scalarBody() {
    Value col = arith::AddIOp::create(
        b, loc, col0, arith::RemUIOp::create(b, loc, thread, index(32)));
    Value rowBase = arith::AddIOp::create(
        b, loc, row0,
        arith::MulIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, thread, index(32)), index(16)));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getF32Type()));
    SmallVector<Value> inits(16, zero);
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(match.k), index(1), inits);
    OpBuilder inner = OpBuilder::atBlockBegin(kLoop.getBody());
    Value k = kLoop.getInductionVar();
    Value bk = widen(inner, loc, loadB(inner, k, col));
    SmallVector<Value> next;
    for (int64_t r = 0; r < 16; ++r) {
      Value a = widen(inner, loc, loadA(inner, add(inner, rowBase, r), k));
      next.push_back(arith::AddFOp::create(inner, loc, kLoop.getRegionIterArgs()[r],
                                           arith::MulFOp::create(inner, loc, a, bk)));
    }
    scf::YieldOp::create(inner, loc, next);
    SmallVector<Element> elements;
    for (int64_t r = 0; r < 16; ++r)
      elements.push_back({add(b, rowBase, r), col, kLoop.getResult(r)});
    return elements;
  }

  /// Fragments of 16x16 on the matrix instructions (the lane layouts are in
  /// the file's header): 2x2 for one wave of 64 (MFMA), 1x2 for each of two
  /// waves of 32 (WMMA: wave w takes rows 16w..16w+15).
  SmallVector<Element> matrixBody(bool wmma) {
    const int64_t wave = wmma ? 32 : 64;
    const int64_t fragRows = wmma ? 1 : 2, fragCols = 2;
    const int64_t kStep = match.f16 ? 16 : 4;
    const int64_t perLane = wmma ? 16 : (match.f16 ? 4 : 1);
    const int64_t accLength = wmma ? 8 : 4;
    Value lane = arith::RemUIOp::create(b, loc, thread, index(wave));
    Value waveRow0 = row0;
    if (wmma)
      waveRow0 = arith::AddIOp::create(
          b, loc, row0,
          arith::MulIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, thread, index(wave)), index(16)));
    Value l16 = arith::RemUIOp::create(b, loc, lane, index(16));
    Value quarter = arith::DivUIOp::create(b, loc, lane, index(16));
    Type inElement = match.f16 ? Type(b.getF16Type()) : Type(b.getF32Type());
    auto accType = VectorType::get({accLength}, b.getF32Type());
    Value accZero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0)));
    SmallVector<Value> inits(fragRows * fragCols, accZero);
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(match.k), index(kStep), inits);
    OpBuilder inner = OpBuilder::atBlockBegin(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // The k of element v of this lane's A row and B column.
    Value laneK0 = wmma ? k0
                        : arith::AddIOp::create(
                              inner, loc, k0,
                              arith::MulIOp::create(inner, loc, quarter, index(perLane)))
                              .getResult();
    auto fragment = [&](llvm::function_ref<Value(Value k)> loadOne) -> Value {
      SmallVector<Value> values;
      for (int64_t v = 0; v < perLane; ++v)
        values.push_back(loadOne(add(inner, laneK0, v)));
      if (perLane == 1)
        return values.front();
      return vector::FromElementsOp::create(
          inner, loc, VectorType::get({perLane}, inElement), values);
    };
    SmallVector<Value> aFragments, bFragments;
    for (int64_t i = 0; i < fragRows; ++i) {
      Value row = add(inner, arith::AddIOp::create(inner, loc, waveRow0, l16), 16 * i);
      aFragments.push_back(fragment([&](Value k) { return loadA(inner, row, k); }));
    }
    for (int64_t j = 0; j < fragCols; ++j) {
      Value col = add(inner, arith::AddIOp::create(inner, loc, col0, l16), 16 * j);
      bFragments.push_back(fragment([&](Value k) { return loadB(inner, k, col); }));
    }
    SmallVector<Value> next;
    for (int64_t i = 0; i < fragRows; ++i) {
      for (int64_t j = 0; j < fragCols; ++j) {
        Value acc = kLoop.getRegionIterArgs()[i * fragCols + j];
        next.push_back(
            wmma ? amdgpu::WMMAOp::create(inner, loc, accType, 16, 16, 16, aFragments[i],
                                          bFragments[j], acc)
                       .getResult()
                 : amdgpu::MFMAOp::create(inner, loc, accType, 16, 16, kStep,
                                          /*blocks=*/1, aFragments[i], bFragments[j], acc)
                       .getResult());
      }
    }
    scf::YieldOp::create(inner, loc, next);
    SmallVector<Element> elements;
    for (int64_t i = 0; i < fragRows; ++i) {
      for (int64_t j = 0; j < fragCols; ++j) {
        Value col = add(b, arith::AddIOp::create(b, loc, col0, l16), 16 * j);
        Value acc = kLoop.getResult(i * fragCols + j);
        for (int64_t v = 0; v < accLength; ++v) {
          // MFMA: row 4 * (lane / 16) + v; WMMA: row 2 * v + lane / 16.
          Value inFragment =
              wmma ? add(b, quarter, 2 * v)
                   : add(b, arith::MulIOp::create(b, loc, quarter, index(4)), v);
          Value row =
              add(b, arith::AddIOp::create(b, loc, waveRow0, inFragment), 16 * i);
          elements.push_back({row, col, vector::ExtractOp::create(b, loc, acc, v)});
        }
      }
    }
    return elements;
  }

  /// The partial sums of fewRowsBody: one per warp, row and column.
  void allocatePartials(int64_t &bytes) {
    partials = allocateWorkgroup(match.shape.invocations * match.shape.rows,
                                 b.getF32Type(), bytes);
  }

  /// A matmul of few rows (a batch-1 layer) has too few tiles of C to fill
  /// a GPU, and one invocation per element of C would run all of K alone.
  /// Here a workgroup takes 32 columns of every row, each warp a share of
  /// K: lane l reads column col0 + l of B (a warp reads 128 adjacent
  /// bytes), warp w the rows k of B with k / 4 = w (mod warps) in steps of
  /// 4 (four independent loads in flight), the rest one at a time; then the
  /// warps' sums meet in workgroup memory, and invocation (w, l) adds up
  /// rows w, w + warps, ... of column col0 + l.
  SmallVector<Element> fewRowsBody() {
    const TileShape &shape = match.shape;
    const int64_t warps = shape.invocations / kFewRowsColumns;
    const int64_t rows = shape.rows;
    Value lane = arith::RemUIOp::create(b, loc, thread, index(kFewRowsColumns));
    Value warp = arith::DivUIOp::create(b, loc, thread, index(kFewRowsColumns));
    Value col = arith::AddIOp::create(b, loc, col0, lane);
    // Columns past N read the last one and are never stored.
    Value colIn = columnsMasked
                      ? arith::MinUIOp::create(b, loc, col, index(match.n - 1)).getResult()
                      : col;
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getF32Type()));
    auto step = [&](OpBuilder &at, ArrayRef<Value> ks, SmallVector<Value> acc) {
      SmallVector<Value> bs;
      for (Value k : ks)
        bs.push_back(widen(at, loc, loadB(at, k, colIn)));
      for (auto [k, bk] : llvm::zip(ks, bs))
        for (int64_t r = 0; r < rows; ++r) {
          Value a = widen(at, loc, loadA(at, add(at, row0, r), k));
          acc[r] = math::FmaOp::create(at, loc, a, bk, acc[r]);
        }
      return acc;
    };
    const int64_t stride = warps * kFewRowsUnroll;
    const int64_t kMain = match.k / stride * stride;
    SmallVector<Value> acc(rows, zero);
    if (kMain > 0) {
      auto main = scf::ForOp::create(b, loc, index(0), index(kMain), index(stride), acc);
      OpBuilder inner = OpBuilder::atBlockBegin(main.getBody());
      Value k0 = arith::AddIOp::create(
          inner, loc, main.getInductionVar(),
          arith::MulIOp::create(inner, loc, warp, index(kFewRowsUnroll)));
      SmallVector<Value> ks;
      for (int64_t u = 0; u < kFewRowsUnroll; ++u)
        ks.push_back(add(inner, k0, u));
      scf::YieldOp::create(inner, loc,
                           step(inner, ks, SmallVector<Value>(main.getRegionIterArgs())));
      acc.assign(main.getResults().begin(), main.getResults().end());
    }
    if (kMain < match.k) {
      auto rest = scf::ForOp::create(
          b, loc, arith::AddIOp::create(b, loc, warp, index(kMain)), index(match.k),
          index(warps), acc);
      OpBuilder inner = OpBuilder::atBlockBegin(rest.getBody());
      scf::YieldOp::create(inner, loc,
                           step(inner, {rest.getInductionVar()},
                                SmallVector<Value>(rest.getRegionIterArgs())));
      acc.assign(rest.getResults().begin(), rest.getResults().end());
    }
    // The last tile's partial sums have been read by every invocation once
    // all are here.
    mlir::gpu::BarrierOp::create(b, loc);
    auto partial = [&](Value w, Value r) {
      return arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(
              b, loc,
              arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, w, index(rows)), r),
              index(kFewRowsColumns)),
          lane);
    };
    for (int64_t r = 0; r < rows; ++r)
      memref::StoreOp::create(b, loc, acc[r], partials, ValueRange{partial(warp, index(r))});
    mlir::gpu::BarrierOp::create(b, loc);
    SmallVector<Element> elements;
    for (int64_t first = 0; first < rows; first += warps) {
      Value r = add(b, warp, first);
      // Rows past M read the last one and are never stored.
      Value rIn = arith::MinUIOp::create(b, loc, r, index(rows - 1));
      Value sum = memref::LoadOp::create(b, loc, partials, ValueRange{partial(index(0), rIn)});
      for (int64_t w = 1; w < warps; ++w)
        sum = arith::AddFOp::create(
            b, loc, sum,
            memref::LoadOp::create(b, loc, partials, ValueRange{partial(index(w), rIn)}));
      elements.push_back({arith::AddIOp::create(b, loc, row0, r), col, sum});
    }
    return elements;
  }

  /// The K loop of the kinds staged in workgroup memory, in steps of
  /// `step`: `accumulators` f32 sums from zero and the first step's elements
  /// (`loadStep` at K offset 0) carried, and a barrier first in its body (the
  /// workgroup has finished reading the last step's tiles).
  scf::ForOp stagedKLoop(
      int64_t accumulators, int64_t step,
      llvm::function_ref<SmallVector<Value>(OpBuilder &, Value)> loadStep) {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getF32Type()));
    SmallVector<Value> inits(accumulators, zero);
    inits.append(loadStep(b, index(0)));
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(match.kSteps), index(step), inits);
    OpBuilder inner = OpBuilder::atBlockBegin(kLoop.getBody());
    mlir::gpu::BarrierOp::create(inner, loc);
    return kLoop;
  }

  /// The tiles of A (transposed: 8 x rows) and B (8 x cols) for one step
  /// of K, in workgroup memory, as f32 in vectors of 4 along the rows: every
  /// access of workgroup memory moves 16 bytes. The memrefs are 1-D (MLIR's
  /// memref flattening cannot linearize memrefs of vectors).
  void allocateShared(int64_t &bytes) {
    sharedA = allocateWorkgroup(kSharedK * match.shape.rows / 4, vec4(), bytes);
    sharedB = allocateWorkgroup(kSharedK * match.shape.cols / 4, vec4(), bytes);
  }

  /// A 1-D array of `count` elements in workgroup memory, allocated at the
  /// top of the kernel after those before it; adds its size to `bytes`.
  Value allocateWorkgroup(int64_t count, Type element, int64_t &bytes) {
    OpBuilder top = OpBuilder::atBlockBegin(&kernel.getBody().front());
    if (lastAllocation)
      top.setInsertionPointAfter(lastAllocation);
    auto workgroup = spirv::StorageClassAttr::get(kernel.getContext(),
                                                  spirv::StorageClass::Workgroup);
    auto type = MemRefType::get({count}, element, MemRefLayoutAttrInterface(), workgroup);
    bytes += workgroupBytes(type);
    lastAllocation = memref::AllocOp::create(top, loc, type);
    return lastAllocation->getResult(0);
  }

  /// Vector (row, v) of a tile whose rows hold `vectors` vectors of 4.
  Value tileIndex(OpBuilder &at, Value row, Value v, int64_t vectors) {
    return arith::AddIOp::create(
        at, loc, arith::MulIOp::create(at, loc, row, index(vectors)), v);
  }

  VectorType vec4() {
    return VectorType::get({4}, Float32Type::get(kernel.getContext()));
  }

  /// The classic shared-memory SGEMM: per step of K, the workgroup copies
  /// an 8 x rows tile of A (transposed: each invocation reads one k of 4
  /// adjacent rows) and an 8 x cols tile of B (4 adjacent columns of one k)
  /// to workgroup memory, and each invocation accumulates an 8 x 8 block of
  /// C in registers: rows 4 * ty + (0..3) and the same half a tile lower,
  /// columns likewise, so that it reads both tiles in vectors of 4 and
  /// neighbouring invocations read neighbouring vectors. The next step's
  /// elements are loaded into registers while this step computes.
  SmallVector<Element> sharedBody() {
    const TileShape &shape = match.shape;
    const int64_t invocations = shape.invocations;
    const int64_t threadsN = shape.cols / kSharedThreadTile;
    const int64_t threadsM = shape.rows / kSharedThreadTile;
    const int64_t chunksA = shape.rows * kSharedK / (4 * invocations);
    const int64_t chunksB = shape.cols * kSharedK / (4 * invocations);
    Value tx = arith::RemUIOp::create(b, loc, thread, index(threadsN));
    Value ty = arith::DivUIOp::create(b, loc, thread, index(threadsN));
    // Offsets in the tile of an invocation's i-th row or column.
    auto offsetOf = [&](OpBuilder &at, Value base, int64_t i, int64_t extent) {
      return add(at, arith::MulIOp::create(at, loc, base, index(4)),
                 (i / 4) * (extent / 2) + i % 4);
    };
    // Chunk c of a tile copy: 4 elements from row `k` of the (transposed)
    // tile, starting at vector `vector` of it. Chunks are numbered with the
    // invocations fastest; in A's, neighbouring chunks take neighbouring k
    // (so that a warp reads whole 32-byte sectors of A's rows), in B's
    // neighbouring vectors.
    struct Chunk {
      Value k, vector;
    };
    const int64_t vectorsA = shape.rows / 4, vectorsB = shape.cols / 4;
    auto chunks = [&](int64_t count, bool kFastest, int64_t vectors) {
      SmallVector<Chunk> result;
      for (int64_t c = 0; c < count; ++c) {
        Value linear = add(b, thread, c * invocations);
        const int64_t fast = kFastest ? kSharedK : vectors;
        Value quotient = arith::DivUIOp::create(b, loc, linear, index(fast));
        Value remainder = arith::RemUIOp::create(b, loc, linear, index(fast));
        result.push_back(kFastest ? Chunk{remainder, quotient}
                                  : Chunk{quotient, remainder});
      }
      return result;
    };
    SmallVector<Chunk> chunksOfA = chunks(chunksA, /*kFastest=*/true, vectorsA);
    SmallVector<Chunk> chunksOfB = chunks(chunksB, /*kFastest=*/false, vectorsB);
    // This invocation's elements of the tiles at K offset k0, 4 at a time.
    auto loadStep = [&](OpBuilder &at, Value k0) {
      SmallVector<Value> vectors;
      auto gather = [&](llvm::function_ref<Value(int64_t)> loadOne) {
        SmallVector<Value> values;
        for (int64_t v = 0; v < 4; ++v)
          values.push_back(widen(at, loc, loadOne(v)));
        vectors.push_back(vector::FromElementsOp::create(at, loc, vec4(), values));
      };
      for (const Chunk &c : chunksOfA) {
        Value k = arith::AddIOp::create(at, loc, k0, c.k);
        Value row = arith::AddIOp::create(
            at, loc, row0, arith::MulIOp::create(at, loc, c.vector, index(4)));
        gather([&](int64_t v) { return loadA(at, add(at, row, v), k); });
      }
      for (const Chunk &c : chunksOfB) {
        Value k = arith::AddIOp::create(at, loc, k0, c.k);
        Value col = arith::AddIOp::create(
            at, loc, col0, arith::MulIOp::create(at, loc, c.vector, index(4)));
        gather([&](int64_t v) {
          return loadB(at, k, clampColumn(at, add(at, col, v), 1));
        });
      }
      return vectors;
    };

    constexpr int64_t kAccumulators = kSharedThreadTile * kSharedThreadTile;
    scf::ForOp kLoop = stagedKLoop(kAccumulators, kSharedK, loadStep);
    OpBuilder inner = OpBuilder::atBlockEnd(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    ValueRange carried = kLoop.getRegionIterArgs();
    unsigned next = kAccumulators;
    for (const Chunk &c : chunksOfA)
      memref::StoreOp::create(inner, loc, carried[next++], sharedA,
                              tileIndex(inner, c.k, c.vector, vectorsA));
    for (const Chunk &c : chunksOfB)
      memref::StoreOp::create(inner, loc, carried[next++], sharedB,
                              tileIndex(inner, c.k, c.vector, vectorsB));
    mlir::gpu::BarrierOp::create(inner, loc);
    // The next step's elements (the last step loads its own again).
    Value nextK = arith::MinUIOp::create(inner, loc, add(inner, k0, kSharedK),
                                         index(match.kSteps - kSharedK));
    SmallVector<Value> prefetched = loadStep(inner, nextK);
    SmallVector<Value> acc(carried.begin(), carried.begin() + kAccumulators);
    for (int64_t kk = 0; kk < kSharedK; ++kk) {
      Value k = index(kk);
      Value as[2] = {
          memref::LoadOp::create(inner, loc, sharedA, tileIndex(inner, k, ty, vectorsA)),
          memref::LoadOp::create(inner, loc, sharedA,
                                 tileIndex(inner, k, add(inner, ty, threadsM), vectorsA))};
      Value bs[2] = {
          memref::LoadOp::create(inner, loc, sharedB, tileIndex(inner, k, tx, vectorsB)),
          memref::LoadOp::create(inner, loc, sharedB,
                                 tileIndex(inner, k, add(inner, tx, threadsN), vectorsB))};
      for (int64_t i = 0; i < kSharedThreadTile; ++i) {
        Value a = vector::ExtractOp::create(inner, loc, as[i / 4], i % 4);
        for (int64_t j = 0; j < kSharedThreadTile; ++j) {
          Value bj = vector::ExtractOp::create(inner, loc, bs[j / 4], j % 4);
          Value &sum = acc[i * kSharedThreadTile + j];
          sum = math::FmaOp::create(inner, loc, a, bj, sum);
        }
      }
    }
    SmallVector<Value> yielded = acc;
    yielded.append(prefetched);
    scf::YieldOp::create(inner, loc, yielded);

    SmallVector<Element> elements;
    for (int64_t i = 0; i < kSharedThreadTile; ++i)
      for (int64_t j = 0; j < kSharedThreadTile; ++j)
        elements.push_back(
            {arith::AddIOp::create(b, loc, row0, offsetOf(b, ty, i, shape.rows)),
             arith::AddIOp::create(b, loc, col0, offsetOf(b, tx, j, shape.cols)),
             kLoop.getResult(i * kSharedThreadTile + j)});
    return elements;
  }

  /// The staged tiles of the tensor-core kind, as 32-bit words of two
  /// elements adjacent along K: A's rows (rows x kMmaRowWords) and B's
  /// columns, transposed (cols x kMmaRowWords), each padded.
  void allocateMma(int64_t &bytes) {
    Type i32 = b.getI32Type();
    if (pipelined) {
      // Per stage A's rows x 32 and B's 32 x cols elements, two a word.
      sharedA = allocateWorkgroup(mmaStages * match.shape.rows * kMmaK / 2, i32, bytes);
      sharedB = allocateWorkgroup(mmaStages * kMmaK * match.shape.cols / 2, i32, bytes);
      return;
    }
    sharedA = allocateWorkgroup(match.shape.rows * kMmaRowWords, i32, bytes);
    sharedB = allocateWorkgroup(match.shape.cols * kMmaRowWords, i32, bytes);
  }

  /// Whether the tensor-core tiles can fill workgroup memory by `cp.async`:
  /// A and B at static strides, their rows contiguous (16-byte copies).
  bool copiesAsync() const { return asyncCopyable(match.a) && asyncCopyable(match.b); }

  /// This invocation's place in the tensor-core tiles: each of the four
  /// warps a quarter of the tile, mTiles x nTiles fragments of 16 x 8.
  struct MmaLanes {
    Value lane, g, t, warpRow, warpCol;
    // lane % 16, lane / 16, lane % 8, (lane / 8) % 2: the fragment loads'
    // rows and words.
    Value l16, half, l8, quarterOdd;
    int64_t mTiles = 0, nTiles = 0;
  };

  MmaLanes mmaLanes() {
    MmaLanes lanes;
    // Two rows of warps, as many columns as the rest make.
    const int64_t warpsN = match.shape.invocations / 32 / 2;
    const int64_t warpRows = match.shape.rows / 2, warpCols = match.shape.cols / warpsN;
    lanes.mTiles = warpRows / 16;
    lanes.nTiles = warpCols / 8;
    Value warp = arith::DivUIOp::create(b, loc, thread, index(32));
    lanes.lane = arith::RemUIOp::create(b, loc, thread, index(32));
    lanes.g = arith::DivUIOp::create(b, loc, lanes.lane, index(4));
    lanes.t = arith::RemUIOp::create(b, loc, lanes.lane, index(4));
    lanes.warpRow = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, warp, index(warpsN)), index(warpRows));
    lanes.warpCol = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, warp, index(warpsN)), index(warpCols));
    lanes.l16 = arith::RemUIOp::create(b, loc, lanes.lane, index(16));
    lanes.half = arith::DivUIOp::create(b, loc, lanes.lane, index(16));
    lanes.l8 = arith::RemUIOp::create(b, loc, lanes.lane, index(8));
    lanes.quarterOdd = arith::RemUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lanes.lane, index(8)), index(2));
    return lanes;
  }

  /// The pieces of a tile the workgroup copies: `count` per invocation,
  /// neighbouring invocations taking neighbouring pieces; piece p of
  /// invocation i is (linear / minorCount, linear % minorCount) with linear
  /// = i + p * invocations.
  struct Piece {
    Value major, minor;
  };
  SmallVector<Piece> pieces(int64_t count, int64_t minorCount) {
    SmallVector<Piece> result;
    for (int64_t c = 0; c < count; ++c) {
      Value linear = add(b, thread, c * match.shape.invocations);
      result.push_back({arith::DivUIOp::create(b, loc, linear, index(minorCount)),
                        arith::RemUIOp::create(b, loc, linear, index(minorCount))});
    }
    return result;
  }

  /// One step of 32 along K on the tensor cores: fragments loaded from
  /// workgroup memory by `ldmatrix.x4` (four 8x8 matrices of 16-bit
  /// elements, lanes 8q..8q+7 giving the addresses of matrix q's rows),
  /// multiplied into `acc` by `mma.sync.m16n8k16`. wordA(i, s) is the word
  /// this lane addresses for A's fragment i (rows 16i..16i+15 at k 16s and
  /// 16s + 8: a0..a3), wordB(j, s) for B's fragments j and j + 1 (columns
  /// 8j..8j+7 at k 16s and 16s + 8, then 8j+8..8j+15), which `layoutB`
  /// col transposes (B stored k-major).
  void mmaStep(OpBuilder &at, const MmaLanes &lanes, SmallVector<Value> &acc,
               Value baseA, Value baseB,
               llvm::function_ref<Value(int64_t, int64_t)> wordA,
               llvm::function_ref<Value(int64_t, int64_t)> wordB,
               NVVM::MMALayout layoutB) {
    Type element = cast<MemRefType>(match.a.getType()).getElementType();
    Type i32 = at.getI32Type(), f32 = at.getF32Type();
    MLIRContext *context = kernel.getContext();
    auto quads = LLVM::LLVMStructType::getLiteral(context, SmallVector<Type>(4, i32));
    auto loadMatrices = [&](Value base, Value word, NVVM::MMALayout layout) {
      Value loaded = NVVM::LdMatrixOp::create(
          at, loc, quads, sharedPointer(at, base, word), /*num=*/4, layout,
          NVVM::LdStMatrixShapeAttr::get(context, 8, 8), NVVM::LdStMatrixEltType::B16);
      std::array<Value, 4> registers;
      for (int64_t v = 0; v < 4; ++v) {
        Value reg = LLVM::ExtractValueOp::create(at, loc, loaded, v);
        registers[v] =
            element.isBF16()
                ? reg
                : LLVM::BitcastOp::create(at, loc, VectorType::get({2}, element), reg)
                      .getResult();
      }
      return registers;
    };
    auto resultType = LLVM::LLVMStructType::getLiteral(context, SmallVector<Type>(4, f32));
    const NVVM::MMATypes ptxType =
        element.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    for (int64_t step = 0; step < kMmaK / 16; ++step) {
      SmallVector<std::array<Value, 4>> fragmentsA;
      for (int64_t i = 0; i < lanes.mTiles; ++i)
        fragmentsA.push_back(loadMatrices(baseA, wordA(i, step), NVVM::MMALayout::row));
      for (int64_t j = 0; j < lanes.nTiles; j += 2) {
        std::array<Value, 4> pair = loadMatrices(baseB, wordB(j, step), layoutB);
        for (int64_t jj = 0; jj < 2; ++jj) {
          Value fragmentB[2] = {pair[2 * jj], pair[2 * jj + 1]};
          for (int64_t i = 0; i < lanes.mTiles; ++i) {
            Value *c = &acc[(i * lanes.nTiles + j + jj) * 4];
            auto mma = NVVM::MmaOp::create(
                at, loc, resultType, fragmentsA[i], fragmentB,
                ValueRange{c[0], c[1], c[2], c[3]}, ArrayRef<int64_t>{16, 8, 16},
                std::nullopt, std::nullopt,
                std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                               NVVM::MMALayout::col});
            for (int64_t v = 0; v < 4; ++v)
              c[v] = LLVM::ExtractValueOp::create(at, loc, mma.getResult(), v);
          }
        }
      }
    }
  }

  /// A pointer into workgroup memory: `word` 32-bit words past `base`.
  Value sharedPointer(OpBuilder &at, Value base, Value word) {
    Value address = arith::AddIOp::create(
        at, loc, base, arith::MulIOp::create(at, loc, word, index(4)));
    Value integer = arith::IndexCastOp::create(at, loc, at.getI64Type(), address);
    return LLVM::IntToPtrOp::create(
        at, loc, LLVM::LLVMPointerType::get(kernel.getContext(), 3), integer);
  }

  /// A pointer in the global state space to memref[indices], `base` its
  /// aligned pointer (static strides, copiesAsync): a binding's address is
  /// in that space (strata-llvm-kernel-abi).
  Value globalPointer(OpBuilder &at, Value base, Value memref, ValueRange indices) {
    auto type = cast<MemRefType>(memref.getType());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    (void)type.getStridesAndOffset(strides, offset);
    const int64_t bytes = type.getElementTypeBitWidth() / 8;
    Value address = add(at, base, offset * bytes);
    for (auto [i, stride] : llvm::zip(indices, strides))
      address = arith::AddIOp::create(
          at, loc, address, arith::MulIOp::create(at, loc, i, index(stride * bytes)));
    Value integer = arith::IndexCastOp::create(at, loc, at.getI64Type(), address);
    return LLVM::IntToPtrOp::create(
        at, loc, LLVM::LLVMPointerType::get(kernel.getContext(), 1), integer);
  }

  /// The accumulators' elements of C: fragment (i, j) of a warp holds rows
  /// g and g + 8, columns 2t and 2t + 1 (the file's header), its rows
  /// `rowStride` * i past the warp's (16: mma.sync's fragments; wgmma's
  /// blocks of 64 rows); `sums[(i * nTiles + j) * 4 + v]` its values.
  SmallVector<Element> mmaElements(const MmaLanes &lanes, ValueRange sums,
                                   int64_t rowStride = 16) {
    SmallVector<Element> elements;
    Value twoT = arith::MulIOp::create(b, loc, lanes.t, index(2));
    Value rowBase = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, row0, lanes.warpRow), lanes.g);
    Value colBase = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, col0, lanes.warpCol), twoT);
    for (int64_t i = 0; i < lanes.mTiles; ++i)
      for (int64_t j = 0; j < lanes.nTiles; ++j)
        for (int64_t v = 0; v < 4; ++v)
          elements.push_back({add(b, rowBase, rowStride * i + 8 * (v / 2)),
                              add(b, colBase, 8 * j + v % 2),
                              sums[(i * lanes.nTiles + j) * 4 + v]});
    return elements;
  }

  /// f16 and bf16 matmuls on NVIDIA's tensor cores (sm_80 and later), one
  /// buffer: per step of 32 along K the workgroup copies A's tile and B's
  /// (transposed, so that both hold pairs along K in one word, as the
  /// instruction's registers do) to workgroup memory in 16-byte loads, and
  /// each warp (mmaLanes) accumulates its part of the tile in f32 with
  /// `mma.sync.m16n8k16` (the lane layout is in the file's header). The
  /// next step's elements are loaded into registers while this step
  /// computes. Rows are padded to kMmaRowWords words.
  SmallVector<Element> mmaBody() {
    const TileShape &shape = match.shape;
    MmaLanes lanes = mmaLanes();
    const int64_t chunksA = shape.rows * (kMmaK / 8) / shape.invocations;
    const int64_t unitsB = (kMmaK / 2) * (shape.cols / 8) / shape.invocations;
    Type element = cast<MemRefType>(match.a.getType()).getElementType();
    Type i32 = b.getI32Type();
    auto vectorOf = [&](int64_t n, Type t) { return VectorType::get({n}, t); };
    // A's chunks: 8 elements of one row. B's units: 8 columns of two
    // adjacent rows (a pair along K).
    SmallVector<Piece> piecesA = pieces(chunksA, kMmaK / 8);  // row, chunk
    SmallVector<Piece> piecesB = pieces(unitsB, kMmaK / 2);   // column group, pair
    auto load = [&](OpBuilder &at, Value memref, ValueRange indices) {
      return vector::LoadOp::create(at, loc, vectorOf(8, element), memref,
                                    indices, /*nontemporal=*/false,
                                    llvm::MaybeAlign(16))
          .getResult();
    };
    // This invocation's words of the tiles at K offset k0: A's chunks as
    // vector<4xi32>, B's units as vector<8xi32> whose word i pairs the two
    // rows' elements of column i.
    auto loadStep = [&](OpBuilder &at, Value k0) {
      SmallVector<Value> words;
      for (const Piece &p : piecesA) {
        Value row = arith::AddIOp::create(at, loc, row0, p.major);
        if (masked)
          row = arith::MinUIOp::create(at, loc, row, lastRow);
        Value k = arith::AddIOp::create(
            at, loc, k0, arith::MulIOp::create(at, loc, p.minor, index(8)));
        // A convolution's 8 elements are 8 channels of one tap (its
        // channels are a multiple of 8).
        words.push_back(vector::BitCastOp::create(
            at, loc, vectorOf(4, i32), load(at, match.a, indicesOfA(at, row, k))));
      }
      for (const Piece &p : piecesB) {
        Value k = arith::AddIOp::create(
            at, loc, k0, arith::MulIOp::create(at, loc, p.minor, index(2)));
        Value col = arith::AddIOp::create(
            at, loc, col0, arith::MulIOp::create(at, loc, p.major, index(8)));
        col = clampColumn(at, col, 8);
        Value first = load(at, bMatrix, ValueRange{k, col});
        Value second = load(at, bMatrix, ValueRange{add(at, k, 1), col});
        SmallVector<int64_t> interleave;
        for (int64_t i = 0; i < 8; ++i)
          interleave.append({i, i + 8});
        Value pairs = vector::ShuffleOp::create(at, loc, first, second, interleave);
        words.push_back(vector::BitCastOp::create(at, loc, vectorOf(8, i32), pairs));
      }
      return words;
    };

    Value baseA = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, sharedA);
    Value baseB = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, sharedB);
    // A: row lane % 16, word 4 * (lane / 16); B: column lane % 8 + 8 * (lane
    // / 16), word 4 * ((lane / 8) % 2).
    Value rowA = arith::AddIOp::create(b, loc, lanes.warpRow, lanes.l16);
    Value wordA = arith::MulIOp::create(b, loc, lanes.half, index(4));
    Value colB = arith::AddIOp::create(
        b, loc, lanes.warpCol,
        arith::AddIOp::create(b, loc, lanes.l8,
                              arith::MulIOp::create(b, loc, lanes.half, index(8))));
    Value wordB = arith::MulIOp::create(b, loc, lanes.quarterOdd, index(4));
    const int64_t accumulators = lanes.mTiles * lanes.nTiles * 4;
    scf::ForOp kLoop = stagedKLoop(accumulators, kMmaK, loadStep);
    OpBuilder inner = OpBuilder::atBlockEnd(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    ValueRange carried = kLoop.getRegionIterArgs();
    unsigned next = accumulators;
    for (const Piece &p : piecesA) {
      Value at = arith::AddIOp::create(
          inner, loc, arith::MulIOp::create(inner, loc, p.major, index(kMmaRowWords)),
          arith::MulIOp::create(inner, loc, p.minor, index(4)));
      vector::StoreOp::create(inner, loc, carried[next++], sharedA, ValueRange{at});
    }
    for (const Piece &p : piecesB) {
      Value words = carried[next++];
      for (int64_t i = 0; i < 8; ++i) {
        Value column = add(inner, arith::MulIOp::create(inner, loc, p.major, index(8)), i);
        Value at = arith::AddIOp::create(
            inner, loc, arith::MulIOp::create(inner, loc, column, index(kMmaRowWords)),
            p.minor);
        memref::StoreOp::create(inner, loc,
                                vector::ExtractOp::create(inner, loc, words, i),
                                sharedB, ValueRange{at});
      }
    }
    mlir::gpu::BarrierOp::create(inner, loc);
    // The next step's elements (the last step loads its own again).
    Value nextK = arith::MinUIOp::create(inner, loc, add(inner, k0, kMmaK),
                                         index(match.kSteps - kMmaK));
    SmallVector<Value> prefetched = loadStep(inner, nextK);

    SmallVector<Value> acc(carried.begin(), carried.begin() + accumulators);
    auto rowWords = [&](Value row, int64_t rowOffset, Value word, int64_t wordOffset) {
      return add(inner,
                 arith::AddIOp::create(
                     inner, loc,
                     arith::MulIOp::create(inner, loc, add(inner, row, rowOffset),
                                           index(kMmaRowWords)),
                     word),
                 wordOffset);
    };
    mmaStep(
        inner, lanes, acc, baseA, baseB,
        [&](int64_t i, int64_t step) { return rowWords(rowA, 16 * i, wordA, step * 8); },
        [&](int64_t j, int64_t step) { return rowWords(colB, 8 * j, wordB, step * 8); },
        NVVM::MMALayout::row);
    SmallVector<Value> yielded = acc;
    yielded.append(prefetched);
    scf::YieldOp::create(inner, loc, yielded);
    return mmaElements(lanes, kLoop.getResults());
  }

  /// What the `cp.async` copies of a step of K need: each invocation's
  /// pieces of A (row, chunk of 8 along K) and of B (k, chunk of 8
  /// columns), the word of a stage's buffer each lands at, a stage's words,
  /// and the global and workgroup base addresses.
  struct AsyncTiles {
    SmallVector<Piece> piecesA, piecesB;
    SmallVector<Value> wordsA, wordsB;
    int64_t stageWordsA = 0, stageWordsB = 0;
    Value globalA, globalB, baseA, baseB;
  };
  AsyncTiles asyncTiles(llvm::function_ref<Value(const Piece &)> wordA,
                        llvm::function_ref<Value(const Piece &)> wordB) {
    const TileShape &shape = match.shape;
    AsyncTiles tiles;
    const int64_t chunksA = kMmaK / 8, chunksB = shape.cols / 8;
    tiles.stageWordsA = shape.rows * kMmaK / 2;
    tiles.stageWordsB = kMmaK * shape.cols / 2;
    tiles.piecesA = pieces(shape.rows * chunksA / shape.invocations, chunksA);
    tiles.piecesB = pieces(kMmaK * chunksB / shape.invocations, chunksB);
    for (const Piece &p : tiles.piecesA)
      tiles.wordsA.push_back(wordA(p));
    for (const Piece &p : tiles.piecesB)
      tiles.wordsB.push_back(wordB(p));
    tiles.globalA = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, match.a);
    // A convolution's filter's own pointer (its matrix view's is the same,
    // through a reshape the lowering keeps apart).
    tiles.globalB = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, match.b);
    tiles.baseA = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, sharedA);
    tiles.baseB = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, sharedB);
    return tiles;
  }

  /// Step `step`'s tiles into buffer `stage`, one group of copies.
  void asyncCopyStep(OpBuilder &at, const AsyncTiles &tiles, Value step, Value stage) {
    Value k0 = arith::MulIOp::create(at, loc, step, index(kMmaK));
    Value firstA = arith::MulIOp::create(at, loc, stage, index(tiles.stageWordsA));
    Value firstB = arith::MulIOp::create(at, loc, stage, index(tiles.stageWordsB));
    // 16 bytes of `memref` (whose aligned pointer is `global`) at `indices`
    // into word `first + word` of `base`; where K is not a multiple of the
    // step, the chunks at k past K read none (their source clamped inside
    // the operand) and are zero-filled.
    const bool tail = match.k % kMmaK != 0;
    auto copy = [&](Value base, Value first, Value word, Value global, Value memref,
                    ValueRange indices, Value k) {
      Value bytes;
      if (tail)
        bytes = arith::SelectOp::create(
            at, loc,
            arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ult, k, index(match.k)),
            arith::ConstantOp::create(at, loc, at.getI32IntegerAttr(16)),
            arith::ConstantOp::create(at, loc, at.getI32IntegerAttr(0)));
      NVVM::CpAsyncOp::create(
          at, loc, sharedPointer(at, base, arith::AddIOp::create(at, loc, first, word)),
          globalPointer(at, global, memref, indices),
          /*size=*/16, NVVM::LoadCacheModifierKind::CG, /*cpSize=*/bytes);
    };
    auto inside = [&](Value k, int64_t run) {
      return tail ? arith::MinUIOp::create(at, loc, k, index(match.k - run)).getResult() : k;
    };
    for (auto [p, word] : llvm::zip(tiles.piecesA, tiles.wordsA)) {
      Value row = arith::AddIOp::create(at, loc, row0, p.major);
      if (masked)
        row = arith::MinUIOp::create(at, loc, row, lastRow);
      Value k = arith::AddIOp::create(
          at, loc, k0, arith::MulIOp::create(at, loc, p.minor, index(8)));
      copy(tiles.baseA, firstA, word, tiles.globalA, match.a, indicesOfA(at, row, inside(k, 8)),
           k);
    }
    for (auto [p, word] : llvm::zip(tiles.piecesB, tiles.wordsB)) {
      Value k = arith::AddIOp::create(at, loc, k0, p.major);
      Value col = clampColumn(
          at,
          arith::AddIOp::create(at, loc, col0,
                                arith::MulIOp::create(at, loc, p.minor, index(8))),
          8);
      copy(tiles.baseB, firstB, word, tiles.globalB, bMatrix, ValueRange{inside(k, 1), col}, k);
    }
    NVVM::CpAsyncCommitGroupOp::create(at, loc);
  }

  /// The tensor-core tiles with `mmaStages` buffers filled by `cp.async`
  /// (16 bytes from global to workgroup memory, not through registers):
  /// while the warps multiply step i, the copies of steps i + 1 to i +
  /// stages - 1 are in flight. Per step each buffer holds A's tile (rows x
  /// 32) and B's (32 x cols), both as in memory, in 16-byte chunks whose
  /// place in a row is XORed with the row (A: chunk ^ (row / 2) % 4, B:
  /// chunk ^ k % 8), so that the eight rows an `ldmatrix` reads fall in
  /// distinct banks without padding; B's fragments load transposed
  /// (`ldmatrix.trans`). One barrier per step: after it every warp has
  /// finished step i - 1, whose buffer step i + stages - 1 then fills.
  SmallVector<Element> mmaPipelinedBody() {
    const TileShape &shape = match.shape;
    MmaLanes lanes = mmaLanes();
    const int64_t stages = mmaStages;
    const int64_t rowWordsB = shape.cols / 2;
    const int64_t steps = match.kSteps / kMmaK;
    auto xorWords = [&](OpBuilder &at, Value chunk, Value with) {
      return arith::MulIOp::create(at, loc, arith::XOrIOp::create(at, loc, chunk, with),
                                   index(4))
          .getResult();
    };
    // The pieces' words in a buffer: A's (row, chunk), B's (k, chunk).
    AsyncTiles tiles = asyncTiles(
        [&](const Piece &p) {
          return arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, p.major, index(kMmaK / 2)),
              xorWords(b, p.minor,
                       arith::RemUIOp::create(
                           b, loc, arith::DivUIOp::create(b, loc, p.major, index(2)),
                           index(4))));
        },
        [&](const Piece &p) {
          return arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, p.major, index(rowWordsB)),
              xorWords(b, p.minor, arith::RemUIOp::create(b, loc, p.major, index(8))));
        });
    const int64_t stageWordsA = tiles.stageWordsA, stageWordsB = tiles.stageWordsB;
    Value baseA = tiles.baseA, baseB = tiles.baseB;
    auto copyStep = [&](OpBuilder &at, Value step, Value stage) {
      asyncCopyStep(at, tiles, step, stage);
    };
    // ldmatrix rows: A's lane % 16 of fragment i at chunk 2s + lane / 16;
    // B's k 16s + 8 * ((lane / 8) % 2) + lane % 8 at chunk warpCol / 8 + j
    // + lane / 16.
    Value rowA = arith::MulIOp::create(
        b, loc, arith::AddIOp::create(b, loc, lanes.warpRow, lanes.l16), index(kMmaK / 2));
    Value swizzleA = arith::RemUIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lanes.l16, index(2)), index(4));
    Value kB = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, lanes.quarterOdd, index(8)), lanes.l8);
    Value rowB = arith::MulIOp::create(b, loc, kB, index(rowWordsB));
    Value chunkB = arith::AddIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, lanes.warpCol, index(8)), lanes.half);
    // The first stages - 1 steps (past the last step, the last again, into
    // a buffer no step reads).
    for (int64_t s = 0; s + 1 < stages; ++s)
      copyStep(b, index(std::min(s, steps - 1)), index(s));
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getF32Type()));
    const int64_t accumulators = lanes.mTiles * lanes.nTiles * 4;
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(steps), index(1),
                                    SmallVector<Value>(accumulators, zero));
    OpBuilder inner = OpBuilder::atBlockBegin(kLoop.getBody());
    Value i = kLoop.getInductionVar();
    // This invocation's copies of step i have landed; after the barrier,
    // everyone's have, and no warp still reads step i - 1's buffer.
    NVVM::CpAsyncWaitGroupOp::create(inner, loc, stages - 2);
    mlir::gpu::BarrierOp::create(inner, loc);
    Value ahead = add(inner, i, stages - 1);
    copyStep(inner, arith::MinUIOp::create(inner, loc, ahead, index(steps - 1)),
             arith::RemUIOp::create(inner, loc, ahead, index(stages)));
    Value stage = arith::RemUIOp::create(inner, loc, i, index(stages));
    Value firstA = arith::MulIOp::create(inner, loc, stage, index(stageWordsA));
    Value firstB = arith::MulIOp::create(inner, loc, stage, index(stageWordsB));
    SmallVector<Value> acc(kLoop.getRegionIterArgs().begin(),
                           kLoop.getRegionIterArgs().end());
    mmaStep(
        inner, lanes, acc, baseA, baseB,
        [&](int64_t tile, int64_t step) {
          Value chunk = add(inner, lanes.half, 2 * step);
          return add(inner,
                     arith::AddIOp::create(
                         inner, loc, arith::AddIOp::create(inner, loc, firstA, rowA),
                         xorWords(inner, chunk, swizzleA)),
                     16 * tile * (kMmaK / 2));
        },
        [&](int64_t j, int64_t step) {
          return add(inner,
                     arith::AddIOp::create(
                         inner, loc, arith::AddIOp::create(inner, loc, firstB, rowB),
                         xorWords(inner, add(inner, chunkB, j), lanes.l8)),
                     16 * step * rowWordsB);
        },
        NVVM::MMALayout::col);
    scf::YieldOp::create(inner, loc, acc);
    // No copy may land in a buffer the next tile's first steps fill, nor
    // those steps overwrite one a warp still reads.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    mlir::gpu::BarrierOp::create(b, loc);
    return mmaElements(lanes, kLoop.getResults());
  }

  /// f16 and bf16 matmuls on sm_90a's warpgroup tensor cores. The tiles
  /// reach workgroup memory as in mmaPipelinedBody (`cp.async` into
  /// `mmaStages` buffers), laid out as `wgmma` reads them unswizzled: in
  /// core matrices of 8 rows of 16 bytes, 128 contiguous bytes each. A's
  /// are K-major (the core matrix of rows 8r.. and k 8c.. at (4r + c) * 128
  /// bytes of a stage: K-adjacent ones 128 bytes apart, M-adjacent ones
  /// 512), B's N-major (that of k 8q.. and columns 8c.. at (q * cols / 8 +
  /// c) * 128 bytes: N-adjacent ones 128 bytes apart, K-adjacent ones cols *
  /// 16). Per step of 32 along K the warpgroup (the workgroup's four warps;
  /// of the wide tiles, each of two warpgroups, for its 64 rows) issues,
  /// for each 16 of K and each of its blocks of 64 rows, one
  /// `wgmma.mma_async.m64nNk16` (N the tile's columns) that reads A and B
  /// from workgroup memory through descriptors, commits them as one group
  /// and waits for the step before's group, whose buffer the copies of
  /// step i + stages - 1 then refill (one group stays in flight). Copies
  /// landed by `cp.async` (the generic proxy) are made visible to `wgmma`
  /// (the async proxy) by `fence.proxy.async` before the barrier that
  /// publishes them. Warp w holds rows 16w + g and 16w + g + 8 of each
  /// block of 64 (16 (w % 4) of its warpgroup's), columns 8j + 2t and 8j +
  /// 2t + 1 for each j (g = lane / 4, t = lane % 4: the accumulators of
  /// mma.sync's m16n8, repeated along N).
  SmallVector<Element> wgmmaBody() {
    const TileShape &shape = match.shape;
    const int64_t stages = mmaStages, steps = match.kSteps / kMmaK;
    // Warpgroup q takes the blocks of 64 rows q, q + warpgroups, ...
    const int64_t warpgroups = shape.invocations / kMmaInvocations;
    const int64_t blocks = shape.rows / 64 / warpgroups, n = shape.cols;
    const int64_t chunksA = kMmaK / 8, chunksB = n / 8;
    constexpr int64_t kCoreBytes = 128, kCoreWords = kCoreBytes / 4;
    // A core matrix's row r of 16 bytes at word 4r; piece (major, chunk) at
    // core matrix (major / 8) * chunks + chunk.
    auto coreWord = [&](const Piece &p, int64_t chunks) -> Value {
      Value core = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, p.major, index(8)),
                                index(chunks)),
          p.minor);
      return arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, core, index(kCoreWords)),
          arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, p.major, index(8)),
                                index(4)));
    };
    AsyncTiles tiles = asyncTiles([&](const Piece &p) { return coreWord(p, chunksA); },
                                  [&](const Piece &p) { return coreWord(p, chunksB); });
    for (int64_t s = 0; s + 1 < stages; ++s)
      asyncCopyStep(b, tiles, index(std::min(s, steps - 1)), index(s));

    MLIRContext *context = kernel.getContext();
    Type f32 = b.getF32Type(), i64 = b.getI64Type();
    Type element = cast<MemRefType>(match.a.getType()).getElementType();
    const NVVM::WGMMATypes ptxType =
        element.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    const int64_t perBlock = n / 2;  // f32 accumulators per invocation
    auto structType = LLVM::LLVMStructType::getLiteral(context, SmallVector<Type>(perBlock, f32));
    // The accumulators travel through the K loop as the instruction's
    // register structs, one per block of 64 rows: a step's group of wgmma
    // is still running when the next iteration begins.
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
    SmallVector<Value> initial;
    for (int64_t h = 0; h < blocks; ++h) {
      Value packed = LLVM::UndefOp::create(b, loc, structType);
      for (int64_t v = 0; v < perBlock; ++v)
        packed = LLVM::InsertValueOp::create(b, loc, packed, zero, v);
      initial.push_back(packed);
    }
    auto kLoop = scf::ForOp::create(b, loc, index(0), index(steps), index(1), initial);
    OpBuilder inner = OpBuilder::atBlockBegin(kLoop.getBody());
    Value i = kLoop.getInductionVar();
    // This invocation's copies of step i have landed and are visible to
    // wgmma; after the barrier, everyone's are.
    NVVM::CpAsyncWaitGroupOp::create(inner, loc, stages - 2);
    NVVM::FenceProxyOp::create(
        inner, loc, NVVM::ProxyKindAttr::get(context, NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(context, NVVM::SharedSpace::shared_cta));
    mlir::gpu::BarrierOp::create(inner, loc);
    Value stage = arith::RemUIOp::create(inner, loc, i, index(stages));
    // The stage's buffers' byte addresses in the shared state space.
    auto stageAddress = [&](Value base, int64_t stageWords) {
      return arith::AddIOp::create(
          inner, loc, base,
          arith::MulIOp::create(inner, loc, stage, index(stageWords * 4)));
    };
    // This warpgroup's first block of A.
    Value addressA = arith::AddIOp::create(
        inner, loc, stageAddress(tiles.baseA, tiles.stageWordsA),
        arith::MulIOp::create(inner, loc,
                              arith::DivUIOp::create(inner, loc, thread, index(kMmaInvocations)),
                              index(8 * chunksA * kCoreBytes)));
    Value addressB = stageAddress(tiles.baseB, tiles.stageWordsB);
    // A descriptor (no swizzling, base offset 0): bits 0-13 the start
    // address, 16-29 the leading (K) and 32-45 the stride (M or N) byte
    // offsets between core matrices, each in units of 16 bytes.
    auto descriptor = [&](Value address, int64_t offset, int64_t leading, int64_t stride) {
      Value start = arith::IndexCastOp::create(inner, loc, i64, add(inner, address, offset));
      Value encoded = arith::AndIOp::create(
          inner, loc,
          arith::ShRUIOp::create(inner, loc, start,
                                 arith::ConstantOp::create(inner, loc, inner.getI64IntegerAttr(4))),
          arith::ConstantOp::create(inner, loc, inner.getI64IntegerAttr(0x3FFF)));
      const int64_t strides = ((leading >> 4) << 16) | ((stride >> 4) << 32);
      return arith::OrIOp::create(
                 inner, loc, encoded,
                 arith::ConstantOp::create(inner, loc, inner.getI64IntegerAttr(strides)))
          .getResult();
    };
    // Accumulators in registers a wgmma reads and writes: the fence orders
    // the loop's register moves before them.
    NVVM::WgmmaFenceAlignedOp::create(inner, loc);
    SmallVector<Value> acc(kLoop.getRegionIterArgs().begin(), kLoop.getRegionIterArgs().end());
    auto shapeAttr = NVVM::MMAShapeAttr::get(context, 64, n, 16);
    for (int64_t s = 0; s < kMmaK / 16; ++s) {
      // B's k 16s..16s+15: two rows of core matrices.
      Value descB = descriptor(addressB, 2 * s * chunksB * kCoreBytes,
                               /*leading=*/chunksB * kCoreBytes, /*stride=*/kCoreBytes);
      for (int64_t h = 0; h < blocks; ++h) {
        // A's block h of this warpgroup at k 16s..: eight core matrices
        // down, two across.
        Value descA = descriptor(addressA, (h * warpgroups * 8 * chunksA + 2 * s) * kCoreBytes,
                                 /*leading=*/kCoreBytes, /*stride=*/chunksA * kCoreBytes);
        acc[h] = NVVM::WgmmaMmaAsyncOp::create(
            inner, loc, structType, acc[h], descA, descB, shapeAttr, ptxType, ptxType,
            NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
            NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
            /*layoutB: row is N-major (transposed)*/ NVVM::MMALayout::row,
            NVVM::MMAIntOverflowAttr());
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(inner, loc);
    // Step i - 1's group has finished (step i's may run on): its buffer is
    // free for the copies of step i + stages - 1.
    NVVM::WgmmaWaitGroupSyncOp::create(inner, loc, 1);
    Value ahead = add(inner, i, stages - 1);
    asyncCopyStep(inner, tiles, arith::MinUIOp::create(inner, loc, ahead, index(steps - 1)),
                  arith::RemUIOp::create(inner, loc, ahead, index(stages)));
    scf::YieldOp::create(inner, loc, acc);
    // The last group finishes before its sums are read, and no copy may
    // land in a buffer the next tile's first steps fill.
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    mlir::gpu::BarrierOp::create(b, loc);
    SmallVector<Value> sums;
    for (int64_t h = 0; h < blocks; ++h)
      for (int64_t v = 0; v < perBlock; ++v)
        sums.push_back(LLVM::ExtractValueOp::create(b, loc, kLoop.getResult(h), v));

    // Warp w's rows start at 16w, its blocks 64 * warpgroups apart; all
    // the tile's columns.
    MmaLanes lanes;
    lanes.lane = arith::RemUIOp::create(b, loc, thread, index(32));
    lanes.g = arith::DivUIOp::create(b, loc, lanes.lane, index(4));
    lanes.t = arith::RemUIOp::create(b, loc, lanes.lane, index(4));
    lanes.warpRow = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, thread, index(32)), index(16));
    lanes.warpCol = index(0);
    lanes.mTiles = blocks;
    lanes.nTiles = n / 8;
    return mmaElements(lanes, sums, 64 * warpgroups);
  }

  /// Stores C[row, col]: the sum, plus the fill value or C's old value,
  /// through the elementwise ops, under row < M where tiles overhang M.
  void store(const Element &element) {
    OpBuilder::InsertionGuard guard(b);
    if (masked || columnsMasked) {
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           element.row, m);
      if (columnsMasked)
        inside = arith::AndIOp::create(
            b, loc, inside,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, element.col,
                                  index(match.n)));
      auto ifOp = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    Value indices[2] = {element.row, element.col};
    // The epilogue's operands are indexed like the output (a convolution's
    // n, oh, ow, f).
    SmallVector<Value> outputIndices;
    if (!match.epilogue.empty())
      outputIndices = indicesOfC(element.row, element.col);
    Type cElement = cType.getElementType();
    Value start = match.fill
                      ? widen(b, loc, match.fill.value())
                      : widen(b, loc, memref::LoadOp::create(b, loc, cStart, indices));
    Value value = arith::AddFOp::create(b, loc, start, element.value);
    if (!cElement.isF32())
      value = arith::TruncFOp::create(b, loc, cElement, value);
    for (linalg::GenericOp generic : match.epilogue) {
      IRMapping mapping;
      Block *body = generic.getBody();
      for (OpOperand *input : generic.getDpsInputOperands()) {
        BlockArgument arg = body->getArgument(input->getOperandNumber());
        if (input->get() == match.c) {
          mapping.map(arg, value);
          continue;
        }
        SmallVector<Value> at;
        for (AffineExpr result : generic.getMatchingIndexingMap(input).getResults())
          at.push_back(outputIndices[cast<AffineDimExpr>(result).getPosition()]);
        mapping.map(arg, memref::LoadOp::create(b, loc, input->get(), at));
      }
      mapping.map(body->getArgument(generic.getNumDpsInputs()), value);
      for (Operation &op : body->without_terminator())
        b.clone(op, mapping);
      value = mapping.lookup(
          cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
    }
    memref::StoreOp::create(b, loc, value, cMatrix, indices);
  }

  func::FuncOp kernel;
  MatmulKernel &match;
  const int64_t maxWorkgroupCount;
  // Workgroup-memory buffers of the tensor-core tiles (1: one, the next
  // step staged in registers); `pipelined` when more, by cp.async.
  const int64_t mmaStages, mmaWorkgroupMemory;
  bool pipelined = false;
  // The pipelined tiles multiplied by wgmma (kind wgmma, 128 invocations).
  bool wgmma = false;
  Location loc;
  OpBuilder b;
  // B and C as matrices: a convolution's filter and output viewed so;
  // cStart what C's sums start from where there is no fill (C, or the
  // binding copied into it).
  Value bMatrix, cMatrix, cStart;
  MemRefType cType;
  llvm::DenseMap<int64_t, Value> constants;
  bool masked = false, columnsMasked = false;
  Value m, lastRow, thread, row0, col0;
  Value sharedA, sharedB, partials;
  Operation *lastAllocation = nullptr;
};

struct GPUMatrixTilesPass
    : impl::GPUMatrixTilesPassBase<GPUMatrixTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal() || kernel.isPrivate())
      return;
    if (kind != "mfma" && kind != "wmma32" && kind != "scalar" &&
        kind != "shared" && !nvidiaKind(kind)) {
      kernel.emitError("strata-gpu-matrix-tiles: kind '")
          << kind << "' is not one of mfma, wmma32, scalar, shared, mma and wgmma";
      return signalPassFailure();
    }
    std::optional<MatmulKernel> match =
        matchKernel(kernel, kind, fmaTilesFrom, mmaWideTiles, mmaStages);
    if (!match)
      return;
    if (mmaStages < 1) {
      kernel.emitError("strata-gpu-matrix-tiles: mma-stages must be at least 1, not ")
          << mmaStages;
      return signalPassFailure();
    }
    if (failed(TileWriter(kernel, *match, maxWorkgroupCount, mmaStages, mmaWorkgroupMemory)
                   .write(kind)))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::gpu
