//===- ScratchToBinding.cpp - Heap temporaries to a scratch binding -------===//
//
// A CPU kernel cannot allocate on the heap. Bufferization moves temporaries
// up to the stack limit onto the stack; one that is larger but of a static
// size becomes a view into one scratch buffer that the kernel takes as its
// last binding, and that the host places in its transient arena like any
// other buffer (strata-plan-transients). Dynamically sized temporaries
// stay allocations, which strata-cpu-verify-kernels then rejects.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUSCRATCHTOBINDINGPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// Offsets within the scratch buffer are multiples of this, enough for any
/// vector load of the target.
constexpr uint64_t kScratchAlignment = 64;

/// Whether `alloc` can live in the scratch buffer: a static size, the
/// identity layout (a view has no other), element types of whole bytes, and
/// a buffer that does not leave the region it is allocated in (a view into
/// one slot cannot carry a buffer from one loop iteration to the next).
bool isScratchCandidate(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !alloc.getSymbolOperands().empty())
    return false;
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat() || element.isIndex() ||
      element.getIntOrFloatBitWidth() % 8 != 0)
    return false;
  for (Operation *user : alloc->getUsers())
    if (user->hasTrait<OpTrait::ReturnLike>() ||
        user->hasTrait<OpTrait::IsTerminator>())
      return false;
  return true;
}

struct CPUScratchToBindingPass
    : impl::CPUScratchToBindingPassBase<CPUScratchToBindingPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isKernel(func) && failed(moveToScratch(func)))
        return signalPassFailure();
  }

  LogicalResult moveToScratch(func::FuncOp kernel) {
    SmallVector<memref::AllocOp> allocs;
    kernel.walk([&](memref::AllocOp alloc) {
      if (isScratchCandidate(alloc))
        allocs.push_back(alloc);
    });
    if (allocs.empty())
      return success();

    // Each temporary gets its own slot: a kernel that needs this much
    // memory spends its time computing, not waiting for a smaller buffer.
    SmallVector<int64_t> offsets;
    uint64_t size = 0;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      uint64_t bytes = type.getNumElements() *
                       (type.getElementType().getIntOrFloatBitWidth() / 8);
      uint64_t alignment =
          std::max<uint64_t>(kScratchAlignment, alloc.getAlignment().value_or(1));
      size = llvm::alignTo(size, alignment);
      offsets.push_back(size);
      size += bytes;
    }
    size = llvm::alignTo(std::max<uint64_t>(size, 1), kScratchAlignment);

    // After the results: the scratch binding comes last, and the marker
    // lets later passes and the ABI wrapper tell it from the outputs.
    SmallVector<Operation *> operations(allocs.begin(), allocs.end());
    if (failed(moveIntoArgument(kernel, operations, offsets, int64_t(size), kScratchAttr)))
      return failure();
    Builder b(kernel.getContext());
    kernel->setAttr(kScratchBytesAttr, b.getI64IntegerAttr(int64_t(size)));
    return success();
  }
};

} // namespace
} // namespace strata::cpu
