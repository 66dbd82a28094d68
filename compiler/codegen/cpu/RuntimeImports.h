//===- RuntimeImports.h - Symbols a CPU executable may import ---*- C++ -*-===//
//
// A CPU executable links no libc: the runtime's ELF loader resolves its
// undefined symbols against RuntimeImports() (drivers/cpu/elf_loader.cc),
// the libm functions plus memcpy, memmove and memset. The compiler cannot
// link the runtime, so it keeps the same list of names here; the
// e2e.cpu_codegen test checks that the two lists agree.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_CPU_RUNTIMEIMPORTS_H
#define STRATA_COMPILER_CODEGEN_CPU_RUNTIMEIMPORTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace strata::cpu {

/// Every symbol name RuntimeImports() offers.
llvm::ArrayRef<llvm::StringRef> runtimeImportNames();

/// True when the runtime offers `name` to executables.
bool isRuntimeImport(llvm::StringRef name);

} // namespace strata::cpu

#endif // STRATA_COMPILER_CODEGEN_CPU_RUNTIMEIMPORTS_H
