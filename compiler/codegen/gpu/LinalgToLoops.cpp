//===- LinalgToLoops.cpp - Linalg ops to parallel loops over tied sizes ---===//

#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>
#include <limits>

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPULINALGTOLOOPSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// A dimension of a memref value.
using Dim = std::pair<Value, int64_t>;

struct GPULinalgToLoopsPass
    : impl::GPULinalgToLoopsPassBase<GPULinalgToLoopsPass> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal())
      return;

    // Dimensions that index the same loop of some linalg op are equal.
    DenseMap<Dim, Dim> parent;
    std::function<Dim(Dim)> find = [&](Dim x) -> Dim {
      auto it = parent.find(x);
      if (it == parent.end() || it->second == x)
        return x;
      Dim root = find(it->second);
      parent[x] = root;
      return root;
    };
    auto unite = [&](Dim a, Dim b) {
      parent.try_emplace(a, a);
      parent.try_emplace(b, b);
      Dim ra = find(a), rb = find(b);
      if (ra != rb)
        parent[rb] = ra;
    };
    SmallVector<linalg::LinalgOp> ops;
    kernel.walk([&](linalg::LinalgOp op) {
      ops.push_back(op);
      if (!op.hasPureBufferSemantics())
        return;
      DenseMap<unsigned, Dim> loopDims;
      for (OpOperand &operand : op->getOpOperands()) {
        if (!isa<MemRefType>(operand.get().getType()))
          continue;
        AffineMap map = op.getMatchingIndexingMap(&operand);
        for (auto [d, expr] : llvm::enumerate(map.getResults())) {
          auto dim = dyn_cast<AffineDimExpr>(expr);
          if (!dim)
            continue;
          Dim here{operand.get(), int64_t(d)};
          auto [it, inserted] = loopDims.try_emplace(dim.getPosition(), here);
          unite(it->second, here);
        }
      }
    });

    IRRewriter rewriter(kernel.getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToParallelLoops(rewriter, op))) {
        op->emitOpError("cannot be lowered to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }

    // Every memref.dim of a tied dimension reads the first member of its
    // class that is a kernel argument (a static size where there is one).
    SmallVector<memref::DimOp> dims;
    kernel.walk([&](memref::DimOp dim) { dims.push_back(dim); });
    Block &entry = kernel.getBody().front();
    DenseMap<Dim, SmallVector<Dim>> members;
    for (auto &[dim, unused] : parent)
      members[find(dim)].push_back(dim);
    DenseMap<Dim, Value> representatives;
    for (memref::DimOp dim : dims) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        continue;
      Dim key{dim.getSource(), *index};
      if (!parent.count(key))
        continue;
      Dim leader = find(key);
      auto [it, inserted] = representatives.try_emplace(leader, Value());
      if (inserted) {
        // Arguments first, in order, for a deterministic choice.
        SmallVector<Dim> &group = members[leader];
        auto rank = [&](const Dim &d) {
          auto arg = dyn_cast<BlockArgument>(d.first);
          unsigned number = arg && arg.getOwner() == &entry
                                ? arg.getArgNumber()
                                : std::numeric_limits<unsigned>::max();
          return std::make_pair(number, d.second);
        };
        llvm::sort(group, [&](const Dim &a, const Dim &b) {
          return rank(a) < rank(b);
        });
        std::optional<Dim> chosen;
        for (const Dim &member : group) {
          auto type = cast<MemRefType>(member.first.getType());
          if (!type.isDynamicDim(member.second)) {
            chosen = member;
            break;
          }
          auto arg = dyn_cast<BlockArgument>(member.first);
          if (!chosen && arg && arg.getOwner() == &entry)
            chosen = member;
        }
        if (!chosen)
          continue;
        rewriter.setInsertionPointToStart(&entry);
        auto type = cast<MemRefType>(chosen->first.getType());
        it->second =
            type.isDynamicDim(chosen->second)
                ? Value(memref::DimOp::create(rewriter, kernel.getLoc(),
                                              chosen->first, chosen->second))
                : Value(arith::ConstantIndexOp::create(
                      rewriter, kernel.getLoc(),
                      type.getDimSize(chosen->second)));
      }
      if (it->second && it->second != dim.getResult())
        rewriter.replaceOp(dim, it->second);
    }
  }
};

} // namespace
} // namespace strata::gpu
