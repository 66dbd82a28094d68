//===- PlanTransients.cpp - Arenas for the transients of each block -------===//
//
// strata-plan-transients (Passes.h): a dispatch result is a transient of its
// block when only later dispatches of the block read it, directly or through
// reshapes (views of the same buffer, which live as long as their last
// reader). Statically sized transients and the kernels' scratch share one
// arena by lifetime; dynamically sized ones share slots (first fit in order
// of definition), allocated together at the first of them when every size
// is known there.
//
//===----------------------------------------------------------------------===//

#include "compiler/dispatch/IR/FlowOps.h"
#include "compiler/host/KernelVariants.h"
#include "compiler/host/MemoryPlan.h"
#include "compiler/host/Passes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace strata::host {
namespace {

/// A host view of its operand's buffer.
bool isView(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(op);
}

/// The position of the last reader of `result` when it is a transient.
std::optional<int64_t>
transientLastUse(Value result, Block &block,
                 const DenseMap<Operation *, int64_t> &position) {
  int64_t last = position.lookup(result.getDefiningOp());
  SmallVector<Value> views = {result};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (user->getBlock() != &block)
        return std::nullopt;
      if (isView(user))
        views.push_back(user->getResult(0));
      else if (!isa<flow::DispatchOp, tensor::DimOp>(user))
        return std::nullopt;
      last = std::max(last, position.lookup(user));
    }
  }
  return last;
}

/// The dispatch that computes `value`, seen through reshapes (views of its
/// buffer); null for anything else.
flow::DispatchOp producer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto dispatch = dyn_cast<flow::DispatchOp>(def))
      return dispatch;
    if (!isView(def))
      return nullptr;
    value = def->getOperand(0);
  }
  return nullptr;
}

/// For each op's position, the first and last positions of its group: a run
/// of dispatches none of which reads another's result. strata-host-to-vm
/// records no barrier between dispatches that touch no common bytes, so that
/// the runtime may run them at once; a buffer a group's dispatch reads or
/// writes therefore lives from the group's first op to its last, so that
/// no other dispatch of the group reuses its bytes (which would order the
/// two). Ops other than dispatches and views end a group.
SmallVector<std::pair<int64_t, int64_t>> dispatchGroups(Block &block) {
  SmallVector<std::pair<int64_t, int64_t>> groups;
  DenseSet<Operation *> members;
  int64_t start = 0, index = 0;
  auto close = [&](int64_t end) {
    for (int64_t i = int64_t(groups.size()); i < end; ++i)
      groups.push_back({start, end - 1});
    members.clear();
    start = end;
  };
  for (Operation &op : block) {
    if (auto dispatch = dyn_cast<flow::DispatchOp>(op)) {
      if (llvm::any_of(dispatch->getOperands(), [&](Value operand) {
            flow::DispatchOp source = producer(operand);
            return source && members.contains(source);
          }))
        close(index);
      members.insert(dispatch);
    } else if (!isView(&op) && !isa<tensor::DimOp>(op)) {
      close(index);
    }
    ++index;
  }
  close(index);
  return groups;
}

