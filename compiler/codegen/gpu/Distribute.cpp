//===- Distribute.cpp - Parallel loops over workgroups and invocations ----===//

#include "compiler/codegen/gpu/KernelABI.h"
#include "compiler/codegen/gpu/Passes.h"
#include "compiler/codegen/gpu/Reduction.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUDISTRIBUTEPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// How the host learns a loop's trip count: a constant, or a push-constant
/// word (a dynamic size the kernel receives).
struct TripCount {
  std::optional<int64_t> constant;
  std::optional<unsigned> word;
};

/// The trip count of dimension `d` of `loop`, when the host can compute it:
/// bounds from 0 with step 1 and an upper bound that is a constant, a
/// dynamic dimension of a memref argument or an index argument.
TripCount hostTripCount(func::FuncOp kernel, const PushConstantLayout &layout,
                        scf::ParallelOp loop, unsigned d) {
  if (!isConstantIntValue(loop.getLowerBound()[d], 0) ||
      !isConstantIntValue(loop.getStep()[d], 1))
    return {};
  Value upper = loop.getUpperBound()[d];
  if (std::optional<int64_t> c = getConstantIntValue(upper))
    return {*c, std::nullopt};
  if (auto arg = dyn_cast<BlockArgument>(upper)) {
    if (arg.getOwner()->isEntryBlock() &&
        arg.getOwner()->getParentOp() == kernel && arg.getType().isIndex())
      return {std::nullopt, layout.firstWord[arg.getArgNumber()]};
    return {};
  }
  auto dim = upper.getDefiningOp<memref::DimOp>();
  if (!dim)
    return {};
  auto source = dyn_cast<BlockArgument>(dim.getSource());
  std::optional<int64_t> index = dim.getConstantIndex();
  if (!source || !index || source.getOwner()->getParentOp() != kernel)
    return {};
  auto type = cast<MemRefType>(source.getType());
  if (!type.isDynamicDim(*index))
    return {type.getDimSize(*index), std::nullopt};
  return {std::nullopt, layout.dimWord(kernel, source.getArgNumber(), *index)};
}

/// The kernel argument `value` views (through view-like ops), or `value`
/// itself when it views none.
Value bindingOf(func::FuncOp kernel, Value value) {
  Value current = value;
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(current))
      return arg.getOwner()->getParentOp() == kernel ? current : value;
    auto view = current.getDefiningOp<ViewLikeOpInterface>();
    if (!view)
      return value;
    current = view.getViewSource();
  }
}

struct GPUDistributePass : impl::GPUDistributePassBase<GPUDistributePass> {
  using Base::Base;
  int64_t workgroupBytes = 0;
  // The invocations of the kernel's workgroup in the workgroup and rows
  // shapes: workgroup-invocations, or fewer for short rows.
  int64_t invocations = 0;

