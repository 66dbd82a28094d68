//===- Reduction.cpp - Reductions shared by a workgroup's invocations -----===//

#include "compiler/codegen/gpu/Reduction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace strata::gpu {
namespace {

/// The fold of a reduction loop's body.
struct Fold {
  memref::LoadOp load;
  Operation *combine = nullptr;
  memref::StoreOp store;
  Value term; // the combine's operand that is not the loaded value
};

bool isCombiner(Operation *op) {
  return isa<arith::AddFOp, arith::MulFOp, arith::MaxNumFOp, arith::MinNumFOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::AddIOp,
             arith::MulIOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
             arith::MinUIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op);
}

/// The fold of `loop` when its body is terms that only read memory, then
/// load, combine and store of one location the loop does not index.
std::optional<Fold> matchFold(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return std::nullopt;
  Block *body = loop.getBody();
  Fold fold;
  for (Operation &op : body->without_terminator()) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (fold.store)
        return std::nullopt;
      fold.store = store;
    }
  }
  if (!fold.store)
    return std::nullopt;
  fold.combine = fold.store.getValue().getDefiningOp();
  if (!fold.combine || fold.combine->getBlock() != body ||
      !isCombiner(fold.combine))
    return std::nullopt;
  for (Value operand : fold.combine->getOperands()) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == fold.store.getMemRef() &&
        load.getIndices() == fold.store.getIndices() && !fold.load) {
      fold.load = load;
      continue;
    }
    fold.term = operand;
  }
  if (!fold.load || !fold.term || fold.term == fold.load.getResult() ||
      !fold.load.getResult().hasOneUse())
    return std::nullopt;
  for (Value index : fold.store.getIndices())
    if (loop.getRegion().isAncestor(index.getParentRegion()))
      return std::nullopt;
  // Everything else only computes or reads, and not the location.
  for (Operation &op : body->without_terminator()) {
    if (&op == fold.load || &op == fold.combine || &op == fold.store)
      continue;
    if (!isMemoryEffectFree(&op) && !isa<memref::LoadOp>(op))
      return std::nullopt;
    for (Value operand : op.getOperands())
      if (operand == fold.store.getMemRef())
        return std::nullopt;
  }
  return fold;
}

/// The term of iteration `iv` of `loop`, computed before `b`'s point.
Value cloneTerm(OpBuilder &b, scf::ForOp loop, const Fold &fold, Value iv) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (&op == fold.load || &op == fold.combine || &op == fold.store)
      continue;
    b.clone(op, mapping);
  }
  return mapping.lookupOrDefault(fold.term);
}

/// `a` combined with `b` by the combining op of `fold`, in that order.
Value combine(OpBuilder &b, const Fold &fold, Value lhs, Value rhs) {
  Operation *op = b.clone(*fold.combine);
  op->setOperands({lhs, rhs});
  return op->getResult(0);
}

} // namespace

