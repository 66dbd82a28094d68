//===- TileAndVectorize.cpp - Register-sized tiles as vector code --------===//
//
// Each linalg op is cut into tiles the size of a few vector registers
// (strata_cpu.tile_sizes, vector level) and each tile becomes vector ops
// with linalg's vectorizer. Tiles at the edges of an iteration space are
// partial: with `peel`, the tile loops are split into a main part of full,
// statically shaped tiles and a last partial iteration, so only that one is
// masked. The accumulator of a contraction (its output tile) is then hoisted
// out of the reduction loop, where it would otherwise be loaded and stored
// on every step.
//
// A reduction whose output was just filled (a matmul or convolution starting
// from zero) takes the fill into its tiles: each output tile is filled right
// before its reduction begins, so the accumulator starts from the fill value
// in registers (the fill's store and the accumulator's load are forwarded
// away) instead of the whole output being written with zeros first and read
// back tile by tile.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/PackedMatmul.h"
#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorTransforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUTILEANDVECTORIZEPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// Whether `op` reads or writes an i1 buffer. A buffer holds one byte per
/// i1 element (the runtime's and the host program's layout), but LLVM loads
/// and stores <N x i1> bit-packed: such ops stay scalar.
bool accessesI1Buffer(linalg::LinalgOp op) {
  return llvm::any_of(op->getOperands(), [](Value operand) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    return type && type.getElementType().isInteger(1);
  });
}