  /// Clamps the sizes to the target's resource limits, when given.
  LogicalResult applyTargetLimits() {
    if (targetEnv.empty())
      return success();
    auto env = dyn_cast_or_null<spirv::TargetEnvAttr>(
        parseAttribute(targetEnv, &getContext()));
    if (!env)
      return getOperation().emitError("target-env is not a #spirv.target_env: ")
             << targetEnv;
    spirv::ResourceLimitsAttr limits = env.getResourceLimits();
    int64_t most = limits.getMaxComputeWorkgroupInvocations();
    ArrayAttr sizes = limits.getMaxComputeWorkgroupSize();
    if (sizes && !sizes.empty())
      most = std::min<int64_t>(most, cast<IntegerAttr>(sizes[0]).getInt());
    workgroupSize = std::min<int64_t>(workgroupSize, most);
    workgroupInvocations = std::min<int64_t>(workgroupInvocations, most);
    maxWorkgroupMemory = std::min<int64_t>(
        maxWorkgroupMemory, limits.getMaxComputeSharedMemorySize());
    return success();
  }

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal() || kernel.isPrivate())
      return;
    // Distributed already (strata-gpu-matrix-tiles).
    if (kernel->hasAttr("strata.workgroup_size"))
      return;
    if (failed(applyTargetLimits()))
      return signalPassFailure();
    invocations = workgroupInvocations;
    scf::naivelyFuseParallelOps(kernel.getBody(), [&](Value a, Value b) {
      return bindingOf(kernel, a) == bindingOf(kernel, b);
    });
    if (!kernel.getBody().hasOneBlock())
      return serial(kernel);
    Block &body = kernel.getBody().front();
    scf::ParallelOp loop;
    bool oneLoop = true;
    for (Operation &op : body.without_terminator()) {
      if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
        oneLoop = oneLoop && !loop && parallel.getNumResults() == 0;
        loop = parallel;
        continue;
      }
      // Temporaries are private to each invocation (see
      // strata-gpu-private-temporaries).
      if (!isMemoryEffectFree(&op) && !isa<memref::AllocaOp>(op))
        oneLoop = false;
    }
    if (loop && oneLoop)
      grid(kernel, loop);
    else if (!rows(kernel))
      workgroup(kernel);
    // Parallel loops inside the distributed ones run in their invocation.
    sequentialize(kernel);
  }

  void sequentialize(func::FuncOp kernel) {
    SmallVector<scf::ParallelOp> loops;
    kernel.walk([&](scf::ParallelOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(kernel.getContext());
    for (scf::ParallelOp loop : loops) {
      rewriter.setInsertionPoint(loop);
      if (failed(scf::parallelForToNestedFors(rewriter, loop))) {
        loop.emitOpError("cannot become sequential loops");
        return signalPassFailure();
      }
    }
  }

  /// An scf.for, at `b`, over the linearized iterations of the first `rank`
  /// dimensions of `loop` from `start` by `stride`; `ivs` are those
  /// dimensions' induction variables back from the linear iteration (the
  /// last dimension fastest), and `b` is left at the start of its body.
  static scf::ForOp linearLoop(OpBuilder &b, scf::ParallelOp loop, unsigned rank,
                               Value start, Value stride, SmallVector<Value> &ivs) {
    Location loc = loop.getLoc();
    SmallVector<Value> trips;
    for (unsigned d = 0; d < rank; ++d) {
      Value span = b.createOrFold<arith::SubIOp>(loc, loop.getUpperBound()[d],
                                                 loop.getLowerBound()[d]);
      trips.push_back(
          b.createOrFold<arith::CeilDivUIOp>(loc, span, loop.getStep()[d]));
    }
    Value total = trips.front();
    for (Value trip : ArrayRef(trips).drop_front())
      total = b.createOrFold<arith::MulIOp>(loc, total, trip);
    auto linear = scf::ForOp::create(b, loc, start, total, stride);
    b.setInsertionPointToStart(linear.getBody());
    ivs.assign(rank, Value());
    Value rest = linear.getInductionVar();
    for (int d = rank - 1; d >= 0; --d) {
      Value index = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, trips[d]);
      if (d != 0)
        rest = arith::DivUIOp::create(b, loc, rest, trips[d]);
      ivs[d] = arith::AddIOp::create(
          b, loc, loop.getLowerBound()[d],
          arith::MulIOp::create(b, loc, index, loop.getStep()[d]));
    }
    return linear;
  }

  /// Replaces `loop` by an scf.for over its linearized iterations from
  /// `start` by `stride`.
  void strideLoop(scf::ParallelOp loop, Value start, Value stride) {
    OpBuilder b(loop);
    SmallVector<Value> ivs;
    linearLoop(b, loop, loop.getNumLoops(), start, stride, ivs);
    IRMapping mapping;
    mapping.map(loop.getInductionVars(), ivs);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    loop.erase();
  }

  /// Whether `op` (and what it holds) at most reads memory.
  static bool onlyReads(Operation *op) {
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    return effects && llvm::all_of(*effects, [](const auto &effect) {
             return isa<MemoryEffects::Read>(effect.getEffect());
           });
  }

  /// Whether `op` holds an scf.parallel.
  static bool holdsParallel(Operation *op) {
    return op->walk([](scf::ParallelOp) { return WalkResult::interrupt(); })
        .wasInterrupted();
  }

  /// One workgroup: the invocations share each parallel loop and wait for
  /// each other after it; loops holding parallel loops run in every
  /// invocation; other work runs in invocation 0, then all wait.
  /// Temporaries move to workgroup memory, shared by the invocations.
  LogicalResult distributeBlock(Block &block, Value thread, Value size) {
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      Location loc = op->getLoc();
      if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
        if (parallel.getNumResults() != 0)
          return parallel.emitOpError("has results; kernels reduce in scf.for");
        OpBuilder after(op->getContext());
        after.setInsertionPointAfter(op);
        mlir::gpu::BarrierOp::create(after, loc);
        strideLoop(parallel, thread, size);
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(op); loop && holdsParallel(op)) {
        if (loop.getNumResults() != 0)
          return loop.emitOpError("carries values around parallel loops");
        if (failed(distributeBlock(*loop.getBody(), thread, size)))
          return failure();
        continue;
      }
      if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
        MemRefType type = alloca.getType();
        if (!type.hasStaticShape())
          return alloca.emitOpError("is a temporary of dynamic size; workgroup "
                                    "memory holds static ones only");
        workgroupBytes += strata::gpu::workgroupBytes(type);
        OpBuilder b(op);
        auto shared = memref::AllocOp::create(
            b, loc,
            MemRefType::get(type.getShape(), type.getElementType(),
                            type.getLayout(),
                            spirv::StorageClassAttr::get(
                                op->getContext(),
                                spirv::StorageClass::Workgroup)));
        alloca.getResult().replaceAllUsesWith(shared.getResult());
        alloca.erase();
        if (failed(propagateMemorySpace(shared.getResult())))
          return failure();
        continue;
      }
      // Reads may run in every invocation: what they read was written
      // before the last barrier.
      if (isMemoryEffectFree(op) || onlyReads(op))
        continue;
      if (holdsParallel(op))
        return op->emitOpError("holds parallel loops under control flow "
                               "the GPU code generator does not distribute");
      if (op->getNumResults() != 0)
        return op->emitOpError("has side effects and results; the GPU code "
                               "generator cannot share them between "
                               "invocations");
      // A loop folding terms into one location: every invocation folds
      // some (see Reduction.h), then all wait.
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        Operation *next = op->getNextNode();
        FailureOr<int64_t> bytes =
            shareReduction(loop, thread, invocations);
        if (succeeded(bytes)) {
          workgroupBytes += *bytes;
          OpBuilder b(next);
          mlir::gpu::BarrierOp::create(b, loc);
          continue;
        }
      }
      OpBuilder b(op);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          thread, zero);
      auto only = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
      op->moveBefore(only.thenBlock()->getTerminator());
      b.setInsertionPointAfter(only);
      mlir::gpu::BarrierOp::create(b, loc);
    }
    return success();
  }

  /// A kernel that is a sequence of parallel loops (among temporaries and
  /// pure ops) whose leading `rank` dimensions are the same rows, and which
  /// touch what the kernel writes only in the row they run (a softmax, a
  /// layer norm).
  struct Rows {
    unsigned rank = 0;
    SmallVector<scf::ParallelOp> loops;
  };

  /// The memref `value` is, when no view lies between (else null).
  static Value rootMemref(Value value) {
    return isa<BlockArgument>(value) || value.getDefiningOp<memref::AllocaOp>()
               ? value
               : Value();
  }

  std::optional<Rows> findRows(func::FuncOp kernel) {
    Rows rows;
    Block &body = kernel.getBody().front();
    for (Operation &op : body.without_terminator()) {
      if (auto parallel = dyn_cast<scf::ParallelOp>(op)) {
        if (parallel.getNumResults() != 0)
          return std::nullopt;
        rows.loops.push_back(parallel);
        continue;
      }
      if (!isMemoryEffectFree(&op) && !isa<memref::AllocaOp>(op))
        return std::nullopt;
    }
    if (rows.loops.size() < 2)
      return std::nullopt;
    // The longest prefix of dimensions every loop shares.
    rows.rank = rows.loops.front().getNumLoops();
    for (scf::ParallelOp loop : rows.loops)
      rows.rank = std::min(rows.rank, loop.getNumLoops());
    for (unsigned d = 0; d < rows.rank; ++d) {
      scf::ParallelOp first = rows.loops.front();
      bool same = llvm::all_of(rows.loops, [&](scf::ParallelOp loop) {
        return loop.getLowerBound()[d] == first.getLowerBound()[d] &&
               loop.getUpperBound()[d] == first.getUpperBound()[d] &&
               loop.getStep()[d] == first.getStep()[d];
      });
      if (!same) {
        rows.rank = d;
        break;
      }
    }
    if (rows.rank == 0)
      return std::nullopt;
    // What the loops write, and where each access of it finds the row.
    llvm::DenseSet<Value> written;
    bool unknown = false;
    for (scf::ParallelOp loop : rows.loops)
      loop.walk([&](Operation *op) {
        if (auto store = dyn_cast<memref::StoreOp>(op)) {
          Value root = rootMemref(store.getMemRef());
          root ? (void)written.insert(root) : (void)(unknown = true);
        } else if (auto update = dyn_cast<memref::AtomicRMWOp>(op)) {
          Value root = rootMemref(update.getMemref());
          root ? (void)written.insert(root) : (void)(unknown = true);
        } else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(op) &&
                   !isa<scf::ParallelOp, scf::ForOp, scf::IfOp, scf::YieldOp,
                        scf::ReduceOp, scf::ReduceReturnOp>(op)) {
          unknown = true;
        }
      });
    if (unknown)
      return std::nullopt;
    llvm::DenseMap<Value, SmallVector<unsigned>> positions;
    for (scf::ParallelOp loop : rows.loops) {
      SmallVector<Value> ivs(loop.getInductionVars());
      ivs.resize(rows.rank);
      WalkResult result = loop.walk([&](Operation *op) {
        Value memref;
        ValueRange indices;
        if (auto load = dyn_cast<memref::LoadOp>(op))
          memref = load.getMemRef(), indices = load.getIndices();
        else if (auto store = dyn_cast<memref::StoreOp>(op))
          memref = store.getMemRef(), indices = store.getIndices();
        else if (auto update = dyn_cast<memref::AtomicRMWOp>(op))
          memref = update.getMemref(), indices = update.getIndices();
        else if (!op->getOperands().empty() && !isMemoryEffectFree(op))
          return WalkResult::advance();
        if (!memref)
          return !isa<memref::DimOp>(op) &&
                         llvm::any_of(op->getOperands(),
                                      [&](Value v) { return written.contains(v); })
                     ? WalkResult::interrupt()  // used other than by accesses
                     : WalkResult::advance();
        if (!written.contains(memref))
          return WalkResult::advance();
        SmallVector<unsigned> at;
        for (Value iv : ivs) {
          auto it = llvm::find(indices, iv);
          if (it == indices.end())
            return WalkResult::interrupt();
          at.push_back(it - indices.begin());
        }
        auto [entry, inserted] = positions.try_emplace(memref, at);
        return inserted || entry->second == at ? WalkResult::advance()
                                               : WalkResult::interrupt();
      });
      if (result.wasInterrupted())
        return std::nullopt;
    }
    // Written memrefs passed to ops other than accesses (a view, a call)
    // outside the loops.
    for (Value memref : written)
      for (Operation *user : memref.getUsers())
        if (!isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
                 memref::DimOp>(user))
          return std::nullopt;
    return rows;
  }

  /// One workgroup per row at a time (a grid-stride loop over the rows):
  /// its invocations share each parallel loop of the row, as in
  /// `workgroup`. Returns false, changing nothing, for a kernel that is not
  /// a sequence of loops over the same rows (see findRows) or whose row
  /// count the host cannot compute.
  bool rows(func::FuncOp kernel) {
    std::optional<Rows> found = findRows(kernel);
    if (!found)
      return false;
    PushConstantLayout layout = PushConstantLayout::of(kernel);
    int64_t constantRows = 1;
    SmallVector<int32_t> words;
    for (unsigned d = 0; d < found->rank; ++d) {
      TripCount count = hostTripCount(kernel, layout, found->loops.front(), d);
      if (count.constant)
        constantRows *= *count.constant;
      else if (count.word)
        words.push_back(*count.word);
      else
        return false;
    }
    // Invocations for the work of one row: the largest static trip count
    // of the loops' other dimensions (and of sequential loops inside),
    // rounded up to a power of two, from 32 up to workgroup-invocations.
    int64_t rowWork = 0;
    for (scf::ParallelOp loop : found->loops) {
      int64_t work = 1;
      for (unsigned d = found->rank; d < loop.getNumLoops(); ++d) {
        TripCount count = hostTripCount(kernel, layout, loop, d);
        work *= count.constant ? *count.constant : workgroupInvocations;
      }
      loop.getBody()->walk([&](scf::ForOp inner) {
        std::optional<int64_t> lower = getConstantIntValue(inner.getLowerBound());
        std::optional<int64_t> upper = getConstantIntValue(inner.getUpperBound());
        std::optional<int64_t> step = getConstantIntValue(inner.getStep());
        work = std::max<int64_t>(
            work, lower && upper && step && *step > 0
                      ? std::max<int64_t>(*upper - *lower, 0) / *step
                      : int64_t(workgroupInvocations));
      });
      rowWork = std::max(rowWork, work);
    }
    invocations = std::clamp<int64_t>(
        int64_t(llvm::PowerOf2Ceil(uint64_t(rowWork))), 32,
        int64_t(workgroupInvocations));

    // Pure ops and temporaries first, then one loop over the rows holding
    // the loops' rows.
    Block &body = kernel.getBody().front();
    scf::ParallelOp first = found->loops.front();
    SmallVector<Operation *> later;
    for (Operation *op = first->getNextNode(); op && op != body.getTerminator();
         op = op->getNextNode())
      if (!isa<scf::ParallelOp>(op))
        later.push_back(op);
    for (Operation *op : later)
      op->moveBefore(first);
    Location loc = first.getLoc();
    OpBuilder b(first);
    Value block = mlir::gpu::BlockIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value grid = mlir::gpu::GridDimOp::create(b, loc, mlir::gpu::Dimension::x);
    SmallVector<Value> rowIvs;
    linearLoop(b, first, found->rank, block, grid, rowIvs);
    for (scf::ParallelOp loop : found->loops) {
      IRMapping mapping;
      for (unsigned d = 0; d < found->rank; ++d)
        mapping.map(loop.getInductionVars()[d], rowIvs[d]);
      unsigned rank = loop.getNumLoops();
      if (rank == found->rank) {
        for (Operation &op : loop.getBody()->without_terminator())
          b.clone(op, mapping);
      } else {
        auto inner = scf::ParallelOp::create(
            b, loop.getLoc(), loop.getLowerBound().drop_front(found->rank),
            loop.getUpperBound().drop_front(found->rank),
            loop.getStep().drop_front(found->rank));
        for (unsigned d = found->rank; d < rank; ++d)
          mapping.map(loop.getInductionVars()[d],
                      inner.getInductionVars()[d - found->rank]);
        OpBuilder in = OpBuilder::atBlockBegin(inner.getBody());
        for (Operation &op : loop.getBody()->without_terminator())
          in.clone(op, mapping);
      }
      loop.erase();
    }

    Builder attrs(kernel.getContext());
    Attribute count;
    if (words.empty()) {
      count = attrs.getDenseI32ArrayAttr(
          {int32_t(std::clamp<int64_t>(constantRows, 1, maxWorkgroupCount)), 1, 1});
    } else {
      // The host dispatches ceil(factor * words / invocations) workgroups.
      count = attrs.getDictionaryAttr(
          {attrs.getNamedAttr("factor", attrs.getI64IntegerAttr(
                                            constantRows * invocations)),
           attrs.getNamedAttr("words", attrs.getDenseI32ArrayAttr(words)),
           attrs.getNamedAttr("max", attrs.getI64IntegerAttr(maxWorkgroupCount))});
    }
    workgroup(kernel, count);
    return true;
  }

  /// One workgroup (or, with `count`, that many: see `rows`).
  void workgroup(func::FuncOp kernel, Attribute count = {}) {
    Block &body = kernel.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    Location loc = kernel.getLoc();
    Value thread = mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value size = arith::ConstantIndexOp::create(b, loc, invocations);
    workgroupBytes = 0;
    if (failed(distributeBlock(body, thread, size)))
      return signalPassFailure();
    if (workgroupBytes > maxWorkgroupMemory) {
      kernel.emitOpError("needs ")
          << workgroupBytes << " bytes of workgroup memory for its "
          << "temporaries; the target offers " << int64_t(maxWorkgroupMemory)
          << " (a smaller max-private-bytes moves temporaries to the scratch "
          << "binding; in a module with CPU executables too, the CPU's stack "
          << "limit decides)";
      return signalPassFailure();
    }
    kernel->setAttr("strata.workgroup_memory",
                    Builder(kernel.getContext()).getI64IntegerAttr(workgroupBytes));
    Builder attrs(kernel.getContext());
    kernel->setAttr("strata.workgroup_size",
                    attrs.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(invocations), 1, 1}));
    kernel->setAttr("strata.workgroup_count",
                    count ? count : attrs.getDenseI32ArrayAttr({1, 1, 1}));
  }

  void serial(func::FuncOp kernel) {
    // One invocation runs every iteration, in order.
    sequentialize(kernel);
    Builder b(kernel.getContext());
    kernel->setAttr("strata.workgroup_size", b.getDenseI32ArrayAttr({1, 1, 1}));
    kernel->setAttr("strata.workgroup_count",
                    b.getDenseI32ArrayAttr({1, 1, 1}));
  }

  void grid(func::FuncOp kernel, scf::ParallelOp loop) {
    MLIRContext *context = kernel.getContext();
    PushConstantLayout layout = PushConstantLayout::of(kernel);
    Location loc = loop.getLoc();
    OpBuilder b(loop);

    // What the host needs to know of the iterations.
    int64_t factor = 1;
    SmallVector<int32_t> words;
    bool hostKnows = true;
    for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
      TripCount count = hostTripCount(kernel, layout, loop, d);
      if (count.constant)
        factor *= *count.constant;
      else if (count.word)
        words.push_back(*count.word);
      else
        hostKnows = false;
    }

    Value size = arith::ConstantIndexOp::create(b, loc, workgroupSize);
    Value block = mlir::gpu::BlockIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value thread = mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x);
    Value grid = mlir::gpu::GridDimOp::create(b, loc, mlir::gpu::Dimension::x);
    Value start = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, block, size), thread);
    Value stride = arith::MulIOp::create(b, loc, grid, size);
    strideLoop(loop, start, stride);

    Builder attrs(context);
    kernel->setAttr("strata.workgroup_size",
                    attrs.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(workgroupSize), 1, 1}));
    if (!hostKnows) {
      // Any count is correct for a grid-stride loop; this one keeps a
      // large device busy without the host knowing the iterations.
      kernel->setAttr("strata.workgroup_count",
                      attrs.getDenseI32ArrayAttr({256, 1, 1}));
    } else if (words.empty()) {
      int64_t count = std::clamp<int64_t>(
          (factor + workgroupSize - 1) / workgroupSize, 1, maxWorkgroupCount);
      kernel->setAttr("strata.workgroup_count",
                      attrs.getDenseI32ArrayAttr(
                          {static_cast<int32_t>(count), 1, 1}));
    } else {
      kernel->setAttr(
          "strata.workgroup_count",
          attrs.getDictionaryAttr(
              {attrs.getNamedAttr("factor", attrs.getI64IntegerAttr(factor)),
               attrs.getNamedAttr("words", attrs.getDenseI32ArrayAttr(words)),
               attrs.getNamedAttr("max", attrs.getI64IntegerAttr(
                                             maxWorkgroupCount))}));
    }
  }
};

} // namespace
} // namespace strata::gpu
