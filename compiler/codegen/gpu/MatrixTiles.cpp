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
//
// (AMD's CDNA and RDNA3 instruction-set references; no AMD GPU has run these
// kernels yet, see docs/codegen-gpu.md.)
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/gpu/KernelABI.h"
#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUMATRIXTILESPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

constexpr int64_t kTile = 32;
constexpr int64_t kInvocations = 64;

/// A kernel the pass rewrites: C (+)= A * B, then elementwise ops on C.
struct MatmulKernel {
  linalg::FillOp fill;  // null: C's values accumulate
  linalg::MatmulOp matmul;
  SmallVector<linalg::GenericOp> epilogue;
  Value a, b, c;
  int64_t n = 0, k = 0;
  bool f16 = false;  // A and B are f16 (else f32)
};

bool isElementwiseOnC(linalg::GenericOp generic, Value c) {
  if (generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != c ||
      generic.getNumLoops() != 2 ||
      generic.getNumParallelLoops() != 2)
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

/// The kernel's matmul, when its whole body is what the pass rewrites and
/// the shapes fit `kStep`.
std::optional<MatmulKernel> matchKernel(func::FuncOp kernel) {
  if (!kernel.getBody().hasOneBlock())
    return std::nullopt;
  MatmulKernel match;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (match.fill || match.matmul)
        return std::nullopt;
      match.fill = fill;
      continue;
    }
    if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
      if (match.matmul || matmul.hasUserDefinedMaps() ||
          !matmul.hasPureBufferSemantics())
        return std::nullopt;
      match.matmul = matmul;
      continue;
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
      if (!match.matmul || !generic.hasPureBufferSemantics())
        return std::nullopt;
      match.epilogue.push_back(generic);
      continue;
    }
    if (!isMemoryEffectFree(&op) || op.getNumRegions())
      return std::nullopt;
  }
  if (!match.matmul)
    return std::nullopt;
  match.a = match.matmul.getDpsInputs()[0];
  match.b = match.matmul.getDpsInputs()[1];
  match.c = match.matmul.getDpsInits()[0];
  if (match.fill && (match.fill.getDpsInits()[0] != match.c ||
                     !match.fill.value().getType().isFloat()))
    return std::nullopt;
  for (linalg::GenericOp generic : match.epilogue)
    if (!isElementwiseOnC(generic, match.c))
      return std::nullopt;
  auto aType = cast<MemRefType>(match.a.getType());
  auto bType = cast<MemRefType>(match.b.getType());
  auto cType = cast<MemRefType>(match.c.getType());
  Type ea = aType.getElementType(), eb = bType.getElementType(),
       ec = cType.getElementType();
  if (ea != eb || !(ea.isF32() || ea.isF16()) || !(ec.isF32() || ec.isF16()))
    return std::nullopt;
  if (ea.isF32() && !ec.isF32())
    return std::nullopt;
  match.f16 = ea.isF16();
  match.n = bType.getDimSize(1);
  match.k = bType.getDimSize(0);
  const int64_t kStep = match.f16 ? 16 : 4;
  if (ShapedType::isDynamic(match.n) || ShapedType::isDynamic(match.k) ||
      match.n % kTile != 0 || match.k % kStep != 0 || match.k == 0)
    return std::nullopt;
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
  TileWriter(func::FuncOp kernel, MatmulKernel &match, int64_t maxWorkgroupCount)
      : kernel(kernel), match(match), maxWorkgroupCount(maxWorkgroupCount),
        loc(match.matmul.getLoc()), b(match.matmul),
        cType(cast<MemRefType>(match.c.getType())) {}

  /// Replaces the kernel's body by the tile loop; `kind` is "mfma",
  /// "wmma32" or "scalar" (wmma32 has f16 instructions only).
  void write(StringRef kind) {
    const bool staticM = !cType.isDynamicDim(0);
    masked = !staticM || cType.getDimSize(0) % kTile != 0;
    m = staticM ? index(cType.getDimSize(0))
                : memref::DimOp::create(b, loc, match.c, index(0)).getResult();
    lastRow = arith::SubIOp::create(b, loc, m, index(1));
    const int64_t tilesN = match.n / kTile;
    Value tiles = arith::MulIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, m, index(kTile)), index(tilesN));
    thread = mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value block = mlir::gpu::BlockIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value grid = mlir::gpu::GridDimOp::create(b, loc, mlir::gpu::Dimension::x);
    auto tileLoop = scf::ForOp::create(b, loc, block, tiles, grid);
    b.setInsertionPointToStart(tileLoop.getBody());
    Value tile = tileLoop.getInductionVar();
    row0 = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, tile, index(tilesN)), index(kTile));
    col0 = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, tile, index(tilesN)), index(kTile));

    const bool matrix = kind == "mfma" || (kind == "wmma32" && match.f16);
    SmallVector<Element> elements =
        matrix ? matrixBody(/*wmma=*/kind == "wmma32") : scalarBody();
    for (const Element &element : elements)
      store(element);

    // The grid: one tile per workgroup at a time, any count being correct.
    Builder attrs(kernel.getContext());
    kernel->setAttr("strata.workgroup_size",
                    attrs.getDenseI32ArrayAttr({int32_t(kInvocations), 1, 1}));
    if (staticM) {
      int64_t count = std::clamp<int64_t>(
          (cType.getDimSize(0) + kTile - 1) / kTile * tilesN, 1, maxWorkgroupCount);
      kernel->setAttr("strata.workgroup_count",
                      attrs.getDenseI32ArrayAttr({int32_t(count), 1, 1}));
    } else {
      // The host dispatches ceil(factor * M / 64) workgroups, about
      // M / 32 * N / 32.
      unsigned word = PushConstantLayout::of(kernel).dimWord(
          kernel, cast<BlockArgument>(match.c).getArgNumber(), 0);
      kernel->setAttr(
          "strata.workgroup_count",
          attrs.getDictionaryAttr(
              {attrs.getNamedAttr("factor", attrs.getI64IntegerAttr(2 * tilesN)),
               attrs.getNamedAttr("words", attrs.getDenseI32ArrayAttr({int32_t(word)})),
               attrs.getNamedAttr("max", attrs.getI64IntegerAttr(maxWorkgroupCount))}));
    }
    kernel->setAttr("strata.matrix_tiles",
                    attrs.getStringAttr(matrix ? kind : "scalar"));

    for (linalg::GenericOp generic : llvm::reverse(match.epilogue))
      generic->erase();
    match.matmul->erase();
    if (match.fill)
      match.fill->erase();
  }