FailureOr<int64_t> shareReduction(scf::ForOp loop, Value thread, int64_t size) {
  // Nested loops over one fold become one loop over their product.
  if (!matchFold(loop) && isa<scf::ForOp>(loop.getBody()->front()) &&
      failed(coalescePerfectlyNestedSCFForLoops(loop)))
    return failure();
  std::optional<Fold> fold = matchFold(loop);
  if (!fold)
    return failure();

  Location loc = loop.getLoc();
  MLIRContext *context = loop.getContext();
  OpBuilder b(loop);
  Type type = fold->term.getType();
  Attribute workgroup =
      spirv::StorageClassAttr::get(context, spirv::StorageClass::Workgroup);
  auto partials = memref::AllocOp::create(
      b, loc, MemRefType::get({size}, type, nullptr, workgroup));
  auto present = memref::AllocOp::create(
      b, loc, MemRefType::get({size}, b.getI32Type(), nullptr, workgroup));

  // Each invocation folds the terms of its iterations, the first as it is.
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Value first = arith::AddIOp::create(
      b, loc, lb, arith::MulIOp::create(b, loc, thread, step));
  Value stride = arith::MulIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, size), step);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, first, ub);
  auto mine = scf::IfOp::create(b, loc, any, /*withElseRegion=*/true);
  {
    // The invocation's value lives in a private variable rather than in
    // loop-carried values: SPIR-V from an scf.for with iter_args that runs
    // no iteration gives a wrong result on lavapipe.
    auto kernel = loop->getParentOfType<FunctionOpInterface>();
    OpBuilder entry = OpBuilder::atBlockBegin(&kernel.getFunctionBody().front());
    Value own = memref::AllocaOp::create(entry, loc, MemRefType::get({1}, type));
    OpBuilder then = mine.getThenBodyBuilder();
    Value zeroIndex = arith::ConstantIndexOp::create(then, loc, 0);
    memref::StoreOp::create(then, loc, cloneTerm(then, loop, *fold, first), own,
                            zeroIndex);
    Value next = arith::AddIOp::create(then, loc, first, stride);
    auto rest = scf::ForOp::create(then, loc, next, ub, stride);
    OpBuilder inner = OpBuilder::atBlockBegin(rest.getBody());
    Value term = cloneTerm(inner, loop, *fold, rest.getInductionVar());
    Value sum = combine(inner, *fold,
                        memref::LoadOp::create(inner, loc, own, zeroIndex), term);
    memref::StoreOp::create(inner, loc, sum, own, zeroIndex);
    memref::StoreOp::create(then, loc,
                            memref::LoadOp::create(then, loc, own, zeroIndex),
                            partials, thread);
    memref::StoreOp::create(
        then, loc, arith::ConstantIntOp::create(then, loc, then.getI32Type(), 1),
        present, thread);
    OpBuilder none = mine.getElseBodyBuilder();
    memref::StoreOp::create(
        none, loc, arith::ConstantIntOp::create(none, loc, none.getI32Type(), 0),
        present, thread);
  }
  mlir::gpu::BarrierOp::create(b, loc);

  // Invocation 0 folds the values into the location.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, zero);
  auto last = scf::IfOp::create(b, loc, isFirst, /*withElseRegion=*/false);
  OpBuilder then = OpBuilder::atBlockBegin(last.thenBlock());
  Value initial = memref::LoadOp::create(then, loc, fold->store.getMemRef(),
                                         fold->store.getIndices());
  auto gather = scf::ForOp::create(
      then, loc, zero, arith::ConstantIndexOp::create(then, loc, size),
      arith::ConstantIndexOp::create(then, loc, 1), ValueRange{initial});
  {
    OpBuilder inner = OpBuilder::atBlockBegin(gather.getBody());
    Value t = gather.getInductionVar();
    Value acc = gather.getRegionIterArgs()[0];
    Value has = arith::CmpIOp::create(
        inner, loc, arith::CmpIPredicate::ne,
        memref::LoadOp::create(inner, loc, present, t),
        arith::ConstantIntOp::create(inner, loc, inner.getI32Type(), 0));
    auto pick = scf::IfOp::create(inner, loc, TypeRange{type}, has, true);
    OpBuilder yes = OpBuilder::atBlockBegin(pick.thenBlock());
    scf::YieldOp::create(yes, loc,
                         combine(yes, *fold, acc,
                                 memref::LoadOp::create(yes, loc, partials, t)));
    OpBuilder no = OpBuilder::atBlockBegin(pick.elseBlock());
    scf::YieldOp::create(no, loc, acc);
    scf::YieldOp::create(inner, loc, pick.getResult(0));
  }
  memref::StoreOp::create(then, loc, gather.getResult(0),
                          fold->store.getMemRef(), fold->store.getIndices());
  loop.erase();
  return size * ((type.getIntOrFloatBitWidth() + 7) / 8 + 4);
}

} // namespace strata::gpu
