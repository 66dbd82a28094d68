//===- PaddedWindows.cpp - Pads read through per-workgroup windows --------===//
//
// A pad in the kernel of the convolution that reads it (strata-form-dispatches
// puts it there for modules that only target CPUs) bufferizes into a
// temporary of the padded size, written by a copy of the input into its
// interior and fills of its border (CPUComputeInDestinations) before the
// convolution reads it. Whole, it is one more trip through memory for the
// input (MobileNetV2's 112 x 112 x 96 pad took longer than the depthwise
// convolution after it), and since a workgroup's rows of the convolution
// read rows of it that other workgroups wrote, the kernel could not be split.
//
// strata-cpu-window-padded-inputs replaces such a temporary by a placeholder
// with its shape: a memref.reinterpret_cast of the input marked
// strata_cpu.padding = {low = [...], value = v}, which nothing writes, so
// the kernel splits like one reading its input directly. The placeholder
// reads past the input at the border and is never read:
// strata-cpu-materialize-padded-windows, after strata-cpu-distribute-to-
// workgroups, gives each op reading it a window in the thread's local memory,
// the part of the padded input the op's tile reads, filled right before it:
// the part outside the input with v, the rest copied from the input. A
// workgroup of T rows of a 3 x 3 convolution of stride s copies
// (T - 1) s + 3 rows, while they come from memory once and stay in the
// caches for the convolution.
//
// A depthwise convolution or a pooling does too little per element read for
// that: a window of 3 of MobileNetV2's 112 x 96 rows is larger than L1, so
// each element was stored there, evicted, and read back from L2, and the
// copy took most of the kernel's time (ResNet-18's max pooling: 312 us, 204
// in place). It reads the input in place instead
// (readsPaddedInputInPlace): the placeholder stays, and once the
// convolution is vectorized guardPaddedReads makes each vector read of it
// a read of the input when its box lies inside (all but the tiles at the
// border), or one read per row of channels at clamped indices, with the
// padding value selected where they were outside.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/PaddedWindows.h"
#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUWINDOWPADDEDINPUTSPASS
#define GEN_PASS_DEF_CPUMATERIALIZEPADDEDWINDOWSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// On the placeholder: {low = array<i64>, value = the padding value}.
constexpr llvm::StringLiteral kPaddingAttr = "strata_cpu.padding";