LogicalResult planBlock(Block &block, SymbolTable &symbols) {
  Builder b(block.getParent()->getContext());
  DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : block)
    position[&op] = index++;
  SmallVector<std::pair<int64_t, int64_t>> groups = dispatchGroups(block);
  auto lifetime = [&](int64_t first, int64_t last, int64_t bytes) {
    return Lifetime{groups[first].first, groups[last].second, bytes};
  };

  struct Static {
    flow::DispatchOp dispatch;
    unsigned result; // ~0u: the kernel's scratch
  };
  SmallVector<Static> statics;
  SmallVector<Lifetime> lifetimes;
  struct Dynamic {
    OpResult value;
    Lifetime lifetime;
  };
  SmallVector<Dynamic> dynamics;
  for (Operation &op : block) {
    auto dispatch = dyn_cast<flow::DispatchOp>(op);
    if (!dispatch)
      continue;
    auto kernel = symbols.lookup<func::FuncOp>(dispatch.getKernel());
    if (!kernel)
      return dispatch.emitOpError("dispatches '")
             << dispatch.getKernel() << "', which is not in the module";
    FailureOr<SmallVector<KernelVariant>> variants =
        kernelVariantsOf(kernel, dispatch);
    if (failed(variants))
      return failure();
    // A kernel's scratch lives for its dispatch only.
    if (uint64_t scratch = variants->front().dispatch.scratchBytes) {
      statics.push_back({dispatch, ~0u});
      lifetimes.push_back(lifetime(position[&op], position[&op], int64_t(scratch)));
    }
    for (OpResult result : dispatch->getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      std::optional<int64_t> last = transientLastUse(result, block, position);
      if (!last)
        continue;
      if (!type.hasStaticShape()) {
        dynamics.push_back({result, lifetime(position[&op], *last, 0)});
        continue;
      }
      statics.push_back({dispatch, result.getResultNumber()});
      lifetimes.push_back(lifetime(
          position[&op], *last,
          type.getNumElements() * elementBytes(type.getElementType())));
    }
  }

  // Static transients and scratch: one arena.
  if (!statics.empty()) {
    ArenaPlan plan = planArena(lifetimes);
    DenseMap<Operation *, SmallVector<int64_t>> offsets;
    for (auto [item, offset] : llvm::zip(statics, plan.offsets)) {
      if (item.result == ~0u) {
        item.dispatch->setAttr(kScratchOffsetAttr, b.getI64IntegerAttr(offset));
        continue;
      }
      SmallVector<int64_t> &list = offsets[item.dispatch];
      list.resize(item.dispatch->getNumResults(), -1);
      list[item.result] = offset;
    }
    for (auto &[op, list] : offsets)
      op->setAttr(kTransientOffsetsAttr, b.getDenseI64ArrayAttr(list));
    Operation *first = statics.front().dispatch;
    first->setAttr(kArenaBytesAttr, b.getI64IntegerAttr(plan.size));
  }

  // Dynamic transients: slots shared by lifetime, allocated at the first of
  // them; a value whose sizes come later keeps its own buffer.
  if (dynamics.empty())
    return success();
  Operation *first = dynamics.front().value.getOwner();
  auto knownAtFirst = [&](OpResult value) {
    auto dispatch = cast<flow::DispatchOp>(value.getOwner());
    for (Value dim : dispatch.getDynamicDimsOf(value.getResultNumber())) {
      Operation *def = dim.getDefiningOp();
      if (def && def->getBlock() == &block && !def->isBeforeInBlock(first))
        return false;
    }
    return true;
  };
  SmallVector<int64_t> freeAfter; // per slot
  DenseMap<Operation *, SmallVector<int64_t>> slots;
  for (Dynamic &item : dynamics) {
    if (!knownAtFirst(item.value))
      continue;
    int64_t slot = 0;
    while (slot < int64_t(freeAfter.size()) &&
           freeAfter[slot] >= item.lifetime.first)
      ++slot;
    if (slot == int64_t(freeAfter.size()))
      freeAfter.push_back(0);
    freeAfter[slot] = item.lifetime.last;
    SmallVector<int64_t> &list = slots[item.value.getOwner()];
    list.resize(item.value.getOwner()->getNumResults(), -1);
    list[item.value.getResultNumber()] = slot;
  }
  for (auto &[op, list] : slots)
    op->setAttr(kDynamicSlotsAttr, b.getDenseI64ArrayAttr(list));
  if (!slots.empty())
    first->setAttr(kDynamicArenaAttr, b.getUnitAttr());
  return success();
}

struct PlanTransientsPass
    : PassWrapper<PlanTransientsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PlanTransientsPass)
  StringRef getArgument() const final { return "strata-plan-transients"; }
  StringRef getDescription() const final {
    return "Places each block's transient dispatch results and kernel "
           "scratch in an arena by lifetime";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<flow::FlowDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp function : hostFunctions(module))
      for (Block &block : function.getBody())
        if (failed(planBlock(block, symbols)))
          return signalPassFailure();
  }
};

} // namespace

SmallVector<func::FuncOp> hostFunctions(ModuleOp module) {
  return llvm::filter_to_vector(module.getOps<func::FuncOp>(),
                                [](func::FuncOp function) {
                                  return !function->hasAttr(flow::kKernelAttr);
                                });
}

int64_t elementBytes(Type type) {
  return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
}

std::unique_ptr<Pass> createPlanTransientsPass() {
  return std::make_unique<PlanTransientsPass>();
}

} // namespace strata::host
