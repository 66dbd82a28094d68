// libFuzzer target for the ELF loader alone: any bytes are parsed, mapped,
// relocated against the runtime's import table and searched for symbols;
// nothing is called. Seeded with the kernels of the compiled samples
// (compile-module --dump-executables). Any crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>

#include "drivers/cpu/elf_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  auto library = cpu::ElfLibrary::Load({data, size}, cpu::RuntimeImports());
  if (!library.ok()) return 0;
  (*library)->Lookup("strata_entry_0");
  (*library)->Lookup("");
  return 0;
}