/// Replaces the padded temporary `alloc` by a placeholder when it is one:
/// static, written only by one linalg.copy into a box of it and linalg.fills
/// of one constant into boxes that with the copy's cover it exactly, and
/// read whole by one linalg op after them, with nothing writing the copied
/// input in between.
void windowPaddedInput(IRRewriter &rewriter, Operation *alloc) {
  Value padded = alloc->getResult(0);
  auto type = cast<MemRefType>(padded.getType());
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat() ||
      computeProduct(type.getShape()) * type.getElementTypeBitWidth() / 8 > codegen::kMaxWindowedPadBytes)
    return;
  linalg::CopyOp copy;
  StaticBox interior;
  SmallVector<Operation *> writers, erased;
  SmallVector<StaticBox> borders;
  Attribute value;
  OpOperand *read = nullptr;
  for (OpOperand &use : padded.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user)) {
      erased.push_back(user);
      continue;
    }
    if (auto view = dyn_cast<memref::SubViewOp>(user)) {
      std::optional<StaticBox> box = staticBox(view);
      if (!box || view.getSourceType().getRank() != view.getType().getRank() || !view->hasOneUse())
        return;
      Operation *writer = *view->getUsers().begin();
      auto fill = dyn_cast<linalg::FillOp>(writer);
      auto copyOp = dyn_cast<linalg::CopyOp>(writer);
      Attribute fillValue;
      if (fill && fill.getDpsInits()[0] == view.getResult() &&
          matchPattern(fill.getInputs()[0], m_Constant(&fillValue)) && (!value || value == fillValue)) {
        value = fillValue;
        borders.push_back(*box);
      } else if (copyOp && !copy && copyOp.getOutputs()[0] == view.getResult()) {
        copy = copyOp;
        interior = *box;
      } else {
        return;
      }
      writers.push_back(writer);
      erased.push_back(view);
      continue;
    }
    auto reader = dyn_cast<linalg::LinalgOp>(user);
    if (read || !reader || !reader.isDpsInput(&use))
      return;
    read = &use;
  }
  if (!copy || !read || borders.empty())
    return;
  Operation *reader = read->getOwner();
  if (llvm::count(reader->getOperands(), padded) != 1)
    return;
  // The boxes cover the buffer exactly: pairwise disjoint, as many elements.
  int64_t covered = computeProduct(interior.sizes);
  for (auto [i, border] : llvm::enumerate(borders)) {
    if (!disjoint(border, interior))
      return;
    for (const StaticBox &other : ArrayRef<StaticBox>(borders).take_front(i))
      if (!disjoint(border, other))
        return;
    covered += computeProduct(border.sizes);
  }
  if (covered != type.getNumElements())
    return;
  // The input: a whole buffer of the element type, not written between the
  // copy and the reader; the writers run before the reader.
  Value input = copy.getInputs()[0];
  auto inputType = dyn_cast<MemRefType>(input.getType());
  if (!inputType || !inputType.hasStaticShape() || !inputType.getLayout().isIdentity() ||
      inputType.getElementType() != type.getElementType() || inputType.getShape() != ArrayRef(interior.sizes))
    return;
  Block *block = reader->getBlock();
  for (Operation *writer : writers)
    if (writer->getBlock() != block || !writer->isBeforeInBlock(reader))
      return;
  Value inputRoot = getBufferRoot(input);
  for (Operation *op = copy->getNextNode(); op && op != reader; op = op->getNextNode()) {
    if (isMemoryEffectFree(op) || llvm::is_contained(writers, op) ||
        hasSingleEffect<MemoryEffects::Allocate>(op))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
        llvm::any_of(linalgOp.getDpsInits(), [&](Value init) { return getBufferRoot(init) == inputRoot; }))
      return;
  }

  rewriter.setInsertionPoint(copy);
  Builder &b = rewriter;
  auto placeholder = memref::ReinterpretCastOp::create(rewriter, alloc->getLoc(), type, input, /*offset=*/0,
                                                       type.getShape(), computeSuffixProduct(type.getShape()));
  placeholder->setAttr(kPaddingAttr,
                       b.getDictionaryAttr({b.getNamedAttr("low", b.getDenseI64ArrayAttr(interior.offsets)),
                                            b.getNamedAttr("value", value)}));
  read->set(placeholder.getResult());
  for (Operation *writer : writers)
    rewriter.eraseOp(writer);
  for (Operation *op : erased)
    rewriter.eraseOp(op);
  rewriter.eraseOp(alloc);
}

struct CPUWindowPaddedInputsPass : impl::CPUWindowPaddedInputsPassBase<CPUWindowPaddedInputsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!isKernel(func))
      return;
    SmallVector<Operation *> allocs;
    func.walk([&](Operation *op) {
      if (isa<memref::AllocOp, memref::AllocaOp>(op))
        allocs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *alloc : allocs)
      windowPaddedInput(rewriter, alloc);
  }
};

/// One read of a placeholder: the op operand and the box it reads, in the
/// placeholder's coordinates.
struct WindowRead {
  OpOperand *operand;
  SmallVector<OpFoldResult> offsets, sizes;
};

