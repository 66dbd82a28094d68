//===- KernelConfig.cpp - Tile-size attributes and the distribution rule --===//

#include "compiler/codegen/cpu/KernelConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace strata::cpu {

bool isKernel(func::FuncOp func) {
  return func.isPublic() && !func.isExternal();
}

FailureOr<std::optional<TileSizes>> readTileSizes(linalg::LinalgOp op) {
  Attribute attr = op->getAttr(kTileSizesAttr);
  if (!attr)
    return std::optional<TileSizes>();
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto workgroup =
      dict ? dyn_cast_or_null<DenseI64ArrayAttr>(dict.get("workgroup"))
           : nullptr;
  auto vector =
      dict ? dyn_cast_or_null<DenseI64ArrayAttr>(dict.get("vector")) : nullptr;
  if (!workgroup || !vector)
    return op->emitOpError()
           << "expects '" << kTileSizesAttr
           << "' to be {workgroup = array<i64: ...>, vector = array<i64: ...>}";
  int64_t loops = op.getNumLoops();
  for (DenseI64ArrayAttr sizes : {workgroup, vector}) {
    if (int64_t(sizes.size()) != loops)
      return op->emitOpError()
             << "expects " << loops << " tile sizes (one per loop), got "
             << sizes.size();
    if (llvm::any_of(sizes.asArrayRef(), [](int64_t s) { return s < 0; }))
      return op->emitOpError() << "expects non-negative tile sizes";
  }
  if (llvm::count_if(workgroup.asArrayRef(), [](int64_t s) { return s; }) > 2)
    return op->emitOpError()
           << "expects a workgroup tile on two loops at most, got " << workgroup;
  TileSizes sizes;
  sizes.workgroup.assign(workgroup.asArrayRef().begin(),
                         workgroup.asArrayRef().end());
  sizes.vector.assign(vector.asArrayRef().begin(), vector.asArrayRef().end());
  return std::optional<TileSizes>(std::move(sizes));
}

void writeTileSizes(linalg::LinalgOp op, const TileSizes &sizes) {
  MLIRContext *context = op->getContext();
  NamedAttribute entries[] = {
      NamedAttribute(StringAttr::get(context, "workgroup"),
                     DenseI64ArrayAttr::get(context, sizes.workgroup)),
      NamedAttribute(StringAttr::get(context, "vector"),
                     DenseI64ArrayAttr::get(context, sizes.vector))};
  op->setAttr(kTileSizesAttr, DictionaryAttr::get(context, entries));
}

unsigned splitDimension(Type shaped, unsigned columns) {
  auto type = dyn_cast<ShapedType>(shaped);
  if (!type || !type.hasRank())
    return 0;
  if (columns)
    return std::max<int64_t>(0, type.getRank() - int64_t(columns));
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    if (size != 1)
      return dim;
  return 0;
}

unsigned splitsColumns(func::FuncOp kernel) {
  Attribute attr = kernel->getAttr(kSplitColumnsAttr);
  if (auto count = dyn_cast_or_null<IntegerAttr>(attr))
    return unsigned(std::max<int64_t>(1, count.getInt()));
  return attr ? 1 : 0;
}

std::optional<unsigned> defaultDistributedLoop(linalg::LinalgOp op,
                                               unsigned columns) {
  if (op.getNumDpsInits() == 0)
    return std::nullopt;
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap map = op.getMatchingIndexingMap(init);
  if (map.getNumResults() == 0)
    return std::nullopt;
  unsigned split = splitDimension(init->get().getType(), columns);
  // A convolution or pooling is split along its batch or output rows, or
  // (columns) its channels, not along its output columns: those tiles must
  // keep static sizes, which a workgroup share of columns would not
  // (TileAndVectorize rewrites static tiles as 1-D convolutions).
  if (split > 1 && !columns && linalg::isaConvolutionOpInterface(op))
    return std::nullopt;
  auto dim = dyn_cast<AffineDimExpr>(map.getResult(split));
  if (!dim || !linalg::isParallelIterator(
                  op.getIteratorTypesArray()[dim.getPosition()]))
    return std::nullopt;
  return dim.getPosition();
}

