// Loads a CPU executable (an ELF shared object for this machine's
// architecture) from bytes in memory: no temporary file, no dlopen, no system
// loader. The loader maps the PT_LOAD segments into fresh anonymous memory
// with the right protections, applies the relocations the compiler emits
// (relative relocations and symbol relocations against the runtime's import
// table), and looks up exported functions by name.
//
// Any malformed input (truncated headers, segments or relocations out of
// range, wrong machine, unknown relocation type, unresolved import) fails
// Load with a message naming the problem; it never crashes.
//
// Thread safety: Load may be called concurrently; a loaded library is
// immutable and Lookup is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "vm/base/status.h"

namespace strata::cpu {

// A function the runtime offers to executables, e.g. {"expf", &expf}.
struct ImportSymbol {
  const char* name;
  void* address;
};

// The runtime's standard import table (math helpers), usable as Load's
// `imports`.
std::span<const ImportSymbol> RuntimeImports();

class ElfLibrary {
 public:
  static StatusOr<std::unique_ptr<ElfLibrary>> Load(std::span<const uint8_t> elf,
                                                    std::span<const ImportSymbol> imports);
  ~ElfLibrary();
  ElfLibrary(const ElfLibrary&) = delete;
  ElfLibrary& operator=(const ElfLibrary&) = delete;

  // The address of an exported (defined, global) function, or null.
  void* Lookup(std::string_view symbol) const;

 private:
  struct Impl;
  explicit ElfLibrary(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::cpu
