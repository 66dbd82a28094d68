//===- KernelABI.cpp - Where a kernel's arguments live --------------------===//

#include "compiler/codegen/gpu/KernelABI.h"

#include "mlir/IR/BuiltinTypes.h"

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

} // namespace strata::gpu
