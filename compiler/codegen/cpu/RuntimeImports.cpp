//===- RuntimeImports.cpp - Symbols a CPU executable may import -----------===//

#include "compiler/codegen/cpu/RuntimeImports.h"

#include "llvm/ADT/STLExtras.h"

namespace strata::cpu {

llvm::ArrayRef<llvm::StringRef> runtimeImportNames() {
  // The rows of schemas/kernel_imports.def, the table the runtime's loader
  // binds.
  static const llvm::StringRef kNames[] = {
#define STRATA_KERNEL_LIBM(name, arity) #name "f", #name,
#define STRATA_KERNEL_MEMORY(name, ...) #name,
#define STRATA_KERNEL_HALF(name, impl, type) #name,
#include "schemas/kernel_imports.def"
#undef STRATA_KERNEL_LIBM
#undef STRATA_KERNEL_MEMORY
#undef STRATA_KERNEL_HALF
  };
  return kNames;
}

bool isRuntimeImport(llvm::StringRef name) {
  return llvm::is_contained(runtimeImportNames(), name);
}

} // namespace strata::cpu