/// The reads of `value` (the placeholder or a view of it at `offsets` with
/// `sizes`): through views of unit strides that keep every dimension, by
/// linalg ops as inputs. Fails on any other use.
LogicalResult collectReads(OpBuilder &b, Value value, ArrayRef<OpFoldResult> offsets,
                           ArrayRef<OpFoldResult> sizes, SmallVectorImpl<WindowRead> &reads,
                           SmallVectorImpl<Operation *> &views) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<memref::SubViewOp>(user)) {
      if (view.getSourceType().getRank() != view.getType().getRank() ||
          !llvm::all_of(view.getMixedStrides(), [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
        return user->emitOpError("views a padded input in a way its window cannot follow");
      b.setInsertionPoint(view);
      SmallVector<OpFoldResult> inner;
      for (auto [outer, offset] : llvm::zip(offsets, view.getMixedOffsets())) {
        AffineExpr x, y;
        bindSymbols(b.getContext(), x, y);
        inner.push_back(affine::makeComposedFoldedAffineApply(b, view.getLoc(), x + y, {outer, offset}));
      }
      views.push_back(view);
      if (failed(collectReads(b, view.getResult(), inner, view.getMixedSizes(), reads, views)))
        return failure();
      continue;
    }
    auto reader = dyn_cast<linalg::LinalgOp>(user);
    if (!reader || !reader.isDpsInput(&use))
      return user->emitOpError("uses a padded input other than as the input of a linalg op");
    reads.push_back({&use, llvm::to_vector(offsets), llvm::to_vector(sizes)});
  }
  return success();
}

/// The window of `read` from `input` padded by `low` with `value`: a buffer
/// of the read's box's (upper bound) shape in local memory, filled with
/// `value` where the box lies outside the input and copied from the input
/// elsewhere, right before the reader (and before the fill of its output
/// that it takes in, TileAndVectorize's fusableFill), which then reads it.
LogicalResult materialize(IRRewriter &rewriter, const WindowRead &read, Value input, ArrayRef<int64_t> low,
                          ArrayRef<int64_t> paddedShape, TypedAttr value, int64_t vectorBits) {
  Operation *reader = read.operand->getOwner();
  Location loc = reader->getLoc();
  Value box = read.operand->get();
  auto boxType = cast<MemRefType>(box.getType());
  auto inputType = cast<MemRefType>(input.getType());
  const int64_t rank = boxType.getRank();

  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!boxType.isDynamicDim(d)) {
      shape.push_back(boxType.getDimSize(d));
      continue;
    }
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB, ValueBoundsConstraintSet::Variable(box, d),
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (failed(bound))
      return reader->emitOpError("reads a padded input through a window of unbounded size");
    shape.push_back(*bound);
  }

  rewriter.setInsertionPoint(reader);
  Type element = boxType.getElementType();
  auto buffer = memref::AllocaOp::create(rewriter, loc, MemRefType::get(shape, element),
                                         rewriter.getI64IntegerAttr(64));
  buffer->setAttr(kLocalMemoryAttr, rewriter.getUnitAttr());
  SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0)), ones(rank, rewriter.getIndexAttr(1));
  Value window = buffer;
  if (!boxType.hasStaticShape())
    window = memref::SubViewOp::create(rewriter, loc, buffer, zeros, read.sizes, ones);

  // Per dimension: the box starts at `start` in the input (negative in the
  // low padding); the input's part of it is `count` elements from input
  // position `from`, at window position `to`.
  auto index = [&](OpFoldResult v) { return getValueOrCreateConstantIndexOp(rewriter, loc, v); };
  auto constant = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(rewriter, loc, v); };
  SmallVector<OpFoldResult> from, to, count, windowSizes;
  for (int64_t d = 0; d < rank; ++d) {
    Value size = index(read.sizes[d]);
    Value start = arith::SubIOp::create(rewriter, loc, index(read.offsets[d]), constant(low[d]));
    Value zero = constant(0), extent = constant(inputType.getDimSize(d));
    Value first = arith::MinSIOp::create(rewriter, loc, arith::MaxSIOp::create(rewriter, loc, start, zero), extent);
    Value end = arith::MinSIOp::create(rewriter, loc, arith::AddIOp::create(rewriter, loc, start, size), extent);
    Value n = arith::MaxSIOp::create(rewriter, loc, arith::SubIOp::create(rewriter, loc, end, first), zero);
    Value skipped = arith::MinSIOp::create(
        rewriter, loc, arith::MaxSIOp::create(rewriter, loc, arith::SubIOp::create(rewriter, loc, zero, start), zero),
        size);
    from.push_back(first);
    to.push_back(skipped);
    count.push_back(n);
    windowSizes.push_back(size);
  }

  // One register of lanes along the innermost dimension (no more than it
  // has: 3 channels of an RGB image take 3), 1 elsewhere.
  TileSizes sizes;
  sizes.workgroup.assign(rank, 0);
  sizes.vector.assign(rank, 1);
  sizes.vector.back() = std::min(vectorLanes(element, vectorBits), shape.back());
  Value padding = arith::ConstantOp::create(rewriter, loc, value);
  auto fillBox = [&](ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> extents) {
    Value slab = memref::SubViewOp::create(rewriter, loc, window, offsets, extents, ones);
    writeTileSizes(linalg::FillOp::create(rewriter, loc, padding, slab), sizes);
  };
  // The padding: before and after the input's part along each padded
  // dimension, whole along the others (the corners are filled twice).
  for (int64_t d = 0; d < rank; ++d) {
    if (low[d] == 0 && paddedShape[d] == inputType.getDimSize(d))
      continue;
    SmallVector<OpFoldResult> offsets = zeros, extents = windowSizes;
    extents[d] = to[d];
    fillBox(offsets, extents);
    Value after = arith::AddIOp::create(rewriter, loc, index(to[d]), index(count[d]));
    offsets[d] = after;
    extents[d] = arith::SubIOp::create(rewriter, loc, index(windowSizes[d]), after).getResult();
    fillBox(offsets, extents);
  }
  Value source = memref::SubViewOp::create(rewriter, loc, input, from, count, ones);
  Value target = memref::SubViewOp::create(rewriter, loc, window, to, count, ones);
  writeTileSizes(linalg::CopyOp::create(rewriter, loc, source, target), sizes);
  read.operand->set(window);

  // A fill of the reader's output before the window moves after it, back
  // next to the reader, which takes it in (TileAndVectorize's fusableFill).
  Operation *previous = buffer->getPrevNode();
  while (previous && isMemoryEffectFree(previous))
    previous = previous->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(previous);
  auto linalgReader = cast<linalg::LinalgOp>(reader);
  if (fill && linalgReader.getNumDpsInits() == 1 &&
      getBufferRoot(fill.getDpsInits()[0]) == getBufferRoot(linalgReader.getDpsInits()[0]))
    fill->moveBefore(reader);
  return success();
}

