//===- RuntimeImports.cpp - Symbols a CPU executable may import -----------===//

#include "compiler/codegen/cpu/RuntimeImports.h"

#include "llvm/ADT/STLExtras.h"

namespace strata::cpu {

llvm::ArrayRef<llvm::StringRef> runtimeImportNames() {
  // Each libm function in its float and double form, in the order of
  // RuntimeImports().
  static const llvm::StringRef kNames[] = {
      "acosf",  "acos",    "acoshf",     "acosh",     "asinf",  "asin",
      "asinhf", "asinh",   "atanf",      "atan",      "atan2f", "atan2",
      "atanhf", "atanh",   "cbrtf",      "cbrt",      "ceilf",  "ceil",
      "cosf",   "cos",     "coshf",      "cosh",      "erff",   "erf",
      "erfcf",  "erfc",    "expf",       "exp",       "exp2f",  "exp2",
      "expm1f", "expm1",   "fabsf",      "fabs",      "floorf", "floor",
      "fmodf",  "fmod",    "logf",       "log",       "log10f", "log10",
      "log1pf", "log1p",   "log2f",      "log2",      "powf",   "pow",
      "roundf", "round",   "roundevenf", "roundeven", "sinf",   "sin",
      "sinhf",  "sinh",    "sqrtf",      "sqrt",      "tanf",   "tan",
      "tanhf",  "tanh",    "truncf",     "trunc",     "fmaf",   "fma",
      "memcpy", "memmove", "memset",
      // Half-precision conversions (CPUs without F16C).
      "__extendhfsf2", "__truncsfhf2", "__truncdfhf2"};
  return kNames;
}

bool isRuntimeImport(llvm::StringRef name) {
  return llvm::is_contained(runtimeImportNames(), name);
}

} // namespace strata::cpu