private:
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

  /// A[row, k], the row clamped: rows past M compute what is never stored.
  Value loadA(OpBuilder &at, Value row, Value k) {
    if (masked)
      row = arith::MinUIOp::create(at, loc, row, lastRow);
    return memref::LoadOp::create(at, loc, match.a, ValueRange{row, k});
  }

  Value loadB(OpBuilder &at, Value k, Value col) {
    return memref::LoadOp::create(at, loc, match.b, ValueRange{k, col});
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

  /// Stores C[row, col]: the sum, plus the fill value or C's old value,
  /// through the elementwise ops, under row < M where tiles overhang M.
  void store(const Element &element) {
    OpBuilder::InsertionGuard guard(b);
    if (masked) {
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           element.row, m);
      auto ifOp = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    Value indices[2] = {element.row, element.col};
    Type cElement = cType.getElementType();
    Value start = match.fill
                      ? widen(b, loc, match.fill.value())
                      : widen(b, loc, memref::LoadOp::create(b, loc, match.c, indices));
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
          at.push_back(indices[cast<AffineDimExpr>(result).getPosition()]);
        mapping.map(arg, memref::LoadOp::create(b, loc, input->get(), at));
      }
      mapping.map(body->getArgument(generic.getNumDpsInputs()), value);
      for (Operation &op : body->without_terminator())
        b.clone(op, mapping);
      value = mapping.lookup(
          cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
    }
    memref::StoreOp::create(b, loc, value, match.c, indices);
  }

  func::FuncOp kernel;
  MatmulKernel &match;
  const int64_t maxWorkgroupCount;
  Location loc;
  OpBuilder b;
  MemRefType cType;
  llvm::DenseMap<int64_t, Value> constants;
  bool masked = false;
  Value m, lastRow, thread, row0, col0;
};

struct GPUMatrixTilesPass
    : impl::GPUMatrixTilesPassBase<GPUMatrixTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal() || kernel.isPrivate())
      return;
    if (kind != "mfma" && kind != "wmma32" && kind != "scalar") {
      kernel.emitError("strata-gpu-matrix-tiles: kind '")
          << kind << "' is not one of mfma, wmma32 and scalar";
      return signalPassFailure();
    }
    std::optional<MatmulKernel> match = matchKernel(kernel);
    if (!match)
      return;
    TileWriter(kernel, *match, maxWorkgroupCount).write(kind);
  }
};

} // namespace
} // namespace strata::gpu