struct CPUMaterializePaddedWindowsPass
    : impl::CPUMaterializePaddedWindowsPassBase<CPUMaterializePaddedWindowsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<memref::ReinterpretCastOp> placeholders;
    func.walk([&](memref::ReinterpretCastOp cast) {
      if (cast->hasAttr(kPaddingAttr))
        placeholders.push_back(cast);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ReinterpretCastOp placeholder : placeholders) {
      auto padding = cast<DictionaryAttr>(placeholder->getAttr(kPaddingAttr));
      auto low = dyn_cast_or_null<DenseI64ArrayAttr>(padding.get("low"));
      auto value = dyn_cast_or_null<TypedAttr>(padding.get("value"));
      auto type = placeholder.getType();
      if (!low || !value || int64_t(low.size()) != type.getRank()) {
        placeholder.emitOpError("has a malformed ") << kPaddingAttr;
        return signalPassFailure();
      }
      SmallVector<WindowRead> reads;
      SmallVector<Operation *> views;
      SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(&getContext(), type.getShape());
      if (failed(collectReads(rewriter, placeholder.getResult(), offsets, sizes, reads, views)))
        return signalPassFailure();
      auto inputType = cast<MemRefType>(placeholder.getSource().getType());
      bool inPlace = false;
      for (const WindowRead &read : reads) {
        if (readsPaddedInputInPlace(cast<linalg::LinalgOp>(read.operand->getOwner()), low.asArrayRef(),
                                    type.getShape(), inputType, peel)) {
          inPlace = true;
          continue;
        }
        if (failed(materialize(rewriter, read, placeholder.getSource(), low.asArrayRef(), type.getShape(), value,
                               vectorBits)))
          return signalPassFailure();
      }
      for (Operation *view : llvm::reverse(views))
        if (view->use_empty())
          rewriter.eraseOp(view);
      // Read in place: guardPaddedReads rewrites its reads once vectorized.
      if (inPlace)
        continue;
      if (!placeholder->use_empty()) {
        placeholder.emitOpError("is still read after its windows were made");
        return signalPassFailure();
      }
      rewriter.eraseOp(placeholder);
    }
  }
};

} // namespace