/// Whether `op` computes something that traps on some operands: integer
/// division and remainder (by zero, or INT_MIN by -1).
bool canTrap(linalg::LinalgOp op) {
  return op
      ->walk([](Operation *inner) {
        return isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp,
                   arith::RemUIOp, arith::CeilDivSIOp, arith::CeilDivUIOp,
                   arith::FloorDivSIOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// `value` (a statically shaped memref) without its unit dimension `dim`,
/// as a rank-reducing subview.
Value dropUnitDim(OpBuilder &b, Location loc, Value value, int64_t dim) {
  auto type = cast<MemRefType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(type.getShape())) {
    sizes.push_back(b.getIndexAttr(size));
    if (static_cast<int64_t>(d) != dim)
      shape.push_back(size);
  }
  MemRefType reduced = memref::SubViewOp::inferRankReducedResultType(
      shape, type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, reduced, value, offsets, sizes,
                                   strides);
}

/// The W entry of a 2-D op's strides or dilations (absent: 1), as the
/// attribute of a 1-D op.
DenseIntElementsAttr widthOf(Operation *op, StringRef name) {
  auto hw = op->getAttrOfType<DenseIntElementsAttr>(name);
  int64_t w = hw ? hw.getValues<int64_t>()[1] : 1;
  return DenseIntElementsAttr::get(
      RankedTensorType::get({1}, IntegerType::get(op->getContext(), 64)),
      ArrayRef<int64_t>{w});
}

/// A tile of a 2-D NHWC convolution or pooling with one output row and one
/// filter row (SelectTileSizes' convolution tiles), as the 1-D op on views
/// without the H dimensions: linalg's vectorizer handles 1-D convolutions
/// only. (Upstream's DownscaleSizeOneWindowed2DConvolution does this for
/// tensors, not buffers.) Returns the new op, or null when `op` is not such
/// a tile.
/// The input, filter (or window) and output of a convolution or pooling on
/// statically shaped buffers, or nullopt.
struct WindowOperands {
  Value input, filter, output;
};
std::optional<WindowOperands> windowOperands(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  WindowOperands operands{op.getDpsInputOperand(0)->get(),
                          op.getDpsInputOperand(1)->get(),
                          op.getDpsInitOperand(0)->get()};
  for (Value v : {operands.input, operands.filter, operands.output}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
  }
  return operands;
}

/// A tile of a convolution with a packed filter (matchPackedConvolution)
/// with one output row, one filter row and one strip of output channels is
/// a 1-D convolution too, on the views without those unit dimensions.
Operation *downscalePackedTo1D(IRRewriter &rewriter, linalg::LinalgOp op) {
  std::optional<PackedConvolution> packed = matchPackedConvolution(op);
  std::optional<WindowOperands> operands = windowOperands(op);
  if (!packed || !operands)
    return nullptr;
  auto [input, filter, output] = *operands;
  auto dim = [](Value v, int64_t d) {
    return cast<MemRefType>(v.getType()).getDimSize(d);
  };
  // Input H 1; filter strip and H 1 (f1, kh); output H and strip 1 (oh, f1).
  if (dim(input, 1) != 1 || dim(filter, 0) != 1 || dim(filter, 1) != 1 ||
      dim(output, 1) != 1 || dim(output, 3) != 1)
    return nullptr;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value in = dropUnitDim(rewriter, loc, input, 1);
  Value ker = dropUnitDim(rewriter, loc,
                          dropUnitDim(rewriter, loc, filter, 0), 0);
  Value out = dropUnitDim(rewriter, loc,
                          dropUnitDim(rewriter, loc, output, 3), 1);
  auto widthAttr = [&](int64_t value) {
    return DenseIntElementsAttr::get(
        RankedTensorType::get({1}, rewriter.getI64Type()),
        ArrayRef<int64_t>{value});
  };
  Operation *replacement = linalg::Conv1DNwcWcfOp::create(
      rewriter, loc, TypeRange{}, ValueRange{in, ker}, ValueRange{out},
      widthAttr(packed->strideW), widthAttr(packed->dilationW));
  rewriter.eraseOp(op);
  return replacement;
}

Operation *downscaleTo1D(IRRewriter &rewriter, linalg::LinalgOp op) {
  if (Operation *packed = downscalePackedTo1D(rewriter, op))
    return packed;
  std::optional<WindowOperands> operands = windowOperands(op);
  if (!isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp,
           linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcMinOp,
           linalg::PoolingNhwcSumOp>(op) ||
      !operands)
    return nullptr;
  auto [input, filter, output] = *operands;
  auto dim = [](Value v, int64_t d) {
    return cast<MemRefType>(v.getType()).getDimSize(d);
  };
  // Input and output H is 1, and the filter's (or window's) H is 1.
  if (dim(input, 1) != 1 || dim(output, 1) != 1 || dim(filter, 0) != 1)
    return nullptr;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value in = dropUnitDim(rewriter, loc, input, 1);
  Value ker = dropUnitDim(rewriter, loc, filter, 0);
  Value out = dropUnitDim(rewriter, loc, output, 1);
  DenseIntElementsAttr strides = widthOf(op, "strides");
  DenseIntElementsAttr dilations = widthOf(op, "dilations");
  SmallVector<Value> ins{in, ker}, outs{out};
  auto create = [&](auto opType) -> Operation * {
    using OpTy = decltype(opType);
    return OpTy::create(rewriter, loc, TypeRange{}, ins, outs, strides,
                        dilations);
  };
  Operation *replacement =
      TypeSwitch<Operation *, Operation *>(op)
          .Case([&](linalg::Conv2DNhwcHwcfOp) {
            return create(linalg::Conv1DNwcWcfOp());
          })
          .Case([&](linalg::DepthwiseConv2DNhwcHwcOp) {
            return create(linalg::DepthwiseConv1DNwcWcOp());
          })
          .Case([&](linalg::PoolingNhwcMaxOp) {
            return create(linalg::PoolingNwcMaxOp());
          })
          .Case([&](linalg::PoolingNhwcMinOp) {
            return create(linalg::PoolingNwcMinOp());
          })
          .Case([&](linalg::PoolingNhwcSumOp) {
            return create(linalg::PoolingNwcSumOp());
          });
  rewriter.eraseOp(op);
  return replacement;
}

/// A vector transfer through a memref.expand_shape, read or written on
/// the expanded view's source instead: hoisting leaves transfers of views
/// alone, and leaves a buffer alone while any transfer still goes through a
/// view of it; an output tile seen in strips (packBlock) is such a view.
/// Handles transfers with all dimensions in bounds, a minor identity map over
/// every dimension, and in each reassociation group vector extents of 1
/// except on its last dimension, whose static inner sizes give the source
/// index; the vector (and the mask of a partial tile) is shape_cast to and
/// from the source's.
template <typename TransferOp>
struct TransferOfExpandShape : OpRewritePattern<TransferOp> {
  using OpRewritePattern<TransferOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(TransferOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getBase().template getDefiningOp<memref::ExpandShapeOp>();
    VectorType vectorType = op.getVectorType();
    if (!expand || !op.getPermutationMap().isIdentity() ||
        vectorType.getRank() != expand.getResultType().getRank() ||
        llvm::any_of(op.getInBoundsValues(), [](bool b) { return !b; }))
      return rewriter.notifyMatchFailure(op, "not a plain transfer of a whole expanded view");
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    Location loc = op.getLoc();
    SmallVector<Value> indices;
    SmallVector<int64_t> sourceVector;
    for (ReassociationIndices group : expand.getReassociationIndices()) {
      Value index = op.getIndices()[group.front()];
      for (int64_t dim : ArrayRef<int64_t>(group).drop_front()) {
        if (ShapedType::isDynamic(shape[dim]) || vectorType.getDimSize(dim - 1) != 1)
          return rewriter.notifyMatchFailure(op, "vector spans a group's outer dimensions");
        Value size = arith::ConstantIndexOp::create(rewriter, loc, shape[dim]);
        index = arith::AddIOp::create(rewriter, loc,
                                      arith::MulIOp::create(rewriter, loc, index, size),
                                      op.getIndices()[dim]);
      }
      indices.push_back(index);
      sourceVector.push_back(vectorType.getDimSize(group.back()));
    }
    auto sourceType = VectorType::get(sourceVector, vectorType.getElementType());
    SmallVector<bool> inBounds(sourceVector.size(), true);
    AffineMap identity =
        AffineMap::getMinorIdentityMap(sourceVector.size(), sourceVector.size(), op.getContext());
    Value mask;
    if (op.getMask())
      mask = vector::ShapeCastOp::create(
          rewriter, loc, VectorType::get(sourceVector, rewriter.getI1Type()), op.getMask());
    if constexpr (std::is_same_v<TransferOp, vector::TransferReadOp>) {
      Value read = vector::TransferReadOp::create(
          rewriter, loc, sourceType, expand.getSrc(), indices, AffineMapAttr::get(identity),
          op.getPadding(), mask, rewriter.getBoolArrayAttr(inBounds));
      rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, vectorType, read);
    } else {
      Value cast = vector::ShapeCastOp::create(rewriter, loc, sourceType, op.getVector());
      rewriter.replaceOpWithNewOp<vector::TransferWriteOp>(
          op, Type(), cast, expand.getSrc(), indices, AffineMapAttr::get(identity), mask,
          rewriter.getBoolArrayAttr(inBounds));
    }
    return success();
  }
};

struct CPUTileAndVectorizePass
    : impl::CPUTileAndVectorizePassBase<CPUTileAndVectorizePass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    // Canonicalization folds the affine.min of full tiles into constants and
    // their subviews into static shapes, which is what lets the vectorizer
    // drop masks.
    RewritePatternSet canonicalization(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(canonicalization);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(canonicalization, context);
    canonicalizationPatterns = std::move(canonicalization);

    // Masked transfers become transfers with a mask operand, and transfers
    // of subviews transfers of the whole buffer at an offset: the forms that
    // canonicalization and hoisting understand (hoisting leaves transfers
    // of views alone).
    RewritePatternSet transfers(context);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(transfers);
    memref::populateFoldMemRefAliasOpPatterns(transfers);
    transfers.add<TransferOfExpandShape<vector::TransferReadOp>,
                  TransferOfExpandShape<vector::TransferWriteOp>>(context);
    transferPatterns = std::move(transfers);

    // A permutation copy's transfers (transposeInRegisters).
    RewritePatternSet permutations(context);
    vector::populateVectorTransferPermutationMapLoweringPatterns(permutations);
    vector::populateVectorTransposeLoweringPatterns(permutations, vector::VectorTransposeLowering::Shuffle1D);
    vector::populateFlattenVectorTransferPatterns(permutations);
    permutationPatterns = std::move(permutations);

    RewritePatternSet contractions(context);
    vector::populateCastAwayVectorLeadingOneDimPatterns(contractions);
    vector::populateVectorContractLoweringPatterns(
        contractions, vector::VectorContractLowering::OuterProduct);
    contractionPatterns = std::move(contractions);
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(func.getContext());

    // Views and index arithmetic shared by several ops become one, and move
    // up before the linalg ops, so that a reduction, the fill before it and
    // the elementwise op after it stand next to each other.
    {
      DominanceInfo dominance(func);
      eliminateCommonSubExpressions(rewriter, dominance, func);
    }
    gatherPureOps(func);

    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    // Last first, so that a reduction meets the fill before it untiled and
    // may take it in.
    llvm::SmallPtrSet<Operation *, 8> fusedFills;
    for (linalg::LinalgOp op : llvm::reverse(ops)) {
      if (fusedFills.contains(op.getOperation()))
        continue;
      // An elementwise op the reduction before it takes in is tiled with it.
      auto previous = dyn_cast_or_null<linalg::LinalgOp>(op->getPrevNode());
      if (previous && fusableConsumer(previous) == op.getOperation())
        continue;
      if (failed(tile(rewriter, op, fusedFills)))
        return signalPassFailure();
    }
    // Like the canonicalizer pass, a rewrite that has not converged after
    // the driver's iteration limit is not an error: the IR is valid.
    (void)applyPatternsGreedily(func, canonicalizationPatterns);

    ops.clear();
    func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (Operation *conv1D = downscaleTo1D(rewriter, op))
        vectorizeIfSupported(rewriter, cast<linalg::LinalgOp>(conv1D));
      else
        vectorize(rewriter, op);
    }

    (void)applyPatternsGreedily(func, transferPatterns);
    (void)applyPatternsGreedily(func, canonicalizationPatterns);
    if (failed(guardPaddedReads(rewriter, func)))
      return signalPassFailure();
    // A 1-D convolution's contractions carry unit batch and channel
    // dimensions; without them they are outer products (FMAs over whole
    // registers) rather than element-by-element arithmetic.
    (void)applyPatternsGreedily(func, contractionPatterns);
    // Hoisting pairs a read and a write by their index values: equal
    // indices must be the same values.
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
    linalg::hoistRedundantVectorTransfers(func);
    if (failed(moveToLocalMemory(func)))
      return signalPassFailure();
    // A fused fill's store to an output tile, then the accumulator's load of
    // it: the load takes the stored vector, and the store, overwritten by the
    // accumulator's before anything reads it, goes.
    vector::transferOpflowOpt(rewriter, func);
    unrollReductionLoops(func);
  }

  /// Vector registers that the elements `read` loads take, broadcast
  /// dimensions not counted: a row of the right-hand side, or one value of
  /// each row of the left-hand side that is broadcast to a register in turn.
  int64_t registersRead(vector::TransferReadOp read) const {
    VectorType type = read.getVectorType();
    int64_t elements = 1;
    for (auto [result, size] :
         llvm::zip(read.getPermutationMap().getResults(), type.getShape()))
      if (!isa<AffineConstantExpr>(result))
        elements *= size;
    return registersFor(elements, type);
  }

  /// Vector registers that `elements` elements of `type`'s element type take.
  int64_t registersFor(int64_t elements, VectorType type) const {
    return llvm::divideCeil(elements, vectorLanes(type, vectorBits));
  }

  /// The reduction loop of a register tile (the k loop of a contraction,
  /// the input channels of a convolution: an innermost loop that carries
  /// vector accumulators) is unrolled by `reductionUnroll` (the remainder
  /// of its count, static or dynamic, one step at a time), and whole where
  /// it is no longer. Its steps are a few loads and FMAs each, and the
  /// loop's own instructions (index updates, compare and branch) took a
  /// share of every step. A longer loop only where the accumulators and
  /// what one step reads fit the registers beside a broadcast, and not
  /// within another reduction loop (a convolution's input channels within
  /// its filter rows): the scheduler interleaves the unrolled steps'
  /// loads, which spilled accumulators of a convolution tile that keeps the
  /// filter's taps of every column in registers, and convolution tiles
  /// that fit gained nothing (their steps are 24 FMAs and more). A loop
  /// unrolled whole (a depthwise convolution's 3 filter rows) gained even
  /// where the registers do not fit. Loops with masked transfers (the last
  /// partial tile) stay as they are.
  void unrollReductionLoops(func::FuncOp func) {
    if (reductionUnroll < 2)
      return;
    // Each loop, and whether it is unrolled whole.
    SmallVector<std::pair<scf::ForOp, bool>> loops;
    func.walk([&](scf::ForOp loop) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      if ((trips && trips->getZExtValue() < 2) ||
          loop.getNumRegionIterArgs() == 0)
        return;
      int64_t registers = 1;
      for (BlockArgument accumulator : loop.getRegionIterArgs()) {
        auto type = dyn_cast<VectorType>(accumulator.getType());
        if (!type)
          return;
        registers += registersFor(type.getNumElements(), type);
      }
      bool computes = false;
      WalkResult walk = loop.getBody()->walk([&](Operation *inner) {
        if (isa<LoopLikeOpInterface, vector::MaskOp>(inner))
          return WalkResult::interrupt();
        if (auto transfer = dyn_cast<VectorTransferOpInterface>(inner))
          if (transfer.getMask())
            return WalkResult::interrupt();
        if (auto read = dyn_cast<vector::TransferReadOp>(inner))
          registers += registersRead(read);
        computes |= isa<arith::MulFOp, math::FmaOp, vector::ContractionOp,
                        vector::OuterProductOp, vector::FMAOp>(inner);
        return WalkResult::advance();
      });
      if (!computes || walk.wasInterrupted())
        return;
      auto outer = loop->getParentOfType<scf::ForOp>();
      bool inReduction = outer && outer.getNumRegionIterArgs() != 0;
      bool whole =
          trips && trips->getZExtValue() <= static_cast<uint64_t>(reductionUnroll);
      if (whole || (!inReduction && registers <= vectorRegisters))
        loops.push_back({loop, whole});
    });
    for (auto [loop, whole] : loops) {
      if (whole)
        (void)loopUnrollFull(loop);
      else
        (void)loopUnrollByFactor(loop, reductionUnroll);
    }
  }

  /// The buffers of the kernel's packed blocks (allocas marked
  /// kLocalMemoryAttr) become views into one argument, the runtime's local
  /// memory (strata_cpu_dispatch_v0_t.local_memory), which every thread
  /// running workgroups has for itself: they would not fit the stack of
  /// every thread a runtime is embedded in (a block is 256 KiB). Each
  /// buffer is written and read within its op's block loops, one op after
  /// another, so they all start at the beginning of it.
  static LogicalResult moveToLocalMemory(func::FuncOp func) {
    SmallVector<Operation *> allocas;
    int64_t size = 0;
    func.walk([&](memref::AllocaOp alloca) {
      if (!alloca->hasAttr(kLocalMemoryAttr))
        return;
      allocas.push_back(alloca);
      MemRefType type = alloca.getType();
      size = std::max<int64_t>(size, type.getNumElements() * type.getElementTypeBitWidth() / 8);
    });
    if (allocas.empty())
      return success();
    SmallVector<int64_t> offsets(allocas.size(), 0);
    return moveIntoArgument(func, allocas, offsets, llvm::alignTo(size, 64), kLocalMemoryAttr);
  }

  /// In each block, moves the ops without memory effects or regions that
  /// follow a run of linalg ops before the run's first op, where their
  /// operands are defined before it (linalg ops on buffers define nothing).
  /// An op with memory effects ends the run.
  static void gatherPureOps(func::FuncOp func) {
    func.walk([](Block *block) {
      Operation *first = nullptr;
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        if (isa<linalg::LinalgOp>(op)) {
          if (!first)
            first = &op;
          continue;
        }
        if (!first)
          continue;
        if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
            op.hasTrait<OpTrait::IsTerminator>()) {
          first = nullptr;
          continue;
        }
        const bool movable = llvm::all_of(op.getOperands(), [&](Value operand) {
          Operation *definer = operand.getDefiningOp();
          return !definer || definer->getBlock() != block || definer->isBeforeInBlock(first);
        });
        if (movable)
          op.moveBefore(first);
      }
    });
  }

  /// The memref `value` views (through subviews and casts).
  static Value rootOf(Value value) {
    while (Operation *def = value.getDefiningOp()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(def))
        value = view.getViewSource();
      else
        break;
    }
    return value;
  }

  /// The fill just before `op` that `op` can take into its tiles: it fills
  /// exactly `op`'s one output, which `op` reduces into (so it reads the
  /// fill), writes every element of (its output is indexed by parallel
  /// loops alone, each once) and reads through no input.
  /// With `blocked`, the same of an op whose reduction blockForCaches cuts
  /// into blocks: its first block takes the fill in (fillFirstBlock).
  static linalg::FillOp fusableFill(linalg::LinalgOp op, bool blocked = false) {
    if (!reducesIntoTiles(op, blocked))
      return {};
    auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
    OpOperand *init = op.getDpsInitOperand(0);
    if (!fill || fill.getDpsInitOperand(0)->get() != init->get())
      return {};
    Value root = rootOf(init->get());
    for (OpOperand *input : op.getDpsInputOperands())
      if (isa<MemRefType>(input->get().getType()) && rootOf(input->get()) == root)
        return {};
    return fill;
  }

  /// Whether `op` is a reduction into one output, on buffers, with vector
  /// tile sizes, that completes each output tile in the reduction loops of
  /// that tile: the output is indexed by parallel loops alone, each once,
  /// and the reduction is not cut into cache blocks (with `blocked`: is).
  static bool reducesIntoTiles(linalg::LinalgOp op, bool blocked = false) {
    if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
        op.hasPureTensorSemantics() || blocksReduction(op) != blocked)
      return false;
    FailureOr<std::optional<TileSizes>> sizes = readTileSizes(op);
    if (failed(sizes) || !*sizes ||
        llvm::all_of((*sizes)->vector, [](int64_t size) { return size == 0; }))
      return false;
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return false;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (AffineExpr result : map.getResults())
      if (iterators[cast<AffineDimExpr>(result).getPosition()] != utils::IteratorType::parallel)
        return false;
    return true;
  }

  /// The elementwise op just after `op` that `op` can take into its tiles
  /// (a bias, a batch norm, an activation): it runs over `op`'s output, one
  /// parallel loop per dimension, writes it in place and reads it, if at
  /// all, at the same element, and reads no other view of it. Each output
  /// tile then gets it right after its reduction, while the tile is still
  /// in registers.
  static linalg::GenericOp fusableConsumer(linalg::LinalgOp op) {
    if (!reducesIntoTiles(op))
      return {};
    auto generic = dyn_cast_or_null<linalg::GenericOp>(op->getNextNode());
    Value output = op.getDpsInitOperand(0)->get();
    if (!generic || generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
        generic.getDpsInitOperand(0)->get() != output ||
        generic.getNumLoops() != cast<MemRefType>(output.getType()).getRank() ||
        !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity())
      return {};
    Value root = rootOf(output);
    for (OpOperand *input : generic.getDpsInputOperands()) {
      if (input->get() == output) {
        if (!generic.getMatchingIndexingMap(input).isIdentity())
          return {};
      } else if (isa<MemRefType>(input->get().getType()) && rootOf(input->get()) == root) {
        return {};
      }
    }
    return generic;
  }

  /// A large matmul (more than kCacheBlockColumns columns or kCacheDepth
  /// steps of k) is first blocked for the caches: columns in blocks of
  /// blockColumns and the reduction in blocks of kCacheDepth, the column
  /// loop outermost, so that one kCacheDepth x blockColumns block of the
  /// right-hand side (256 KiB of f32) stays in L2 while every row tile of the
  /// workgroup reads it, and a row tile's kCacheDepth-long piece of the
  /// left-hand side stays in L1. Returns the op to tile by registers: the
  /// blocked one, or `op` itself; `blockedReduction` says whether the
  /// reduction was cut into blocks. With at least kDeepBlockRows rows (the
  /// two largest workgroups of SelectTileSizes) and register tiles of at
  /// least kDeepBlockTileColumns columns (AVX-512's), the blocks are twice
  /// as deep: half the loads and stores of the output tiles between blocks
  /// (on a Sapphire Rapids core, SGEMM 2048 with 512 rows: 99.5 to 95.8 ms;
  /// SGEMM 1024 with 256 rows, once the tiles prefetched their strips, 6
  /// interleaved rounds: 1.7 % faster on one thread and on two). AVX2's
  /// tiles of 16 columns keep blocks 256 deep: 512 deep, a tile's strip
  /// (32 KiB) is all of a Zen 3 core's L1, beside the tile's 12 KiB of the
  /// left-hand side. On one, SGEMM 1024 took 0.97 to 0.98 of the time on
  /// one thread and 0.95 to 0.97 on two with 256 (old and new module
  /// alternating); SGEMM 2048 0.95 to 1.06, no better or worse.
  static constexpr int64_t kCacheDepth = 256, kDeepBlockRows = 256, kDeepBlockTileColumns = 32;
  /// The cache blocks of `op` (blockForCaches): a tile size per loop (all
  /// zero when it is not blocked) and its n and k loops, the column loop
  /// outermost.
  struct CacheBlocks {
    SmallVector<int64_t> sizes;
    unsigned n = 0, k = 0;
    bool reduction() const { return !sizes.empty() && sizes[k] != 0; }
    bool any() const { return llvm::any_of(sizes, [](int64_t size) { return size != 0; }); }
  };
  static CacheBlocks cacheBlocks(linalg::LinalgOp op) {
    CacheBlocks blocks;
    blocks.sizes.assign(op.getNumLoops(), 0);
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    // One n loop, or two: the strips of a packed weight's columns and the
    // columns of a strip (strata-pack-weights), blocked by whole strips.
    if (failed(dims) || dims->m.size() != 1 || dims->n.empty() ||
        dims->n.size() > 2 || dims->k.size() != 1)
      return blocks;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    unsigned m = dims->m.front();
    blocks.n = dims->n.front();
    blocks.k = dims->k.front();
    int64_t strip = dims->n.size() == 2 ? ranges[dims->n.back()] : 1;
    if (ShapedType::isDynamic(strip))
      return blocks;
    auto large = [](int64_t extent, int64_t block) {
      return !ShapedType::isDynamic(extent) && extent > block;
    };
    // Blocking pays when the rows share a block: a matrix-vector product
    // reads each weight once whatever the order. Dynamic rows count by their
    // upper bound: a workgroup's share of a matmul whose rows its tile does
    // not divide is min(tile, rows left), which must not lose the blocking
    // (SGEMM with 1000 rows ran at half the speed of 1024).
    int64_t rows = ranges[m];
    if (ShapedType::isDynamic(rows))
      rows = upperBound(op, m);
    if (ShapedType::isDynamic(rows) || rows < 16)
      return blocks;
    // Blocked from kCacheBlockColumns columns or kCacheDepth steps on, in
    // blocks of blockColumns.
    const int64_t tile = tileColumns(op, *dims);
    int64_t depth = rows >= kDeepBlockRows && tile >= kDeepBlockTileColumns ? 2 * kCacheDepth
                                                                             : kCacheDepth;
    if (!large(ranges[blocks.n], std::max<int64_t>(1, kCacheBlockColumns / strip)) &&
        !large(ranges[blocks.k], depth))
      return blocks;
    int64_t columns = std::max<int64_t>(1, blockColumns(tile) / strip);
    if (large(ranges[blocks.n], columns))
      blocks.sizes[blocks.n] = columns;
    if (large(ranges[blocks.k], depth))
      blocks.sizes[blocks.k] = depth;
    return blocks;
  }

  /// The columns of a cache block of a matmul whose register tile has
  /// `tile` columns (tileColumns): kCacheBlockStrips of them (256 with
  /// AVX-512's tile of 32, 128 with AVX2's 16, whose machines have less L2:
  /// a 256 x 512 block took all of a Zen 3 core's 512 KiB, and SGEMM 1024
  /// ran 2 % faster on one with 128), at most kCacheBlockColumns;
  /// kCacheBlockColumns without a vector tile.
  static int64_t blockColumns(int64_t tile) {
    if (tile <= 1)
      return kCacheBlockColumns;
    return std::min(kCacheBlockColumns, kCacheBlockStrips * tile);
  }

  /// The columns of `op`'s register tile: its one n size, or a packed
  /// weight's strip (the last n loop) times the strips of a tile; 0 without
  /// a vector tile.
  static int64_t tileColumns(linalg::LinalgOp op, const linalg::ContractionDimensions &dims) {
    FailureOr<std::optional<TileSizes>> sizes = readTileSizes(op);
    if (failed(sizes) || !*sizes)
      return 0;
    int64_t tile = 1;
    for (unsigned loop : dims.n)
      if (loop < (*sizes)->vector.size() && (*sizes)->vector[loop] > 0)
        tile *= (*sizes)->vector[loop];
    return tile;
  }

  /// A constant upper bound of loop `loop` of `op` (through the sizes of
  /// the views it reads or writes along it), or kDynamic.
  static int64_t upperBound(linalg::LinalgOp op, unsigned loop) {
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
        auto d = dyn_cast<AffineDimExpr>(expr);
        if (!d || d.getPosition() != loop || !isa<MemRefType>(operand.get().getType()))
          continue;
        FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
            presburger::BoundType::UB,
            ValueBoundsConstraintSet::Variable(operand.get(), int64_t(dim)),
            /*stopCondition=*/nullptr, /*closedUB=*/true);
        if (succeeded(bound))
          return *bound;
      }
    }
    return ShapedType::kDynamic;
  }

  /// Whether blockForCaches cuts `op`'s reduction into blocks, so that an
  /// output tile is complete only after the last one.
  static bool blocksReduction(linalg::LinalgOp op) {
    return cacheBlocks(op).reduction();
  }

  FailureOr<linalg::LinalgOp> blockForCaches(IRRewriter &rewriter,
                                             linalg::LinalgOp op) {
    CacheBlocks blocks = cacheBlocks(op);
    if (!blocks.any())
      return op;
    SmallVector<OpFoldResult> tileSizes;
    for (int64_t block : blocks.sizes)
      tileSizes.push_back(rewriter.getIndexAttr(block));
    SmallVector<int64_t> interchange = {blocks.n, blocks.k};
    for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
      if (loop != blocks.n && loop != blocks.k)
        interchange.push_back(loop);
    return tileWithLoops(rewriter, op, tileSizes, interchange,
                         "cannot be blocked for the caches");
  }

  /// The fewest rows (static, or the upper bound of a dynamic count; an
  /// unbounded one is taken to be more) for which packBlock's copy pays: each
  /// workgroup copies the blocks for its own rows.
  static constexpr int64_t kPackedRows = 64;

  /// A cache block of a matmul (blockForCaches) reads its right-hand side
  /// with the matrix's row stride: at 1024 or 2048 columns the rows of a
  /// 256 x 256 block fall into the same few sets of L2 and evict each other
  /// while the workgroup's row tiles read it. The block is first copied into
  /// a contiguous buffer in strips of the register tile's columns (n1 x kc x
  /// n0, the layout strata-pack-weights gives constant weights), where a
  /// register tile reads one contiguous row of its strip per step of k, and
  /// the matmul becomes the multiply-accumulate over strips. (Packing the
  /// left-hand side in panels of the tile's rows as well was slower: its
  /// copy cost more than the panels saved.) Returns the new op with
  /// `vectorSizes` updated to its loops, or null when `op` is not such a
  /// block: a float matmul in a kernel, on buffers, whose right-hand side is
  /// static with whole strips and whose output has static columns and at
  /// least kPackedRows rows.
  static linalg::LinalgOp packBlock(IRRewriter &rewriter, linalg::LinalgOp op,
                                    SmallVectorImpl<int64_t> &vectorSizes) {
    auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
    auto func = op->getParentOfType<func::FuncOp>();
    if (!matmul || !func || !isKernel(func) || !op.hasPureBufferSemantics() ||
        op.getIndexingMapsArray() !=
            linalg::MatmulOp::getDefaultIndexingMaps(op.getContext()) ||
        vectorSizes.size() != 3)
      return {};
    Value lhs = op.getDpsInputOperand(0)->get();
    Value rhs = op.getDpsInputOperand(1)->get();
    Value out = op.getDpsInitOperand(0)->get();
    auto rhsType = cast<MemRefType>(rhs.getType());
    auto outType = cast<MemRefType>(out.getType());
    Type element = rhsType.getElementType();
    int64_t width = vectorSizes[1];
    if (!rhsType.hasStaticShape() || !isa<FloatType>(element) ||
        cast<MemRefType>(lhs.getType()).getElementType() != element ||
        outType.getElementType() != element || width <= 1 ||
        rhsType.getDimSize(1) % width != 0 ||
        ShapedType::isDynamic(outType.getDimSize(1)))
      return {};
    int64_t rows = outType.isDynamicDim(0) ? upperBound(op, 0) : outType.getDimSize(0);
    if (!ShapedType::isDynamic(rows) && rows < kPackedRows)
      return {};
    int64_t depth = rhsType.getDimSize(0), strips = rhsType.getDimSize(1) / width;
    Location loc = op.getLoc();

    // The buffer, once per kernel, in local memory (moveToLocalMemory): its
    // bytes, kPrefetchAheadBytes more than the strips take so that the
    // register tiles' prefetches ahead (prefetchPackedRows) stay inside, and
    // the strips as a view of them.
    rewriter.setInsertionPointToStart(&func.getBody().front());
    const int64_t blockBytes = strips * depth * width * element.getIntOrFloatBitWidth() / 8;
    Value bytes = memref::AllocaOp::create(
        rewriter, loc, MemRefType::get({blockBytes + kPrefetchAheadBytes}, rewriter.getI8Type()),
        rewriter.getI64IntegerAttr(64));
    bytes.getDefiningOp()->setAttr(kLocalMemoryAttr, rewriter.getUnitAttr());
    Value packed = memref::ViewOp::create(
        rewriter, loc, MemRefType::get({strips, depth, width}, element), bytes,
        arith::ConstantIndexOp::create(rewriter, loc, 0), ValueRange{});

    // The copy: each row of the block, a strip's width at a time.
    rewriter.setInsertionPoint(op);
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    Value zero = index(0), one = index(1);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      auto rows = scf::ForOp::create(rewriter, loc, zero, index(depth), one);
      rewriter.setInsertionPointToStart(rows.getBody());
      auto columns = scf::ForOp::create(rewriter, loc, zero, index(strips), one);
      rewriter.setInsertionPointToStart(columns.getBody());
      Value k = rows.getInductionVar(), strip = columns.getInductionVar();
      Value first = arith::MulIOp::create(rewriter, loc, strip, index(width));
      Value padding =
          arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
      Value piece = vector::TransferReadOp::create(
          rewriter, loc, VectorType::get({width}, element), rhs,
          ValueRange{k, first}, padding, ArrayRef<bool>{true});
      vector::TransferWriteOp::create(rewriter, loc, piece, packed,
                                      ValueRange{strip, k, zero},
                                      ArrayRef<bool>{true});
    }

    // The output as rows x strips x width, and the multiply-accumulate.
    SmallVector<int64_t> expandedShape = {outType.getDimSize(0), strips, width};
    SmallVector<ReassociationIndices> reassociation = {{0}, {1, 2}};
    FailureOr<MemRefType> expandedType =
        memref::ExpandShapeOp::computeExpandedType(outType, expandedShape, reassociation);
    if (failed(expandedType))
      return {};
    SmallVector<OpFoldResult> outputShape = {
        outType.isDynamicDim(0)
            ? OpFoldResult(memref::DimOp::create(rewriter, loc, out, 0).getResult())
            : OpFoldResult(rewriter.getIndexAttr(outType.getDimSize(0))),
        rewriter.getIndexAttr(strips), rewriter.getIndexAttr(width)};
    Value expanded = memref::ExpandShapeOp::create(rewriter, loc, *expandedType, out,
                                                   reassociation, outputShape);
    linalg::GenericOp generic =
        codegen::createPackedMatmul(rewriter, loc, lhs, packed, expanded);
    SmallVector<int64_t> packedSizes = {vectorSizes[0], 1, width, vectorSizes[2]};
    vectorSizes.assign(packedSizes.begin(), packedSizes.end());
    TileSizes sizes;
    sizes.workgroup.assign(packedSizes.size(), 0);
    sizes.vector = packedSizes;
    writeTileSizes(cast<linalg::LinalgOp>(generic.getOperation()), sizes);
    rewriter.eraseOp(op);
    return cast<linalg::LinalgOp>(generic.getOperation());
  }

  /// `op` tiled by `tileSizes` with scf.for loops (in `interchange` order),
  /// `op` erased; the tile loops, outermost first, are appended to `loops`.
  /// Reports `failure` on `op` when it cannot be tiled.
  static FailureOr<linalg::LinalgOp>
  tileWithLoops(IRRewriter &rewriter, linalg::LinalgOp op,
                ArrayRef<OpFoldResult> tileSizes, ArrayRef<int64_t> interchange,
                StringRef failure,
                SmallVectorImpl<LoopLikeOpInterface> *loops = nullptr) {
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    options.setTileSizes(tileSizes);
    options.setInterchange(interchange);
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled) || tiled->tiledOps.size() != 1)
      return op->emitOpError(failure);
    rewriter.eraseOp(op);
    if (loops)
      llvm::append_range(*loops, tiled->loops);
    return cast<linalg::LinalgOp>(tiled->tiledOps.front());
  }

  /// A register tile of a matmul over packed strips (C(m, n1, n0) +=
  /// A(m, k) * Bp(n1, k, n0)) reads one row of strip n1 per step of k, and
  /// each step also prefetches a row it will read later, where the hardware's
  /// own prefetchers arrive late:
  ///
  /// - Over constant weights packed at compile time (strata-pack-weights, a
  ///   kernel argument) with few rows, the first row tile of a strip reads it
  ///   from memory, where a layer's weights are when they do not fit the
  ///   caches, and the strip's other row tiles from L1, with the memory idle:
  ///   GPT-2's 16 x 256 x 1024 feed-forward matmul streamed its 1 MB of
  ///   weights at half the rate the machine reads memory. So each step
  ///   prefetches the same row of the next strip (n1 + 1, the one the next
  ///   workgroup reads: such kernels split by strips, contiguous shares per
  ///   thread), which then arrives while this strip's rows are computed.
  /// - Over a cache block packed at run time (packBlock, in local memory),
  ///   each row tile reads its strip from L2 (the other strips of the block
  ///   pass through L1 between two reads of it), two cache lines every 8
  ///   cycles with AVX-512, and the L1 prefetcher keeps only part of that
  ///   in flight. So each step prefetches the bytes kPrefetchAheadBytes
  ///   further on in the block, which packBlock leaves room for after its
  ///   end, so that the address needs no clamp (a clamp in the loop cost
  ///   more than the prefetch gained).
  static constexpr int64_t kPrefetchedStripBytes = 16 << 10;
  static constexpr int64_t kPrefetchedRows = 32;
  static constexpr int64_t kPrefetchAheadBytes = 1024;
  static void prefetchPackedRows(IRRewriter &rewriter, linalg::LinalgOp tile) {
    auto generic = dyn_cast<linalg::GenericOp>(tile.getOperation());
    auto kernel = tile->getParentOfType<func::FuncOp>();
    if (!generic || !kernel || !isKernel(kernel) || generic.getNumDpsInputs() != 2 ||
        generic.getNumDpsInits() != 1 ||
        generic.getIndexingMapsArray() != codegen::packedMatmulMaps(generic.getContext()))
      return;
    // The strips, read through views of rank 3 with unit strides, the tile's
    // one row of k of a strip: a static kernel argument, or packBlock's view
    // of its local-memory bytes.
    SmallVector<memref::SubViewOp> views;
    Value strips = generic.getDpsInputs()[1];
    while (auto subview = strips.getDefiningOp<memref::SubViewOp>()) {
      if (subview.getType().getRank() != 3 ||
          !llvm::all_of(subview.getStaticStrides(), [](int64_t stride) { return stride == 1; }))
        return;
      views.push_back(subview);
      strips = subview.getSource();
    }
    auto packed = dyn_cast<MemRefType>(strips.getType());
    if (views.empty() || !packed || !packed.hasStaticShape() || packed.getRank() != 3 ||
        !packed.getLayout().isIdentity() || views.front().getStaticSizes()[0] != 1 ||
        views.front().getStaticSizes()[1] != 1)
      return;
    const int64_t rowBytes = packed.getDimSize(2) * packed.getElementTypeBitWidth() / 8;
    const bool weights = isa<BlockArgument>(strips);
    // prefetcht0 (into L1), or prefetcht1 (into L2) for long weight strips.
    int64_t locality = 3;
    Value bytes;
    if (weights) {
      if (packed.getDimSize(0) < 2)
        return;
      // Only for few rows (at most kPrefetchedRows, those of the
      // left-hand side's buffer): a strip serves every row tile of the
      // workgroup from L1, and with many (the sample encoder block's 128
      // rows, 21 tiles) the next strip arriving early took half of L1 from
      // it (its 128 x 256 x 256 projections went from 200 to 270 us).
      auto rows = dyn_cast<MemRefType>(getBufferRoot(generic.getDpsInputs()[0]).getType());
      auto tileRows = dyn_cast<MemRefType>(generic.getDpsInputs()[0].getType());
      if (!rows || !tileRows || rows.getRank() != 2 || rows.isDynamicDim(0) ||
          rows.getDimSize(0) > kPrefetchedRows)
        return;
      // Strips that stay in L1 beside the next one (at most 16 KiB) prefetch
      // it into L1. A longer strip does not stay there: the sample MLP's
      // 784 x 16 strips (49 KiB) lost 15 % to such prefetches pushing them
      // out. Where several row tiles read such a strip (more rows than a
      // tile's), the second and later read it from L2, with the memory idle
      // meanwhile, so the next strip is prefetched into L2 only (BERT's
      // 16-row matmuls over 384 x 32 and 1536 x 32 strips, 42 MB of weights
      // a call: 0.79 of the time on one thread, 0.83 on two, calls of the
      // two builds alternated). One row tile reads its strip once, in order,
      // as the hardware's prefetchers expect.
      if (packed.getDimSize(1) * rowBytes > kPrefetchedStripBytes) {
        // The tile's rows: static, or (before its partial tile is peeled)
        // at most its register tile's.
        int64_t tileRowBound = tileRows.getRank() == 2 ? upperBound(generic, 0) : ShapedType::kDynamic;
        if (ShapedType::isDynamic(tileRowBound) || tileRowBound >= rows.getDimSize(0))
          return;
        locality = 2;
      }
    } else {
      auto view = strips.getDefiningOp<memref::ViewOp>();
      auto block = view ? view.getSource().getDefiningOp<memref::AllocaOp>() : nullptr;
      // packBlock's bytes, with the room after the strips it leaves.
      const int64_t stripsBytes = packed.getDimSize(0) * packed.getDimSize(1) * rowBytes;
      if (!block || !block->hasAttr(kLocalMemoryAttr) || !block.getType().hasStaticShape() ||
          !matchPattern(view.getByteShift(), m_Zero()) ||
          block.getType().getNumElements() < stripsBytes + kPrefetchAheadBytes)
        return;
      bytes = block.getResult();
    }

    // The tile's offsets in the strips: the sums of its views' (the
    // workgroup's strip, then the tile's row of k).
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(generic);
    Location loc = generic.getLoc();
    SmallVector<Value> offsets(3);
    for (memref::SubViewOp view : views)
      for (auto [sum, offset] : llvm::zip(offsets, view.getMixedOffsets())) {
        Value value = getValueOrCreateConstantIndexOp(rewriter, loc, offset);
        sum = sum ? arith::AddIOp::create(rewriter, loc, sum, value).getResult() : value;
      }
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    auto prefetch = [&](Value memref, ValueRange indices) {
      memref::PrefetchOp::create(rewriter, loc, memref, indices,
                                 /*isWrite=*/false, locality, /*isDataCache=*/true);
    };
    if (weights) {
      // The next workgroup's strip: its workgroups should run in ascending
      // order (the CPU drivers run them descending on every second run
      // otherwise).
      kernel->setAttr(kAscendingWorkgroupsAttr, rewriter.getUnitAttr());
      Value next = arith::MinUIOp::create(
          rewriter, loc, arith::AddIOp::create(rewriter, loc, offsets[0], index(1)),
          index(packed.getDimSize(0) - 1));
      prefetch(strips, {next, offsets[1], offsets[2]});
      return;
    }
    // Every cache line of the row kPrefetchAheadBytes on, as a byte offset
    // into the block.
    Value row = arith::AddIOp::create(
        rewriter, loc, arith::MulIOp::create(rewriter, loc, offsets[0], index(packed.getDimSize(1))),
        offsets[1]);
    Value at = arith::AddIOp::create(rewriter, loc,
                                     arith::MulIOp::create(rewriter, loc, row, index(rowBytes)),
                                     index(kPrefetchAheadBytes));
    for (int64_t line = 0; line < rowBytes; line += 64)
      prefetch(bytes, {line ? arith::AddIOp::create(rewriter, loc, at, index(line)).getResult() : at});
  }

  /// Tiles `op` by its vector tile, then peels the tile loops from the
  /// innermost out, so every combination of full and partial tiles gets its
  /// own copy of the loop body. A fill it takes in (fusableFill) is erased
  /// and added to `fusedFills`.
  LogicalResult tile(IRRewriter &rewriter, linalg::LinalgOp op,
                     llvm::SmallPtrSetImpl<Operation *> &fusedFills) {
    FailureOr<std::optional<TileSizes>> sizes = readTileSizes(op);
    if (failed(sizes))
      return failure();
    if (!*sizes ||
        llvm::all_of((*sizes)->vector, [](int64_t size) { return size == 0; }))
      return success();
    linalg::FillOp fill = fusableFill(op);
    linalg::GenericOp consumer = fusableConsumer(op);
    linalg::FillOp blockFill = fusableFill(op, /*blocked=*/true);
    FailureOr<linalg::LinalgOp> blocked = blockForCaches(rewriter, op);
    if (failed(blocked))
      return failure();
    // blockForCaches returns `op` itself when it does not block it.
    const bool cacheBlocked = *blocked != op;
    op = *blocked;
    if (blockFill) {
      if (auto [first, firstFill] = fillFirstBlock(rewriter, op, blockFill); first) {
        fusedFills.insert(blockFill.getOperation());
        rewriter.eraseOp(blockFill);
        if (failed(tileBlock(rewriter, first, (*sizes)->vector, firstFill, {}, cacheBlocked, fusedFills)))
          return failure();
      }
    }
    return tileBlock(rewriter, op, (*sizes)->vector, fill, consumer, cacheBlocked, fusedFills);
  }

  /// A reduction whose blocks of k blockForCaches made (`op`, the blocked
  /// op in the loop over them) and whose output `fill` fills first: the
  /// first block of each block of columns is peeled out of that loop and
  /// takes a fill of its own output tile in, so that its register tiles
  /// start from the fill's value instead of loading what a pass of `fill`
  /// over the whole output stored (SGEMM 1024: a 4 MiB memset a call, 3 %
  /// of it). Returns the first block's op and its fill, just before it;
  /// nulls when the loop cannot be peeled (`fill` is then left alone).
  static std::pair<linalg::LinalgOp, linalg::FillOp>
  fillFirstBlock(IRRewriter &rewriter, linalg::LinalgOp op, linalg::FillOp fill) {
    auto blocks = dyn_cast<scf::ForOp>(op->getParentOp());
    scf::ForOp first;
    if (!blocks || failed(scf::peelForLoopFirstIteration(rewriter, blocks, first)))
      return {};
    SmallVector<linalg::LinalgOp> ops;
    first.getBody()->walk([&](linalg::LinalgOp inner) { ops.push_back(inner); });
    if (ops.size() != 1)
      return {};
    rewriter.setInsertionPoint(ops.front());
    auto firstFill = linalg::FillOp::create(rewriter, fill.getLoc(), fill.getDpsInputOperand(0)->get(),
                                            ops.front().getDpsInitOperand(0)->get());
    return {ops.front(), firstFill};
  }

  /// tile's work on `op` once blocked for the caches (`cacheBlocked`), with
  /// the fill before it and the elementwise op after it that it takes in.
  LogicalResult tileBlock(IRRewriter &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> registerTile,
                          linalg::FillOp fill, linalg::GenericOp consumer, bool cacheBlocked,
                          llvm::SmallPtrSetImpl<Operation *> &fusedFills) {
    SmallVector<int64_t> vectorSizes(registerTile);
    if (cacheBlocked && !consumer)
      if (linalg::LinalgOp packed = packBlock(rewriter, op, vectorSizes))
        op = packed;
    FailureOr<bool> evened = evenLastRowTiles(rewriter, op, vectorSizes, fill, consumer, fusedFills);
    if (failed(evened))
      return failure();
    if (*evened)
      return success();
    return tileRegisters(rewriter, op, vectorSizes, fill, consumer, fusedFills);
  }

  /// A contraction whose rows (static) end in a short register tile: with
  /// tiles of T rows, r = M mod T rows are left for the last, fewer than
  /// T / 2. A tile of r rows keeps r * (its registers of columns)
  /// accumulator chains, too few to hide the FMA latency, so it took about
  /// as long as a tile of twice its rows. The last T + r rows are instead split into two
  /// tiles as equal as can be: `op` (with the `fill` and `consumer` it takes
  /// in) becomes one op over the rows before them, tiled by T, and one over
  /// them, tiled by ceil((T + r) / 2). The sample MLP at batch 32 on AVX2
  /// (T = 6): 6+6+6+6+4+4 rows instead of 6+6+6+6+6+2. Returns whether it
  /// did (and tiled both); false leaves `op` untouched.
  FailureOr<bool> evenLastRowTiles(IRRewriter &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> vectorSizes,
                                   linalg::FillOp fill, linalg::GenericOp consumer,
                                   llvm::SmallPtrSetImpl<Operation *> &fusedFills) {
    FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
    if (!peel || failed(dims) || dims->m.empty() || !op.hasPureBufferSemantics())
      return false;
    const unsigned m = dims->m.back();
    const int64_t rows = op.getStaticLoopRanges()[m], tile = vectorSizes[m];
    if (ShapedType::isDynamic(rows) || tile <= 1 || rows <= tile)
      return false;
    const int64_t left = rows % tile;
    if (left == 0 || 2 * left >= tile)
      return false;
    // The loop of each op along the output's dimension that m indexes (the
    // fill's and the consumer's loops are the output's dimensions).
    std::optional<unsigned> outputDim =
        op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResultPosition(rewriter.getAffineDimExpr(m));
    if (!outputDim)
      return false;
    const int64_t before = rows - tile - left;
    // `target` over `size` rows of `loop` from `offset`: a copy of it on views
    // of its operands, before `op` (a fill's or consumer's copy only gives
    // tileRegisters what to take in, and goes); null for a null `target`.
    auto rowsOf = [&](Operation *target, unsigned loop, int64_t offset,
                      int64_t size) -> FailureOr<Operation *> {
      if (!target)
        return static_cast<Operation *>(nullptr);
      rewriter.setInsertionPoint(op);
      auto linalgOp = cast<linalg::LinalgOp>(target);
      SmallVector<OpFoldResult> offsets(linalgOp.getNumLoops(), rewriter.getIndexAttr(0)), sizes;
      for (Range range : linalgOp.createLoopRanges(rewriter, target->getLoc()))
        sizes.push_back(range.size);
      offsets[loop] = rewriter.getIndexAttr(offset);
      sizes[loop] = rewriter.getIndexAttr(size);
      FailureOr<TilingResult> part =
          cast<TilingInterface>(target).getTiledImplementation(rewriter, offsets, sizes);
      if (failed(part) || part->tiledOps.size() != 1)
        return target->emitOpError("cannot be split along its rows");
      return part->tiledOps.front();
    };
    struct Part {
      linalg::LinalgOp op;
      linalg::FillOp fill;
      linalg::GenericOp consumer;
      SmallVector<int64_t> sizes;
    };
    SmallVector<Part> parts;
    for (auto [offset, size, rowTile] : {std::tuple{int64_t(0), before, tile},
                                         std::tuple{before, tile + left, (tile + left + 1) / 2}}) {
      if (size == 0)
        continue;
      FailureOr<Operation *> opPart = rowsOf(op, m, offset, size);
      FailureOr<Operation *> fillPart = rowsOf(fill, *outputDim, offset, size);
      FailureOr<Operation *> consumerPart = rowsOf(consumer, *outputDim, offset, size);
      if (failed(opPart) || failed(fillPart) || failed(consumerPart))
        return failure();
      SmallVector<int64_t> sizes(vectorSizes);
      sizes[m] = rowTile;
      parts.push_back({cast<linalg::LinalgOp>(*opPart), cast_or_null<linalg::FillOp>(*fillPart),
                       cast_or_null<linalg::GenericOp>(*consumerPart), std::move(sizes)});
    }
    if (fill) {
      fusedFills.insert(fill.getOperation());
      rewriter.eraseOp(fill);
    }
    if (consumer)
      rewriter.eraseOp(consumer);
    rewriter.eraseOp(op);
    for (Part &part : parts) {
      if (FailureOr<std::optional<TileSizes>> sizes = readTileSizes(part.op); succeeded(sizes) && *sizes) {
        (*sizes)->vector = part.sizes;
        writeTileSizes(part.op, **sizes);
      }
      if (failed(tileRegisters(rewriter, part.op, part.sizes, part.fill, part.consumer, fusedFills)))
        return failure();
    }
    return true;
  }

  /// tileBlock's tiling of `op` (a whole op, or a block or part of one) by
  /// registers of `vectorSizes`, with the fill before it and the consumer
  /// after it that it takes in, then the peeling of the partial tiles.
  LogicalResult tileRegisters(IRRewriter &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> vectorSizes,
                              linalg::FillOp fill, linalg::GenericOp consumer,
                              llvm::SmallPtrSetImpl<Operation *> &fusedFills) {
    // With a fill or a consumer to take in, the parallel loops are tiled
    // first; the fill of each output tile goes before the reduction loops,
    // tiled next, and the consumer of the tile after them.
    const bool split = fill || consumer;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    auto sizesWhere = [&](bool parallel) {
      SmallVector<OpFoldResult> tileSizes;
      for (auto [loop, size] : llvm::enumerate(vectorSizes)) {
        const bool take = !split || (iterators[loop] == utils::IteratorType::parallel) == parallel;
        tileSizes.push_back(rewriter.getIndexAttr(take ? size : 0));
      }
      return tileSizes;
    };
    SmallVector<LoopLikeOpInterface> loops;
    auto tileBy = [&](linalg::LinalgOp target,
                      ArrayRef<OpFoldResult> tileSizes) -> FailureOr<linalg::LinalgOp> {
      if (llvm::all_of(tileSizes, isZeroInteger))
        return target;
      return tileWithLoops(rewriter, target, tileSizes, {},
                           "cannot be tiled by its vector tile sizes", &loops);
    };
    FailureOr<linalg::LinalgOp> outer = tileBy(op, sizesWhere(/*parallel=*/true));
    if (failed(outer))
      return failure();
    // The fill and the consumer of this output tile, each vectorized whole
    // (its tile sizes are its extents, by the reduction's parallel vector
    // sizes along each dimension of the output).
    AffineMap outputMap = (*outer).getMatchingIndexingMap((*outer).getDpsInitOperand(0));
    TileSizes outputSizes;
    for (AffineExpr result : outputMap.getResults()) {
      outputSizes.workgroup.push_back(0);
      outputSizes.vector.push_back(vectorSizes[cast<AffineDimExpr>(result).getPosition()]);
    }
    if (consumer) {
      Value tileOutput = (*outer).getDpsInitOperand(0)->get();
      SmallVector<OpFoldResult> offsets, extents;
      if (auto view = tileOutput.getDefiningOp<memref::SubViewOp>()) {
        offsets = view.getMixedOffsets();
        extents = view.getMixedSizes();
      } else {
        rewriter.setInsertionPoint(*outer);
        offsets.assign(outputMap.getNumResults(), rewriter.getIndexAttr(0));
        extents = memref::getMixedSizes(rewriter, consumer.getLoc(), tileOutput);
      }
      rewriter.setInsertionPointAfter(*outer);
      FailureOr<TilingResult> tiledConsumer =
          cast<TilingInterface>(consumer.getOperation()).getTiledImplementation(rewriter, offsets, extents);
      if (failed(tiledConsumer) || tiledConsumer->tiledOps.size() != 1)
        return consumer->emitOpError("cannot be tiled with the reduction before it");
      writeTileSizes(cast<linalg::LinalgOp>(tiledConsumer->tiledOps.front()), outputSizes);
      rewriter.eraseOp(consumer);
    }
    if (fill) {
      rewriter.setInsertionPoint(*outer);
      Value tileOutput = (*outer).getDpsInitOperand(0)->get();
      auto tileFill = linalg::FillOp::create(rewriter, fill.getLoc(), fill.getDpsInputOperand(0)->get(), tileOutput);
      writeTileSizes(cast<linalg::LinalgOp>(tileFill.getOperation()), outputSizes);
      fusedFills.insert(fill.getOperation());
      rewriter.eraseOp(fill);
    }
    linalg::LinalgOp tiled = *outer;
    if (split) {
      FailureOr<linalg::LinalgOp> inner = tileBy(*outer, sizesWhere(/*parallel=*/false));
      if (failed(inner))
        return failure();
      tiled = *inner;
    }
    prefetchPackedRows(rewriter, tiled);

    if (!peel)
      return success();
    // Innermost first: the reduction loops, then the parallel ones.
    for (LoopLikeOpInterface loop : llvm::reverse(loops)) {
      scf::ForOp partial;
      // Fails when the step divides the trip count: nothing to peel.
      (void)scf::peelForLoopAndSimplifyBounds(
          rewriter, cast<scf::ForOp>(loop.getOperation()), partial);
    }
    return success();
  }

  /// Vectorizes `op` with one vector dimension per loop: the loop's extent
  /// when it is static (a full tile, or a partial one of known size), else
  /// the vector tile size, which bounds it, with a mask. Ops without tile
  /// sizes, and ops the vectorizer rejects, stay scalar; they are lowered to
  /// loops later.
  void vectorize(IRRewriter &rewriter, linalg::LinalgOp op) {
    FailureOr<std::optional<TileSizes>> sizes = readTileSizes(op);
    if (failed(sizes) || !*sizes || accessesI1Buffer(op))
      return;
    // Other convolutions (not one row of a 2-D NHWC one) stay scalar.
    if (isa<linalg::ConvolutionOpInterface>(op.getOperation()) ||
        matchPackedConvolution(op))
      return;
    // A permutation copy's tile seen through casts to dynamic sizes (a
    // peeled loop's) reads its static views again, so that it vectorizes
    // without masks and its transfers can be rewritten (transposeInRegisters).
    const bool permutation = isPermutationCopy(op);
    if (permutation)
      (void)memref::foldMemRefCast(op);
    SmallVector<int64_t> vectorSizes = op.getStaticLoopRanges();
    bool masked = false;
    for (auto [loop, extent] : llvm::enumerate(vectorSizes)) {
      if (!ShapedType::isDynamic(extent))
        continue;
      if ((*sizes)->vector[loop] == 0)
        return;
      extent = (*sizes)->vector[loop];
      masked = true;
    }
    // A masked vector op computes its masked-off lanes too, from undefined
    // padding: a division there may trap.
    if (masked && canTrap(op))
      return;
    // Spelled out: left empty, some paths of the vectorizer build vector
    // types from uninitialized scalable flags (seen with MLIR 22 release
    // builds on 1-element vectors).
    SmallVector<bool> scalable(vectorSizes.size(), false);
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
      viewPointReads(rewriter, generic);
    Operation *before = op->getPrevNode(), *after = op->getNextNode();
    Block *block = op->getBlock();
    vectorizeIfSupported(rewriter, op, vectorSizes, scalable);
    if (permutation)
      transposeInRegisters(block, before, after);
  }

  /// The transfers of a vectorized permutation copy (between `before` and
  /// `after` in `block`; null: its start or end), whose tile may take
  /// several input rows (SelectTileSizes: an RGB image from NCHW to NHWC):
  /// the permuted read becomes contiguous reads and a transpose in
  /// registers (shuffles), and the write of the tile, contiguous in memory,
  /// one flat write. Unrewritten, both went element by element.
  void transposeInRegisters(Block *block, Operation *before, Operation *after) {
    SmallVector<Operation *> transfers;
    for (Operation *op = before ? before->getNextNode() : &block->front(); op && op != after;
         op = op->getNextNode())
      if (isa<vector::TransferReadOp, vector::TransferWriteOp>(op))
        transfers.push_back(op);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(transfers, permutationPatterns, config);
  }

  /// A tile whose loops are of extent 1 except the vectorized ones reads
  /// some inputs at affine functions of those loops that are not a loop
  /// itself (a Winograd input transform's d[0][2 th + i][2 tw + j], tiled by
  /// 1 along th and tw): each such dimension is one position of the operand,
  /// which a rank-reducing view takes (offset by the function's value, size
  /// 1, dropped), the map reading the other dimensions. The maps are then
  /// projected permutations, which linalg's vectorizer takes (it rejects
  /// constants, even a batch index 0); before, such tiles stayed scalar.
  /// Leaves `op` alone when any such function depends on a longer loop.
  static void viewPointReads(IRRewriter &rewriter, linalg::GenericOp op) {
    if (!op.hasPureBufferSemantics())
      return;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    MLIRContext *context = op.getContext();
    SmallVector<AffineExpr> zeros(op.getNumLoops(), getAffineConstantExpr(0, context));
    struct PointRead {
      OpOperand *operand;
      SmallVector<int64_t> positions; // -1: the dimension stays whole
      AffineMap map;
    };
    SmallVector<PointRead> reads;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (map.isProjectedPermutation(/*allowZeroInResults=*/true) || !isa<MemRefType>(input->get().getType()))
        continue;
      PointRead read{input, {}, {}};
      SmallVector<AffineExpr> results;
      for (AffineExpr result : map.getResults()) {
        bool point = !isa<AffineDimExpr>(result);
        result.walk([&](AffineExpr e) {
          if (auto dim = dyn_cast<AffineDimExpr>(e))
            point &= ranges[dim.getPosition()] == 1;
        });
        if (!point) {
          if (!isa<AffineDimExpr>(result))
            return;
          read.positions.push_back(-1);
          results.push_back(result);
          continue;
        }
        auto value = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(result.replaceDims(zeros), 0, 0));
        if (!value)
          return;
        read.positions.push_back(value.getValue());
      }
      read.map = AffineMap::get(map.getNumDims(), 0, results, context);
      reads.push_back(std::move(read));
    }
    if (reads.empty())
      return;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    rewriter.setInsertionPoint(op);
    for (PointRead &read : reads) {
      Value source = read.operand->get();
      SmallVector<OpFoldResult> sizes = memref::getMixedSizes(rewriter, op.getLoc(), source);
      SmallVector<OpFoldResult> offsets, strides(sizes.size(), rewriter.getIndexAttr(1));
      SmallVector<int64_t> kept;
      for (auto [position, size] : llvm::zip(read.positions, sizes)) {
        offsets.push_back(rewriter.getIndexAttr(std::max<int64_t>(position, 0)));
        if (position >= 0)
          size = rewriter.getIndexAttr(1);
        else
          kept.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
      }
      auto viewType = memref::SubViewOp::inferRankReducedResultType(
          kept, cast<MemRefType>(source.getType()), offsets, sizes, strides);
      Value view = memref::SubViewOp::create(rewriter, op.getLoc(), viewType, source, offsets, sizes, strides);
      rewriter.modifyOpInPlace(op, [&] { read.operand->set(view); });
      maps[read.operand->getOperandNumber()] = read.map;
    }
    rewriter.modifyOpInPlace(op, [&] { op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps)); });
  }

  /// Replaces `op` by vector code when linalg's vectorizer takes it (with
  /// these vector sizes; none: its static shapes, as for a 1-D convolution
  /// tile, which it unrolls over output columns and filter taps).
  static void vectorizeIfSupported(IRRewriter &rewriter, linalg::LinalgOp op,
                                   ArrayRef<int64_t> vectorSizes = {},
                                   ArrayRef<bool> scalable = {}) {
    if (failed(linalg::vectorizeOpPrecondition(op, vectorSizes, scalable)))
      return;
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> result =
        linalg::vectorize(rewriter, op, vectorSizes, scalable);
    if (succeeded(result))
      rewriter.replaceOp(op, result->replacements);
  }

  FrozenRewritePatternSet canonicalizationPatterns;
  FrozenRewritePatternSet transferPatterns;
  FrozenRewritePatternSet permutationPatterns;
  FrozenRewritePatternSet contractionPatterns;
};

} // namespace
} // namespace strata::cpu
