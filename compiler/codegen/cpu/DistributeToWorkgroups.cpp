//===- DistributeToWorkgroups.cpp - Split kernels across workgroups ------===//
//
// A dispatch runs a kernel once per workgroup, possibly on many threads at
// once. Each linalg op of a kernel is tiled along one parallel loop and tile
// t goes to workgroup t mod count (cyclic distribution), so any workgroup
// count is correct and ceil(N / T) gives every workgroup one tile. The rule
// in checkDistributable keeps the ops of one kernel consistent: a workgroup
// only reads rows of intermediate buffers that it wrote itself, tile t of
// every op covering the same rows. So the loops of consecutive ops over the
// same tiles become one loop: each tile of rows goes through all the ops in
// turn while it is in the caches (and the register tiler can take an op's
// neighbours into its tiles), rather than each op sweeping all its rows
// first.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUDISTRIBUTETOWORKGROUPSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// One op to distribute: its workgroup tile T on loop `loop`.
struct Distributed {
  linalg::LinalgOp op;
  unsigned loop;
  int64_t tile;
};

/// The kernel argument and dimension whose size is `op`'s extent along
/// `loop`, when an operand indexes that loop directly.
std::optional<std::pair<unsigned, unsigned>>
findExtentArgument(linalg::LinalgOp op, unsigned loop) {
  for (OpOperand &operand : op->getOpOperands()) {
    auto arg = dyn_cast<BlockArgument>(getBufferRoot(operand.get()));
    if (!arg || arg != operand.get() ||
        !isa<func::FuncOp>(arg.getOwner()->getParentOp()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [dim, expr] : llvm::enumerate(map.getResults()))
      if (expr == getAffineDimExpr(loop, op->getContext()))
        return std::make_pair(arg.getArgNumber(), unsigned(dim));
  }
  return std::nullopt;
}

/// An op's workgroup loop, with its bounds before distribution.
struct WorkgroupLoop {
  scf::ForOp loop;
  OpFoldResult lower, upper, step;
};

struct CPUDistributeToWorkgroupsPass
    : impl::CPUDistributeToWorkgroupsPassBase<CPUDistributeToWorkgroupsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isKernel(func) && failed(distribute(func)))
        return signalPassFailure();
  }

  LogicalResult distribute(func::FuncOp kernel) {
    SmallVector<Distributed> ops;
    Operation *undistributed = nullptr;
    WalkResult walk = kernel.walk([&](linalg::LinalgOp op) {
      FailureOr<std::optional<TileSizes>> sizes = readTileSizes(op);
      if (failed(sizes))
        return WalkResult::interrupt();
      if (*sizes)
        for (auto [loop, tile] : llvm::enumerate((*sizes)->workgroup))
          if (tile) {
            ops.push_back({op, unsigned(loop), tile});
            return WalkResult::advance();
          }
      undistributed = op;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (ops.empty())
      return success();
    // Every workgroup would run an op without a workgroup tile whole, racing
    // with the others on its output.
    if (undistributed)
      return undistributed->emitOpError()
             << "has no workgroup tile while other ops of the kernel do";
    int64_t tile = ops.front().tile;
    for (Distributed d : ops)
      if (d.tile != tile)
        return d.op->emitOpError()
               << "has workgroup tile " << d.tile << ", expected " << tile
               << " like the other ops of the kernel";
    llvm::DenseMap<Operation *, unsigned> loops;
    for (Distributed d : ops)
      loops[d.op] = d.loop;
    if (failed(checkDistributable(
            kernel,
            [&](linalg::LinalgOp op) -> std::optional<unsigned> {
              return loops.lookup(op);
            },
            /*emitErrors=*/true)))
      return failure();

    recordDistribution(kernel, ops, tile);

    MLIRContext *context = kernel.getContext();
    Builder b(context);
    auto marked = [&](StringRef name) {
      return b.getDictionaryAttr(b.getNamedAttr(name, b.getUnitAttr()));
    };
    Location loc = kernel.getLoc();
    Type index = b.getIndexType();
    unsigned first = kernel.getNumArguments();
    if (failed(kernel.insertArguments(
            {first, first}, {index, index},
            {marked(kWorkgroupIdAttr), marked(kWorkgroupCountAttr)},
            {loc, loc})))
      return kernel.emitOpError("cannot append the workgroup arguments");
    Value id = kernel.getArgument(first);
    Value count = kernel.getArgument(first + 1);

    IRRewriter rewriter(context);
    SmallVector<WorkgroupLoop> workgroupLoops;
    for (Distributed d : ops) {
      SmallVector<OpFoldResult> tileSizes(d.op.getNumLoops(),
                                          rewriter.getIndexAttr(0));
      tileSizes[d.loop] = rewriter.getIndexAttr(d.tile);
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
      options.setTileSizes(tileSizes);
      rewriter.setInsertionPoint(d.op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(d.op.getOperation()), options);
      if (failed(tiled) || tiled->loops.size() != 1)
        return d.op->emitOpError("cannot be tiled along loop ")
               << d.loop << " for workgroups";
      rewriter.eraseOp(d.op);

      // Workgroup `id` starts at tile `id` and strides over `count` tiles.
      auto loop = cast<scf::ForOp>(tiled->loops.front().getOperation());
      workgroupLoops.push_back({loop, getAsOpFoldResult(loop.getLowerBound()),
                                getAsOpFoldResult(loop.getUpperBound()),
                                getAsOpFoldResult(loop.getStep())});
      rewriter.setInsertionPoint(loop);
      Location loopLoc = loop.getLoc();
      Value start = arith::AddIOp::create(
          rewriter, loopLoc, loop.getLowerBound(),
          arith::MulIOp::create(rewriter, loopLoc, id, loop.getStep()));
      Value stride =
          arith::MulIOp::create(rewriter, loopLoc, count, loop.getStep());
      loop.setLowerBound(start);
      loop.setStep(stride);

      // The tile itself is not split again.
      for (Operation *op : tiled->tiledOps)
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
          FailureOr<std::optional<TileSizes>> sizes = readTileSizes(linalgOp);
          if (succeeded(sizes) && *sizes) {
            TileSizes inner = **sizes;
            llvm::fill(inner.workgroup, 0);
            writeTileSizes(linalgOp, inner);
          }
        }
    }
    mergeLoops(rewriter, workgroupLoops);
    return success();
  }

  /// Merges each workgroup loop into the one before it when both run over
  /// the same tiles and only allocations and ops without memory effects lie
  /// between them (those move before the first loop).
  static void mergeLoops(IRRewriter &rewriter, MutableArrayRef<WorkgroupLoop> loops) {
    for (size_t i = 1, into = 0; i < loops.size(); ++i) {
      WorkgroupLoop &first = loops[into], &next = loops[i];
      bool mergeable = first.loop->getBlock() == next.loop->getBlock() &&
                       first.loop.getNumResults() == 0 && next.loop.getNumResults() == 0 &&
                       isEqualConstantIntOrValue(first.lower, next.lower) &&
                       isEqualConstantIntOrValue(first.upper, next.upper) &&
                       isEqualConstantIntOrValue(first.step, next.step);
      for (Operation *op = first.loop->getNextNode(); mergeable && op != next.loop; op = op->getNextNode())
        mergeable = isMemoryEffectFree(op) || hasSingleEffect<MemoryEffects::Allocate>(op);
      if (!mergeable) {
        into = i;
        continue;
      }
      // What lies between (the next loop's bounds among it) moves up.
      while (first.loop->getNextNode() != next.loop)
        first.loop->getNextNode()->moveBefore(first.loop);
      // The next loop's bounds equal the first's; its body joins the first's.
      Block *body = next.loop.getBody();
      rewriter.replaceAllUsesWith(next.loop.getInductionVar(), first.loop.getInductionVar());
      first.loop.getBody()->getOperations().splice(first.loop.getBody()->getTerminator()->getIterator(),
                                                   body->getOperations(), body->begin(),
                                                   std::prev(body->end()));
      rewriter.eraseOp(next.loop);
    }
  }

  /// Records T and the extent N of the distributed loops, so the ABI wrapper
  /// can tell the host how many workgroups to dispatch: the longest static
  /// extent, or, when one is dynamic, the kernel argument dimension it comes
  /// from. Any count is correct; this one gives each workgroup one tile.
  void recordDistribution(func::FuncOp kernel, ArrayRef<Distributed> ops,
                          int64_t tile) {
    MLIRContext *context = kernel.getContext();
    Builder b(context);
    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr("tile", b.getI64IntegerAttr(tile))};
    int64_t longest = 0;
    std::optional<std::pair<unsigned, unsigned>> dynamicExtent;
    for (Distributed d : ops) {
      int64_t extent = d.op.getStaticLoopRanges()[d.loop];
      if (!ShapedType::isDynamic(extent)) {
        longest = std::max(longest, extent);
        continue;
      }
      if (!dynamicExtent)
        dynamicExtent = findExtentArgument(d.op, d.loop);
    }
    if (dynamicExtent) {
      entries.push_back(b.getNamedAttr(
          "extent_arg", b.getI64IntegerAttr(dynamicExtent->first)));
      entries.push_back(b.getNamedAttr(
          "extent_dim", b.getI64IntegerAttr(dynamicExtent->second)));
    } else if (llvm::all_of(ops, [](Distributed d) {
                 return !ShapedType::isDynamic(
                     d.op.getStaticLoopRanges()[d.loop]);
               })) {
      entries.push_back(b.getNamedAttr("extent", b.getI64IntegerAttr(longest)));
    }
    kernel->setAttr(kDistributionAttr, b.getDictionaryAttr(entries));
  }
};

} // namespace
} // namespace strata::cpu