std::optional<PackedConvolution>
matchPackedConvolution(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op) || op.getNumLoops() != 8 ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumParallelLoops() != 5)
    return std::nullopt;
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  if (failed(dims) || dims->batch.size() != 1 ||
      dims->outputImage.size() != 2 || dims->outputChannel.size() != 2 ||
      dims->filterLoop.size() != 2 || dims->inputChannel.size() != 1 ||
      !dims->depth.empty())
    return std::nullopt;
  MLIRContext *context = op->getContext();
  AffineExpr n, oh, ow, f1, f0, kh, kw, c;
  bindDims(context, n, oh, ow, f1, f0, kh, kw, c);
  SmallVector<AffineMap> expected = {
      AffineMap::get(8, 0,
                     {n, oh * dims->strides[0] + kh * dims->dilations[0],
                      ow * dims->strides[1] + kw * dims->dilations[1], c},
                     context),
      AffineMap::get(8, 0, {f1, kh, kw, c, f0}, context),
      AffineMap::get(8, 0, {n, oh, ow, f1, f0}, context)};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (auto [map, want] : llvm::zip(maps, expected))
    if (simplifyAffineMap(map) != simplifyAffineMap(want))
      return std::nullopt;
  return PackedConvolution{dims->strides[1], dims->dilations[1]};
}

bool isPermutationCopy(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      !op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isPermutation() ||
      op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity())
    return false;
  if (isa<linalg::TransposeOp>(op.getOperation()))
    return true;
  Block &body = op->getRegion(0).front();
  return body.getOperations().size() == 1 &&
         body.getTerminator()->getOperand(0) == body.getArgument(0);
}

int64_t vectorLanes(Type type, int64_t vectorBits) {
  Type element = getElementTypeOrSelf(type);
  // Index values become 64-bit integers.
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 64;
  return std::max<int64_t>(1, vectorBits / std::max(1u, bits));
}

std::optional<StaticBox> staticBox(memref::SubViewOp view) {
  if (!view.hasUnitStride() || ShapedType::isDynamicShape(view.getStaticOffsets()) ||
      ShapedType::isDynamicShape(view.getStaticSizes()))
    return std::nullopt;
  return StaticBox{llvm::to_vector(view.getStaticOffsets()), llvm::to_vector(view.getStaticSizes())};
}

bool disjoint(const StaticBox &a, const StaticBox &b) {
  for (auto [ao, as, bo, bs] : llvm::zip(a.offsets, a.sizes, b.offsets, b.sizes))
    if (ao + as <= bo || bo + bs <= ao)
      return true;
  return false;
}

Value getBufferRoot(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// The buffers that the ops only write, each op through its own
/// memref.subview of static offsets and sizes and unit strides, the views
/// pairwise disjoint, and each op writing every element of its view once
/// (its output map a permutation): a pad written as a copy into its interior
/// and fills of its border (CPUComputeInDestinations). Each op may then be
/// split along any of its parallel loops: whichever workgroup runs a tile,
/// no element is written twice and none is read.
static llvm::DenseSet<Value>
writtenInPieces(ArrayRef<linalg::LinalgOp> ops) {
  llvm::DenseMap<Value, SmallVector<StaticBox>> candidates;
  llvm::DenseSet<Value> rejected;
  for (linalg::LinalgOp op : ops) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue;
      Value root = getBufferRoot(operand.get());
      auto view = operand.get().getDefiningOp<memref::SubViewOp>();
      bool written = op.isDpsInit(&operand) &&
                     !op.payloadUsesValueFromOperand(&operand) &&
                     op.getMatchingIndexingMap(&operand).isPermutation();
      std::optional<StaticBox> box =
          written && view && view.getSource() == root ? staticBox(view) : std::nullopt;
      if (!box) {
        rejected.insert(root);
        continue;
      }
      candidates[root].push_back(std::move(*box));
    }
  }
  llvm::DenseSet<Value> pieces;
  for (auto &[root, list] : candidates) {
    if (rejected.contains(root))
      continue;
    bool ok = true;
    for (size_t i = 0; ok && i < list.size(); ++i)
      for (size_t j = i + 1; ok && j < list.size(); ++j)
        ok = disjoint(list[i], list[j]);
    if (ok)
      pieces.insert(root);
  }
  return pieces;
}

