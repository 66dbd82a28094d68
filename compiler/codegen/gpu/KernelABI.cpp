//===- KernelABI.cpp - Where a kernel's arguments live --------------------===//

#include "compiler/codegen/gpu/KernelABI.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace strata::gpu {

PushConstantLayout PushConstantLayout::of(func::FuncOp kernel) {
  PushConstantLayout layout;
  ArrayRef<Type> types = kernel.getArgumentTypes();
  layout.firstWord.resize(types.size());
  for (auto [i, type] : llvm::enumerate(types)) {
    if (isa<MemRefType>(type))
      continue;
    layout.firstWord[i] = layout.words;
    layout.words += type.isInteger(64) ? 2 : 1;
  }
  for (auto [i, type] : llvm::enumerate(types)) {
    auto memref = dyn_cast<MemRefType>(type);
    if (!memref || memref.getNumDynamicDims() == 0)
      continue;
    layout.firstWord[i] = layout.words;
    layout.words += memref.getNumDynamicDims();
  }
  return layout;
}

unsigned PushConstantLayout::dimWord(func::FuncOp kernel, unsigned arg,
                                     unsigned dim) const {
  auto memref = cast<MemRefType>(kernel.getArgumentTypes()[arg]);
  unsigned word = *firstWord[arg];
  for (unsigned d = 0; d < dim; ++d)
    word += memref.isDynamicDim(d) ? 1 : 0;
  return word;
}

int64_t workgroupBytes(MemRefType type) {
  Type element = type.getElementType();
  auto vector = dyn_cast<VectorType>(element);
  const int64_t bits = vector ? vector.getNumElements() * vector.getElementTypeBitWidth()
                              : element.getIntOrFloatBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

LogicalResult propagateMemorySpace(Value memref) {
  Attribute space = cast<MemRefType>(memref.getType()).getMemorySpace();
  for (Operation *user : memref.getUsers()) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::DimOp,
            memref::ExtractAlignedPointerAsIndexOp, vector::LoadOp,
            vector::StoreOp>(user))
      continue;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || view.getViewSource() != memref)
      return user->emitOpError("uses a kernel temporary; GPU kernels only "
                               "load, store and view them");
    for (Value result : user->getResults()) {
      auto type = dyn_cast<MemRefType>(result.getType());
      if (!type || type.getMemorySpace() == space)
        continue;
      result.setType(MemRefType::get(type.getShape(), type.getElementType(),
                                     type.getLayout(), space));
      if (failed(propagateMemorySpace(result)))
        return failure();
    }
  }
  return success();
}

} // namespace strata::gpu
