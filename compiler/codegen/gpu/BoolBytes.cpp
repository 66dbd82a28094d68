//===- BoolBytes.cpp - Boolean buffers hold one byte per element ----------===//

#include "compiler/codegen/gpu/Passes.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUBOOLBYTESPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// `type` with i8 elements if it is a memref of i1; else null.
MemRefType asBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.getElementType().isInteger(1))
    return {};
  return MemRefType::get(memref.getShape(), IntegerType::get(type.getContext(), 8),
                         memref.getLayout(), memref.getMemorySpace());
}

struct GPUBoolBytesPass : impl::GPUBoolBytesPassBase<GPUBoolBytesPass> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal())
      return;
    // Arguments, then every memref value made inside (views, temporaries).
    SmallVector<Type> inputs;
    for (BlockArgument arg : kernel.getArguments()) {
      if (MemRefType bytes = asBytes(arg.getType()))
        arg.setType(bytes);
      inputs.push_back(arg.getType());
    }
    kernel.setType(FunctionType::get(kernel.getContext(), inputs,
                                     kernel.getResultTypes()));
    kernel.walk([&](Operation *op) {
      for (Value result : op->getResults())
        if (MemRefType bytes = asBytes(result.getType()))
          result.setType(bytes);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (MemRefType bytes = asBytes(arg.getType()))
              arg.setType(bytes);
    });
    // Accesses convert between the byte and the bit.
    kernel.walk([&](Operation *op) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (!load.getType().isInteger(1) ||
            !load.getMemRefType().getElementType().isInteger(8))
          return;
        load.getResult().setType(b.getI8Type());
        b.setInsertionPointAfter(load);
        Value zero = arith::ConstantIntOp::create(b, loc, b.getI8Type(), 0);
        auto bit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         load.getResult(), zero);
        load.getResult().replaceAllUsesExcept(bit, bit);
      } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
        if (!store.getValue().getType().isInteger(1) ||
            !store.getMemRefType().getElementType().isInteger(8))
          return;
        store->setOperand(0, arith::ExtUIOp::create(b, loc, b.getI8Type(),
                                                    store.getValue()));
      }
    });
  }
};

} // namespace
} // namespace strata::gpu