bool readsPaddedInputInPlace(linalg::LinalgOp reader, ArrayRef<int64_t> low, ArrayRef<int64_t> paddedShape,
                             MemRefType input, bool peeled) {
  // The channels (innermost) and the batch are not padded: a guarded read's
  // slow path reads whole rows of channels, each the input's or padding.
  if (!isa<linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcMinOp,
           linalg::PoolingNhwcSumOp>(reader.getOperation()) ||
      input.getRank() != 4 ||
      !isa<FloatType>(input.getElementType()))
    return false;
  for (int64_t d : {int64_t{0}, int64_t{3}})
    if (low[d] != 0 || paddedShape[d] != input.getDimSize(d))
      return false;
  FailureOr<std::optional<TileSizes>> sizes = readTileSizes(reader);
  if (failed(sizes) || !sizes->has_value())
    return false;
  if (peeled)
    return true;
  for (auto [size, extent] : llvm::zip((*sizes)->vector, reader.getStaticLoopRanges()))
    if (size != 0 && (ShapedType::isDynamic(extent) || extent % size != 0))
      return false;
  return true;
}

/// Replaces `read`, of the placeholder of `input` padded by `low` with
/// `value`, by the guarded read of guardPaddedReads.
static LogicalResult guardPaddedRead(RewriterBase &rewriter, vector::TransferReadOp read, Value input,
                                     ArrayRef<int64_t> low, ArrayRef<int64_t> paddedShape, TypedAttr value) {
  Location loc = read.getLoc();
  auto inputType = cast<MemRefType>(input.getType());
  VectorType vectorType = read.getVectorType();
  const int64_t rank = inputType.getRank();
  AffineMap map = read.getPermutationMap();
  // The extent read along each memref dimension, and the vector dimension
  // that reads it (-1: none).
  SmallVector<int64_t> extents(rank, 1), vectorDim(rank, -1);
  for (auto [j, size] : llvm::enumerate(vectorType.getShape())) {
    extents[map.getDimPosition(j)] = size;
    vectorDim[map.getDimPosition(j)] = j;
  }
  auto isPadded = [&](int64_t d) { return low[d] != 0 || paddedShape[d] != inputType.getDimSize(d); };
  if (isPadded(rank - 1))
    return read->emitOpError("reads a padded input whose innermost dimension is padded in place");
  rewriter.setInsertionPoint(read);
  auto constant = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(rewriter, loc, v); };
  SmallVector<Value> shifted;
  for (auto [d, index] : llvm::enumerate(read.getIndices()))
    shifted.push_back(low[d] == 0 ? index : arith::SubIOp::create(rewriter, loc, index, constant(low[d])).getResult());

  // `all` && 0 <= index <= last (`all` null: true).
  Value zero = constant(0);
  auto andWithin = [&](Value all, Value index, Value last) -> Value {
    Value within = arith::AndIOp::create(
        rewriter, loc, arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, index, zero),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle, index, last));
    return all ? arith::AndIOp::create(rewriter, loc, all, within).getResult() : within;
  };

  // Fast: the box lies inside the input.
  Value inside;
  for (int64_t d = 0; d < rank; ++d)
    if (isPadded(d))
      inside = andWithin(inside, shifted[d], constant(inputType.getDimSize(d) - extents[d]));
  SmallVector<bool> inBounds(vectorType.getRank(), true);
  if (!inside) {
    rewriter.replaceOpWithNewOp<vector::TransferReadOp>(read, vectorType, input, shifted, read.getPadding(), map,
                                                        inBounds);
    return success();
  }
  auto branch = scf::IfOp::create(rewriter, loc, TypeRange{vectorType}, inside, /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(&branch.getThenRegion().front());
  Value whole =
      vector::TransferReadOp::create(rewriter, loc, vectorType, input, shifted, read.getPadding(), map, inBounds);
  scf::YieldOp::create(rewriter, loc, whole);

  // Slow: row by row of the innermost dimension, each read at indices
  // clamped into the input and replaced by the padding value where they
  // were outside it.
  rewriter.setInsertionPointToStart(&branch.getElseRegion().front());
  Value padding = arith::ConstantOp::create(rewriter, loc, value);
  auto rowType = VectorType::get({vectorType.getShape().back()}, vectorType.getElementType());
  Value paddingRow = vector::BroadcastOp::create(rewriter, loc, rowType, padding);
  Value result = vector::BroadcastOp::create(rewriter, loc, vectorType, padding);
  ArrayRef<int64_t> leading = vectorType.getShape().drop_back();
  SmallVector<int64_t> strides = computeSuffixProduct(leading);
  const int64_t rows = computeProduct(leading);
  for (int64_t linear = 0; linear < rows; ++linear) {
    SmallVector<int64_t> position = delinearize(linear, strides);
    SmallVector<Value> indices;
    Value valid;
    for (int64_t d = 0; d < rank; ++d) {
      Value index = shifted[d];
      int64_t step = vectorDim[d] >= 0 && d < rank - 1 ? position[vectorDim[d]] : 0;
      if (step != 0)
        index = arith::AddIOp::create(rewriter, loc, index, constant(step));
      if (isPadded(d)) {
        Value last = constant(inputType.getDimSize(d) - 1);
        valid = andWithin(valid, index, last);
        index = arith::MinSIOp::create(rewriter, loc, arith::MaxSIOp::create(rewriter, loc, index, zero), last);
      }
      indices.push_back(index);
    }
    Value row = vector::LoadOp::create(rewriter, loc, rowType, input, indices);
    row = arith::SelectOp::create(rewriter, loc, valid, row, paddingRow);
    result = vector::InsertOp::create(rewriter, loc, row, result, position);
  }
  scf::YieldOp::create(rewriter, loc, result);
  rewriter.replaceOp(read, branch.getResults());
  return success();
}

