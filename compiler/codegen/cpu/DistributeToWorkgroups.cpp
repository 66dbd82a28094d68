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
// An op may also be tiled along a second loop (SelectTileSizes gives a large
// matmul tiles of rows and columns): its tiles then form a static grid, rows
// outer, and workgroup `id` takes grid tiles id, id + count, ... in that
// order, so any count is still correct. Every op of such a kernel has the
// same two tiles over the same grid.
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

/// One op to distribute: its workgroup tile T on loop `loop`, and on a
/// second loop `columns` when it is tiled in two dimensions.
struct Distributed {
  linalg::LinalgOp op;
  unsigned loop;
  int64_t tile;
  std::optional<std::pair<unsigned, int64_t>> columns;
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
      if (*sizes) {
        std::optional<Distributed> d;
        for (auto [loop, tile] : llvm::enumerate((*sizes)->workgroup)) {
          if (!tile)
            continue;
          if (d)
            d->columns = std::make_pair(unsigned(loop), tile);
          else
            d = Distributed{op, unsigned(loop), tile, std::nullopt};
        }
        if (d) {
          ops.push_back(*d);
          return WalkResult::advance();
        }
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
    // Tiles in two dimensions: the same static grid for every op.
    std::optional<std::pair<int64_t, int64_t>> grid;
    if (ops.front().columns) {
      for (Distributed d : ops) {
        FailureOr<std::pair<int64_t, int64_t>> other = gridOf(d);
        if (failed(other))
          return failure();
        if (!grid)
          grid = *other;
        if (d.columns->second != ops.front().columns->second || *other != *grid)
          return d.op->emitOpError()
                 << "has workgroup tiles unlike the first op's: every op of a kernel tiled in "
                    "two dimensions needs the same "
                 << grid->first << " x " << grid->second << " grid of " << tile << " x "
                 << ops.front().columns->second << " tiles";
      }
    }
    llvm::DenseMap<Operation *, unsigned> loops, columnLoops;
    for (Distributed d : ops) {
      loops[d.op] = d.loop;
      if (d.columns)
        columnLoops[d.op] = d.columns->first;
    }
    if (failed(checkDistributable(
            kernel,
            [&](linalg::LinalgOp op) -> std::optional<unsigned> {
              return loops.lookup(op);
            },
            /*emitErrors=*/true)))
      return failure();
    // ... and its column tiles read only the columns they wrote.
    if (grid && failed(checkDistributable(
                    kernel,
                    [&](linalg::LinalgOp op) -> std::optional<unsigned> {
                      return columnLoops.lookup(op);
                    },
                    /*emitErrors=*/true, /*splitColumns=*/1)))
      return failure();

    recordDistribution(kernel, ops, tile, grid);

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
      if (d.columns)
        tileSizes[d.columns->first] = rewriter.getIndexAttr(d.columns->second);
      scf::SCFTilingOptions options;
      options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
      options.setTileSizes(tileSizes);
      rewriter.setInsertionPoint(d.op);
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(d.op.getOperation()), options);
      if (failed(tiled) || tiled->loops.size() != (d.columns ? 2u : 1u))
        return d.op->emitOpError("cannot be tiled along loop ")
               << d.loop << (d.columns ? " and loop " + std::to_string(d.columns->first) : "")
               << " for workgroups";
      rewriter.eraseOp(d.op);

      auto loop = cast<scf::ForOp>(tiled->loops.front().getOperation());
      if (d.columns) {
        FailureOr<scf::ForOp> flat = flattenGrid(
            rewriter, loop, cast<scf::ForOp>(tiled->loops.back().getOperation()), *grid);
        if (failed(flat))
          return d.op->emitOpError("cannot be distributed over its grid of tiles");
        loop = *flat;
      }
      // Workgroup `id` starts at tile `id` and strides over `count` tiles.
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

  /// The grid of an op tiled in two dimensions: its static tile counts
  /// along both loops. Reports and fails when an extent is dynamic or not a
  /// whole number of tiles (the grid's tiles have static sizes).
  static FailureOr<std::pair<int64_t, int64_t>> gridOf(Distributed d) {
    SmallVector<int64_t> ranges = d.op.getStaticLoopRanges();
    if (!d.columns)
      return d.op->emitOpError("is tiled in one dimension where the kernel's first op is tiled in two");
    int64_t rows = ranges[d.loop], columns = ranges[d.columns->first];
    if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(columns) ||
        rows % d.tile != 0 || columns % d.columns->second != 0)
      return d.op->emitOpError()
             << "cannot take workgroup tiles of " << d.tile << " x " << d.columns->second
             << ": its extents along loops " << d.loop << " and " << d.columns->first
             << " must be static whole numbers of tiles";
    return std::make_pair(rows / d.tile, columns / d.columns->second);
  }

  /// The two tile loops of an op tiled in two dimensions (`rows` holding
  /// only `columns`) as one loop over the tiles of the `grid`, rows outer:
  /// iteration t runs the tile of row t / columns and column t mod columns.
  /// Returns the new loop, over 0 .. tile count with step 1.
  static FailureOr<scf::ForOp> flattenGrid(IRRewriter &rewriter, scf::ForOp rows,
                                           scf::ForOp columns,
                                           std::pair<int64_t, int64_t> grid) {
    if (rows.getNumResults() || columns.getNumResults() ||
        &rows.getBody()->front() != columns.getOperation() ||
        columns->getNextNode() != rows.getBody()->getTerminator())
      return failure();
    Location loc = rows.getLoc();
    rewriter.setInsertionPoint(rows);
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    auto flat = scf::ForOp::create(rewriter, loc, index(0), index(grid.first * grid.second),
                                   index(1));
    rewriter.setInsertionPointToStart(flat.getBody());
    Value t = flat.getInductionVar();
    auto position = [&](scf::ForOp loop, Value ordinal) -> Value {
      return arith::AddIOp::create(rewriter, loc, loop.getLowerBound(),
                                   arith::MulIOp::create(rewriter, loc, ordinal, loop.getStep()));
    };
    Value width = index(grid.second);
    Value row = position(rows, arith::DivUIOp::create(rewriter, loc, t, width));
    Value column = position(columns, arith::RemUIOp::create(rewriter, loc, t, width));
    Block *body = columns.getBody();
    rewriter.replaceAllUsesWith(rows.getInductionVar(), row);
    rewriter.replaceAllUsesWith(columns.getInductionVar(), column);
    flat.getBody()->getOperations().splice(flat.getBody()->getTerminator()->getIterator(),
                                           body->getOperations(), body->begin(),
                                           std::prev(body->end()));
    rewriter.eraseOp(rows);
    return flat;
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
  /// from; for tiles in two dimensions, the number of tiles in the grid.
  /// Any count is correct; this one gives each workgroup one tile.
  void recordDistribution(func::FuncOp kernel, ArrayRef<Distributed> ops,
                          int64_t tile,
                          std::optional<std::pair<int64_t, int64_t>> grid) {
    MLIRContext *context = kernel.getContext();
    Builder b(context);
    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr("tile", b.getI64IntegerAttr(tile))};
    if (grid) {
      entries.push_back(b.getNamedAttr("columns", b.getI64IntegerAttr(ops.front().columns->second)));
      entries.push_back(
          b.getNamedAttr("tiles", b.getI64IntegerAttr(grid->first * grid->second)));
      kernel->setAttr(kDistributionAttr, b.getDictionaryAttr(entries));
      return;
    }
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