LogicalResult
checkDistributable(func::FuncOp kernel,
                   llvm::function_ref<std::optional<unsigned>(linalg::LinalgOp)>
                       distributedLoop,
                   bool emitErrors, std::optional<unsigned> splitColumns) {
  auto fail = [&](Operation *op, const Twine &why) {
    if (emitErrors)
      op->emitOpError() << "cannot be split across workgroups: " << why;
    return failure();
  };
  if (!kernel.getBody().hasOneBlock())
    return fail(kernel, "the kernel has more than one block");
  // One scratch buffer serves the whole dispatch.
  if (kernel->hasAttr(kScratchBytesAttr))
    return fail(kernel, "its temporaries share one scratch binding");

  // Pass 1: each op's distributed loop, and the buffers the ops write.
  llvm::SmallVector<linalg::LinalgOp> ops;
  llvm::DenseMap<Value, Operation *> writtenBy;
  for (Operation &op : kernel.getBody().front()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (!linalgOp.hasPureBufferSemantics())
        return fail(&op, "it is not on buffers");
      if (!distributedLoop(linalgOp))
        return fail(&op, "it has no parallel loop walking the split "
                         "dimension of its first output");
      for (Value init : linalgOp.getDpsInits())
        writtenBy.try_emplace(getBufferRoot(init), &op);
      ops.push_back(linalgOp);
      continue;
    }
    // Temporaries are allocated by every workgroup for itself.
    if (op.hasTrait<OpTrait::IsTerminator>() || isMemoryEffectFree(&op) ||
        hasSingleEffect<MemoryEffects::Allocate>(&op))
      continue;
    return fail(&op, "only linalg ops, allocations and ops without memory "
                     "effects can be split");
  }
  if (ops.empty())
    return fail(kernel, "it has no linalg op");

  // Pass 2: a written buffer is touched only directly, in its split
  // dimension, by the distributed loop, so tile t of every op covers the same
  // rows of it; or it is written in disjoint pieces and never read
  // (writtenInPieces).
  llvm::DenseSet<Value> pieces = writtenInPieces(ops);
  unsigned columns = splitColumns ? *splitColumns : splitsColumns(kernel);
  for (linalg::LinalgOp op : ops) {
    unsigned loop = *distributedLoop(op);
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (!isa<MemRefType>(value.getType()))
        continue;
      Value root = getBufferRoot(value);
      auto writer = writtenBy.find(root);
      if (writer == writtenBy.end() || pieces.contains(root))
        continue;
      if (value != root)
        return fail(op, "it accesses a buffer written in the kernel through "
                        "a view");
      AffineMap map = op.getMatchingIndexingMap(&operand);
      unsigned dim = splitDimension(value.getType(), columns);
      if (map.getNumResults() == 0 ||
          map.getResult(dim) != getAffineDimExpr(loop, op->getContext()))
        return fail(op, "operand " + Twine(operand.getOperandNumber()) +
                            " is written in the kernel and not indexed by "
                            "the distributed loop in dimension " + Twine(dim));
    }
  }
  return success();
}

LogicalResult moveIntoArgument(func::FuncOp kernel, ArrayRef<Operation *> allocations,
                               ArrayRef<int64_t> offsets, int64_t bytes, StringRef marker) {
  Builder b(kernel.getContext());
  unsigned index = kernel.getNumArguments();
  if (failed(kernel.insertArgument(
          index, MemRefType::get({bytes}, b.getI8Type()),
          b.getDictionaryAttr(b.getNamedAttr(marker, b.getUnitAttr())), kernel.getLoc())))
    return kernel.emitOpError("cannot append the argument marked ") << marker;
  Value argument = kernel.getArgument(index);
  IRRewriter rewriter(kernel.getContext());
  for (auto [allocation, offset] : llvm::zip_equal(allocations, offsets)) {
    rewriter.setInsertionPoint(allocation);
    Value shift = arith::ConstantIndexOp::create(rewriter, allocation->getLoc(), offset);
    for (Operation *user : llvm::make_early_inc_range(allocation->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.replaceOpWithNewOp<memref::ViewOp>(allocation, allocation->getResult(0).getType(),
                                                argument, shift, ValueRange{});
  }
  return success();
}

} // namespace strata::cpu