/// Whether a transfer with `map` reads memref dimensions in their order, no
/// dimension twice and the innermost one last (in rows of contiguous
/// elements).
static bool readsInOrder(AffineMap map) {
  if (map.getNumResults() == 0 || !map.isProjectedPermutation(/*allowZeroInResults=*/false) ||
      map.getDimPosition(map.getNumResults() - 1) != map.getNumDims() - 1)
    return false;
  for (unsigned j = 1; j < map.getNumResults(); ++j)
    if (map.getDimPosition(j) <= map.getDimPosition(j - 1))
      return false;
  return true;
}

LogicalResult guardPaddedReads(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<memref::ReinterpretCastOp> placeholders;
  func.walk([&](memref::ReinterpretCastOp cast) {
    if (cast->hasAttr(kPaddingAttr))
      placeholders.push_back(cast);
  });
  for (memref::ReinterpretCastOp placeholder : placeholders) {
    auto padding = cast<DictionaryAttr>(placeholder->getAttr(kPaddingAttr));
    auto low = dyn_cast_or_null<DenseI64ArrayAttr>(padding.get("low"));
    auto value = dyn_cast_or_null<TypedAttr>(padding.get("value"));
    MemRefType type = placeholder.getType();
    if (!low || !value || int64_t(low.size()) != type.getRank())
      return placeholder.emitOpError("has a malformed ") << kPaddingAttr;
    SmallVector<vector::TransferReadOp> reads;
    for (Operation *user : placeholder->getUsers()) {
      auto read = dyn_cast<vector::TransferReadOp>(user);
      if (!read || read.getMask() || !readsInOrder(read.getPermutationMap()))
        return placeholder.emitOpError("is read in place other than by vector reads of its innermost "
                                       "dimensions: ")
               << *user;
      reads.push_back(read);
    }
    for (vector::TransferReadOp read : reads)
      if (failed(guardPaddedRead(rewriter, read, placeholder.getSource(), low.asArrayRef(), type.getShape(), value)))
        return failure();
    rewriter.eraseOp(placeholder);
  }
  return success();
}

} // namespace strata::cpu
