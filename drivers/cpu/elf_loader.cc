// Loads a CPU executable from memory. The order of the work is the order of
// trust: every header, offset and size is checked against the byte span
// before it is read; the image is laid out and its page protections computed
// before anything is mapped; relocations are range-checked against the image
// before they are written; and only then is each page sealed with the
// protection its segment asks for (never writable and executable at once).
#include "drivers/cpu/elf_loader.h"

#include <elf.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/base/float16.h"

namespace strata::cpu {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
// The runtime still builds here; every Load reports the mismatch.
constexpr uint16_t kHostMachine = EM_NONE;
#endif

// A CPU executable holds kernels, not weights (the module binds those
// directly), so anything this large is corrupt or hostile: refuse it before
// asking the kernel for memory.
constexpr uint64_t kMaxImageBytes = uint64_t{1} << 30;
// Old GNU ld aligned x86_64 segments to 2 MiB; nothing legitimate asks more.
constexpr uint64_t kMaxSegmentAlign = uint64_t{2} << 20;
// Bounds a symbol count derived from a hash table before it sizes any walk.
constexpr uint64_t kMaxSymbols = uint64_t{1} << 20;

// The mapping and the exports of a loaded library. Destroying it unmaps the
// image, so a load that fails half-way releases everything it mapped.
struct LoadedImage {
  uint8_t* mapping = nullptr;
  size_t mapping_size = 0;
  // Defined global symbols by name. std::less<> lets Lookup search with a
  // string_view without building a string.
  std::map<std::string, void*, std::less<>> exports;

  LoadedImage() = default;
  LoadedImage(const LoadedImage&) = delete;
  LoadedImage& operator=(const LoadedImage&) = delete;
  ~LoadedImage() {
    if (mapping) munmap(mapping, mapping_size);
  }
};

std::string HexAddress(uint64_t value) { return StrCat("0x", Hex(value)); }

std::string MachineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "EM_X86_64 (62, x86_64)";
    case EM_AARCH64: return "EM_AARCH64 (183, aarch64)";
    case EM_386: return "EM_386 (3, i386)";
    case EM_ARM: return "EM_ARM (40, arm)";
    case EM_RISCV: return "EM_RISCV (243, riscv)";
    case EM_NONE: return "EM_NONE (0, an architecture without CPU executables)";
  }
  return StrCat("machine ", machine);
}

std::string TypeName(uint16_t type) {
  switch (type) {
    case ET_NONE: return "ET_NONE (0)";
    case ET_REL: return "ET_REL (1, an object file)";
    case ET_EXEC: return "ET_EXEC (2, a position-dependent program)";
    case ET_DYN: return "ET_DYN (3, a shared object)";
    case ET_CORE: return "ET_CORE (4, a core dump)";
  }
  return StrCat("type ", type);
}

// True when [offset, offset + size) lies inside [0, limit), without overflow.
bool InBounds(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

bool IsPowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }
uint64_t AlignDown(uint64_t value, uint64_t align) { return value & ~(align - 1); }
uint64_t AlignUp(uint64_t value, uint64_t align) { return AlignDown(value + align - 1, align); }

// The input is a byte span with no alignment promise: read through memcpy.
template <typename T>
T ReadAs(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

int SegmentProtection(uint32_t flags) {
  return ((flags & PF_R) ? PROT_READ : 0) | ((flags & PF_W) ? PROT_WRITE : 0) |
         ((flags & PF_X) ? PROT_EXEC : 0);
}

// The values of the dynamic-section tags the loader acts on; 0 means absent
// (no table the loader reads can sit at address 0, where the ELF header is).
struct DynamicInfo {
  uint64_t rela = 0, rela_size = 0, rela_entry_size = 0;
  uint64_t jmprel = 0, jmprel_size = 0, pltrel = 0;
  uint64_t symtab = 0, symbol_entry_size = 0;
  uint64_t strtab = 0, strtab_size = 0;
  uint64_t sysv_hash = 0, gnu_hash = 0;
};

// One load: the work in progress; the result lands in `image`.
class Loader {
 public:
  Loader(std::span<const uint8_t> elf, std::span<const ImportSymbol> imports, LoadedImage& image)
      : elf_(elf), imports_(imports), image_(image), page_size_(uint64_t(sysconf(_SC_PAGESIZE))) {}

  Status Run() {
    STRATA_RETURN_IF_ERROR(ParseHeader());
    STRATA_RETURN_IF_ERROR(ParseProgramHeaders());
    STRATA_RETURN_IF_ERROR(PlanPages());
    STRATA_RETURN_IF_ERROR(MapImage());
    STRATA_RETURN_IF_ERROR(ParseDynamic());
    STRATA_RETURN_IF_ERROR(ParseSymbolTable());
    STRATA_RETURN_IF_ERROR(ApplyRelocations("DT_RELA", dyn_.rela, dyn_.rela_size));
    STRATA_RETURN_IF_ERROR(ApplyRelocations("DT_JMPREL", dyn_.jmprel, dyn_.jmprel_size));
    STRATA_RETURN_IF_ERROR(CollectExports());
    return Seal();
  }

 private:
  Status ParseHeader() {
    static constexpr uint8_t kMagic[SELFMAG] = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3};
    if (elf_.size() >= SELFMAG && std::memcmp(elf_.data(), kMagic, SELFMAG) != 0) {
      return InvalidArgumentError("ELF header: not an ELF file: expected magic 0x7f 0x45 0x4c 0x46, got ",
                                  HexAddress(elf_[0]), " ", HexAddress(elf_[1]), " ", HexAddress(elf_[2]), " ",
                                  HexAddress(elf_[3]));
    }
    if (elf_.size() < sizeof(Elf64_Ehdr)) {
      return DataLossError("ELF header: expected at least ", sizeof(Elf64_Ehdr),
                           " bytes, got ", elf_.size(), " (truncated file)");
    }
    header_ = ReadAs<Elf64_Ehdr>(elf_.data());
    const uint8_t elf_class = header_.e_ident[EI_CLASS];
    if (elf_class != ELFCLASS64) {
      return IncompatibleError("ELF header: expected class ELFCLASS64 (2), got ", unsigned(elf_class),
                               elf_class == ELFCLASS32 ? " (ELFCLASS32, a 32-bit file)" : "");
    }
    const uint8_t data = header_.e_ident[EI_DATA];
    if (data != ELFDATA2LSB) {
      return IncompatibleError("ELF header: expected data encoding ELFDATA2LSB (1, little-endian), got ",
                               unsigned(data), data == ELFDATA2MSB ? " (ELFDATA2MSB, big-endian)" : "");
    }
    if (header_.e_ident[EI_VERSION] != EV_CURRENT || header_.e_version != EV_CURRENT) {
      return InvalidArgumentError("ELF header: expected version EV_CURRENT (1), got ",
                                  unsigned(header_.e_ident[EI_VERSION]), " / ", header_.e_version);
    }
    if (header_.e_type != ET_DYN) {
      return IncompatibleError("ELF header: expected type ", TypeName(ET_DYN), ", got ",
                               TypeName(header_.e_type));
    }
    if (header_.e_machine != kHostMachine) {
      return IncompatibleError("ELF header: the executable is built for ", MachineName(header_.e_machine),
                               ", this runtime runs ", MachineName(kHostMachine));
    }
    if (header_.e_phentsize != sizeof(Elf64_Phdr)) {
      return InvalidArgumentError("ELF header: expected program header size ", sizeof(Elf64_Phdr),
                                  ", got ", header_.e_phentsize);
    }
    if (header_.e_phnum == 0) {
      return InvalidArgumentError("ELF header: the file has no program headers");
    }
    const uint64_t ph_bytes = uint64_t{header_.e_phnum} * sizeof(Elf64_Phdr);
    if (!InBounds(header_.e_phoff, ph_bytes, elf_.size())) {
      return DataLossError("ELF header: ", header_.e_phnum, " program headers at offset ",
                           header_.e_phoff, " need ", ph_bytes, " bytes, past the end of the ",
                           elf_.size(), "-byte file (truncated file?)");
    }
    // The loader never reads sections, but a section header table that the
    // file claims and does not hold means the file was cut short (linkers put
    // it last): refuse it rather than run code from a damaged file.
    if (header_.e_shnum != 0) {
      if (header_.e_shentsize != sizeof(Elf64_Shdr)) {
        return InvalidArgumentError("ELF header: expected section header size ", sizeof(Elf64_Shdr),
                                    ", got ", header_.e_shentsize);
      }
      const uint64_t sh_bytes = uint64_t{header_.e_shnum} * sizeof(Elf64_Shdr);
      if (!InBounds(header_.e_shoff, sh_bytes, elf_.size())) {
        return DataLossError("ELF header: ", header_.e_shnum, " section headers at offset ",
                             header_.e_shoff, " need ", sh_bytes, " bytes, past the end of the ",
                             elf_.size(), "-byte file (truncated file?)");
      }
    }
    return OkStatus();
  }

  Status ParseProgramHeaders() {
    uint64_t max_align = page_size_;
    for (unsigned i = 0; i < header_.e_phnum; ++i) {
      const auto ph = ReadAs<Elf64_Phdr>(elf_.data() + header_.e_phoff + i * sizeof(Elf64_Phdr));
      switch (ph.p_type) {
        case PT_LOAD: {
          const std::string where =
              STRATA_FOR_MESSAGE(StrCat("PT_LOAD segment ", loads_.size(), " (program header ", i, ")"));
          if (!InBounds(ph.p_offset, ph.p_filesz, elf_.size())) {
            return DataLossError(where, ": ", ph.p_filesz, " file bytes at offset ", ph.p_offset,
                                 " are past the end of the ", elf_.size(), "-byte file");
          }
          if (ph.p_memsz > kMaxImageBytes) {
            return ResourceExhaustedError(where, ": p_memsz ", ph.p_memsz, " exceeds the ",
                                          kMaxImageBytes, "-byte limit on a CPU executable's image");
          }
          if (ph.p_filesz > ph.p_memsz) {
            return InvalidArgumentError(where, ": p_filesz ", ph.p_filesz, " is larger than p_memsz ",
                                        ph.p_memsz);
          }
          if (ph.p_vaddr > kMaxImageBytes) {
            return ResourceExhaustedError(where, ": p_vaddr ", HexAddress(ph.p_vaddr), " lies past the ",
                                          kMaxImageBytes, "-byte limit on a CPU executable's image");
          }
          if (ph.p_align > 1 && !IsPowerOfTwo(ph.p_align)) {
            return InvalidArgumentError(where, ": p_align ", ph.p_align, " is not a power of two");
          }
          if (ph.p_align > kMaxSegmentAlign) {
            return InvalidArgumentError(where, ": p_align ", ph.p_align, " exceeds the supported ",
                                        kMaxSegmentAlign);
          }
          if ((ph.p_flags & PF_W) && (ph.p_flags & PF_X)) {
            return InvalidArgumentError(where, " is both writable and executable; CPU executables "
                                        "must keep code and writable data apart");
          }
          if (!loads_.empty() && ph.p_vaddr < loads_.back().p_vaddr + loads_.back().p_memsz) {
            return InvalidArgumentError(where, ": p_vaddr ", HexAddress(ph.p_vaddr), " overlaps or precedes "
                                        "the previous PT_LOAD segment, which ends at ",
                                        HexAddress(loads_.back().p_vaddr + loads_.back().p_memsz));
          }
          max_align = std::max<uint64_t>(max_align, ph.p_align);
          loads_.push_back(ph);
          break;
        }
        case PT_DYNAMIC:
          if (dynamic_) return InvalidArgumentError("program header ", i, ": a second PT_DYNAMIC");
          dynamic_ = ph;
          break;
        case PT_GNU_RELRO:
          relro_ = ph;
          break;
        case PT_TLS:
          return UnimplementedError("program header ", i, ": thread-local storage (PT_TLS) is not "
                                    "supported in CPU executables");
        case PT_INTERP:
          return InvalidArgumentError("program header ", i, ": PT_INTERP names a program "
                                      "interpreter; expected a shared object, got a program");
        default:
          // PT_PHDR, PT_NOTE, PT_GNU_STACK, PT_GNU_EH_FRAME: nothing to do when
          // the runtime is the loader.
          break;
      }
    }
    if (loads_.empty()) return InvalidArgumentError("program headers: no PT_LOAD segment");
    if (!dynamic_) {
      return InvalidArgumentError("program headers: no PT_DYNAMIC segment, so the executable "
                                  "exports nothing");
    }
    // Aligning the image to the largest p_align keeps every segment at the
    // alignment the linker laid it out for.
    align_ = max_align;
    image_lo_ = AlignDown(loads_.front().p_vaddr, align_);
    image_hi_ = AlignUp(loads_.back().p_vaddr + loads_.back().p_memsz, page_size_);
    if (image_hi_ - image_lo_ > kMaxImageBytes) {
      return ResourceExhaustedError("PT_LOAD segments span ", image_hi_ - image_lo_, " bytes, over the ",
                                    kMaxImageBytes, "-byte limit on a CPU executable's image");
    }
    return OkStatus();
  }

  // Decides each page's final protection before anything is mapped, so that a
  // layout this machine cannot honour (a page shared by code and writable data
  // when the host's pages are larger than the linker assumed) fails early.
  Status PlanPages() {
    page_protection_.assign((image_hi_ - image_lo_) / page_size_, PROT_NONE);
    for (size_t s = 0; s < loads_.size(); ++s) {
      const Elf64_Phdr& ph = loads_[s];
      if (ph.p_memsz == 0) continue;
      const int protection = SegmentProtection(ph.p_flags);
      const uint64_t first = (AlignDown(ph.p_vaddr, page_size_) - image_lo_) / page_size_;
      const uint64_t end = (AlignUp(ph.p_vaddr + ph.p_memsz, page_size_) - image_lo_) / page_size_;
      for (uint64_t page = first; page < end; ++page) {
        page_protection_[page] |= protection;
        if ((page_protection_[page] & PROT_WRITE) && (page_protection_[page] & PROT_EXEC)) {
          return InvalidArgumentError("PT_LOAD segment ", s, " shares the page at vaddr ",
                                      HexAddress(image_lo_ + page * page_size_), " with a segment of "
                                      "other permissions, which would make it writable and "
                                      "executable; this machine's page size is ", page_size_,
                                      " bytes (link with -z max-page-size=", page_size_, " or more)");
        }
      }
    }
    return OkStatus();
  }

  Status MapImage() {
    const uint64_t image_size = image_hi_ - image_lo_;
    // mmap only promises page alignment: reserve enough to slide the image
    // up to `align_`, then give back the slack on both sides.
    const uint64_t reserve = image_size + align_ - page_size_;
    void* reservation = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reservation == MAP_FAILED) {
      return ResourceExhaustedError("mapping a ", image_size, "-byte executable image failed: ",
                                    std::strerror(errno));
    }
    auto* start = static_cast<uint8_t*>(reservation);
    auto* image = reinterpret_cast<uint8_t*>(AlignUp(reinterpret_cast<uintptr_t>(start), align_));
    if (image > start) munmap(start, image - start);
    uint8_t* const image_end = image + image_size;
    if (start + reserve > image_end) munmap(image_end, start + reserve - image_end);
    image_.mapping = image;
    image_.mapping_size = image_size;
    // The image is the mapping moved down by its lowest vaddr, so that a
    // vaddr plus the bias is an address. Anonymous memory is zero, which is
    // the p_memsz > p_filesz tail (.bss) every segment may ask for.
    bias_ = reinterpret_cast<uintptr_t>(image) - image_lo_;
    for (const Elf64_Phdr& ph : loads_) {
      std::memcpy(reinterpret_cast<uint8_t*>(bias_ + ph.p_vaddr), elf_.data() + ph.p_offset, ph.p_filesz);
    }
    return OkStatus();
  }

  // The image bytes [vaddr, vaddr + size), or null when they are not all
  // inside the image.
  uint8_t* ImageAt(uint64_t vaddr, uint64_t size) const {
    if (vaddr < image_lo_ || !InBounds(vaddr - image_lo_, size, image_hi_ - image_lo_)) return nullptr;
    return reinterpret_cast<uint8_t*>(bias_ + vaddr);
  }

  Status OutsideImage(std::string_view what, uint64_t vaddr, uint64_t size) const {
    return DataLossError(what, ": ", size, " bytes at vaddr ", HexAddress(vaddr),
                         " are outside the image [", HexAddress(image_lo_), ", ", HexAddress(image_hi_), ")");
  }

  Status ParseDynamic() {
    const uint8_t* table = ImageAt(dynamic_->p_vaddr, dynamic_->p_memsz);
    if (!table) return OutsideImage("PT_DYNAMIC", dynamic_->p_vaddr, dynamic_->p_memsz);
    const uint64_t count = dynamic_->p_memsz / sizeof(Elf64_Dyn);
    for (uint64_t i = 0; i < count; ++i) {
      const auto entry = ReadAs<Elf64_Dyn>(table + i * sizeof(Elf64_Dyn));
      if (entry.d_tag == DT_NULL) break;
      const uint64_t value = entry.d_un.d_val;
      switch (entry.d_tag) {
        case DT_RELA: dyn_.rela = value; break;
        case DT_RELASZ: dyn_.rela_size = value; break;
        case DT_RELAENT: dyn_.rela_entry_size = value; break;
        case DT_JMPREL: dyn_.jmprel = value; break;
        case DT_PLTRELSZ: dyn_.jmprel_size = value; break;
        case DT_PLTREL: dyn_.pltrel = value; break;
        case DT_SYMTAB: dyn_.symtab = value; break;
        case DT_SYMENT: dyn_.symbol_entry_size = value; break;
        case DT_STRTAB: dyn_.strtab = value; break;
        case DT_STRSZ: dyn_.strtab_size = value; break;
        case DT_HASH: dyn_.sysv_hash = value; break;
        case DT_GNU_HASH: dyn_.gnu_hash = value; break;
        case DT_REL:
        case DT_RELSZ:
          return UnimplementedError("dynamic section: DT_REL relocations are not supported "
                                    "(x86_64 and aarch64 executables use DT_RELA)");
        case DT_RELR:
        case DT_RELRSZ:
          return UnimplementedError("dynamic section: packed relative relocations (DT_RELR) are "
                                    "not supported; link without -z pack-relative-relocs");
        case DT_INIT:
        case DT_PREINIT_ARRAYSZ:
        case DT_INIT_ARRAYSZ:
          // Running initializers would mean running code at load time; the
          // kernel ABI has none, and skipping them silently would be wrong.
          if (entry.d_tag == DT_INIT || value != 0) {
            return UnimplementedError("dynamic section: initializers (DT_INIT, DT_INIT_ARRAY) are "
                                      "not supported in CPU executables");
          }
          break;
        default:
          // DT_NEEDED, DT_SONAME, DT_FLAGS, DT_FINI*, DT_DEBUG, version tables:
          // imports resolve against the runtime's table by name alone.
          break;
      }
    }
    if (dyn_.jmprel_size != 0 && dyn_.pltrel != DT_RELA) {
      return InvalidArgumentError("dynamic section: expected DT_PLTREL DT_RELA (", DT_RELA, "), got ",
                                  dyn_.pltrel);
    }
    if (dyn_.rela_size != 0 && dyn_.rela_entry_size != sizeof(Elf64_Rela)) {
      return InvalidArgumentError("dynamic section: expected DT_RELAENT ", sizeof(Elf64_Rela), ", got ",
                                  dyn_.rela_entry_size);
    }
    return OkStatus();
  }

  Status ParseSymbolTable() {
    if (dyn_.symtab == 0 || dyn_.strtab == 0) {
      return InvalidArgumentError("dynamic section: no DT_SYMTAB or DT_STRTAB, so the executable "
                                  "exports nothing");
    }
    if (dyn_.symbol_entry_size != 0 && dyn_.symbol_entry_size != sizeof(Elf64_Sym)) {
      return InvalidArgumentError("dynamic section: expected DT_SYMENT ", sizeof(Elf64_Sym), ", got ",
                                  dyn_.symbol_entry_size);
    }
    strtab_ = ImageAt(dyn_.strtab, dyn_.strtab_size);
    if (!strtab_) return OutsideImage("DT_STRTAB", dyn_.strtab, dyn_.strtab_size);
    if (dyn_.gnu_hash != 0) {
      STRATA_ASSIGN_OR_RETURN(symbol_count_, GnuHashSymbolCount());
    } else if (dyn_.sysv_hash != 0) {
      const uint8_t* hash = ImageAt(dyn_.sysv_hash, 2 * sizeof(uint32_t));
      if (!hash) return OutsideImage("DT_HASH", dyn_.sysv_hash, 2 * sizeof(uint32_t));
      // The chain array has one entry per symbol.
      symbol_count_ = ReadAs<uint32_t>(hash + sizeof(uint32_t));
    } else {
      return InvalidArgumentError("dynamic section: no DT_HASH or DT_GNU_HASH, so the size of the "
                                  "symbol table is unknown");
    }
    if (symbol_count_ > kMaxSymbols) {
      return InvalidArgumentError("symbol table: ", symbol_count_, " symbols, more than the ",
                                  kMaxSymbols, " supported");
    }
    symtab_ = ImageAt(dyn_.symtab, symbol_count_ * sizeof(Elf64_Sym));
    if (!symtab_) return OutsideImage("DT_SYMTAB", dyn_.symtab, symbol_count_ * sizeof(Elf64_Sym));
    return OkStatus();
  }

  // DT_GNU_HASH does not store the symbol count: it is one past the last
  // symbol of the longest-indexed bucket's chain, whose end is marked by the
  // low bit of a chain value. Symbols below `symoffset` are not hashed.
  StatusOr<uint64_t> GnuHashSymbolCount() const {
    const uint8_t* header = ImageAt(dyn_.gnu_hash, 4 * sizeof(uint32_t));
    if (!header) return OutsideImage("DT_GNU_HASH", dyn_.gnu_hash, 4 * sizeof(uint32_t));
    const uint64_t bucket_count = ReadAs<uint32_t>(header);
    const uint64_t symoffset = ReadAs<uint32_t>(header + 4);
    const uint64_t bloom_words = ReadAs<uint32_t>(header + 8);
    const uint64_t buckets_vaddr = dyn_.gnu_hash + 16 + bloom_words * sizeof(uint64_t);
    const uint8_t* buckets = ImageAt(buckets_vaddr, bucket_count * sizeof(uint32_t));
    if (!buckets) return OutsideImage("DT_GNU_HASH buckets", buckets_vaddr, bucket_count * sizeof(uint32_t));
    // A bucket of 0 is empty (symbol 0 is never hashed).
    uint64_t last = 0;
    for (uint64_t b = 0; b < bucket_count; ++b) {
      last = std::max<uint64_t>(last, ReadAs<uint32_t>(buckets + b * sizeof(uint32_t)));
    }
    if (last == 0 || last < symoffset) return symoffset;
    const uint64_t chain_vaddr = buckets_vaddr + bucket_count * sizeof(uint32_t);
    for (uint64_t index = last; index - symoffset < kMaxSymbols; ++index) {
      const uint64_t entry_vaddr = chain_vaddr + (index - symoffset) * sizeof(uint32_t);
      const uint8_t* entry = ImageAt(entry_vaddr, sizeof(uint32_t));
      if (!entry) return OutsideImage("DT_GNU_HASH chain", entry_vaddr, sizeof(uint32_t));
      if (ReadAs<uint32_t>(entry) & 1) return index + 1;
    }
    return InvalidArgumentError("DT_GNU_HASH: a chain runs past ", kMaxSymbols, " symbols without ending");
  }

  Elf64_Sym Symbol(uint64_t index) const { return ReadAs<Elf64_Sym>(symtab_ + index * sizeof(Elf64_Sym)); }

  StatusOr<std::string_view> SymbolName(uint64_t index, const Elf64_Sym& symbol) const {
    const auto* name = reinterpret_cast<const char*>(strtab_);
    const void* end = symbol.st_name < dyn_.strtab_size
                          ? std::memchr(name + symbol.st_name, 0, dyn_.strtab_size - symbol.st_name)
                          : nullptr;
    if (!end) {
      return DataLossError("symbol ", index, ": name offset ", symbol.st_name,
                           " does not start a NUL-terminated name inside the ", dyn_.strtab_size,
                           "-byte DT_STRTAB");
    }
    return std::string_view(name + symbol.st_name, static_cast<const char*>(end) - (name + symbol.st_name));
  }

  // The address of a symbol the executable defines itself.
  StatusOr<uint64_t> DefinedAddress(std::string_view name, const Elf64_Sym& symbol) const {
    if (ELF64_ST_TYPE(symbol.st_info) == STT_GNU_IFUNC) {
      // Its value is a resolver to run at load time, not the function.
      return UnimplementedError("symbol '", name, "' is an indirect function (STT_GNU_IFUNC), "
                                "which CPU executables may not define");
    }
    if (symbol.st_shndx == SHN_ABS) return uint64_t{symbol.st_value};
    if (!ImageAt(symbol.st_value, 0)) {
      return DataLossError("symbol '", name, "': value ", HexAddress(symbol.st_value), " is outside the image [",
                           HexAddress(image_lo_), ", ", HexAddress(image_hi_), ")");
    }
    return bias_ + symbol.st_value;
  }

  // S in the relocation formulas: a defined symbol's address, or an import
  // resolved by name against the runtime's table.
  StatusOr<uint64_t> ResolveSymbol(uint64_t index) const {
    if (index == 0) return uint64_t{0};  // STN_UNDEF: the ABI defines S as 0.
    if (index >= symbol_count_) {
      return DataLossError("symbol index ", index, " is past the end of the ", symbol_count_,
                           "-entry symbol table");
    }
    const Elf64_Sym symbol = Symbol(index);
    STRATA_ASSIGN_OR_RETURN(std::string_view name, SymbolName(index, symbol));
    if (symbol.st_shndx != SHN_UNDEF) return DefinedAddress(name, symbol);
    for (const ImportSymbol& import : imports_) {
      if (import.name && name == import.name) return reinterpret_cast<uint64_t>(import.address);
    }
    if (ELF64_ST_BIND(symbol.st_info) == STB_WEAK) return uint64_t{0};
    return NotFoundError("unresolved import '", name, "': the runtime's import table (",
                         imports_.size(), " symbols) has no such symbol");
  }

  Status ApplyRelocations(const char* table_name, uint64_t vaddr, uint64_t size) {
    if (size == 0) return OkStatus();
    if (size % sizeof(Elf64_Rela) != 0) {
      return InvalidArgumentError(table_name, ": size ", size, " is not a multiple of the ",
                                  sizeof(Elf64_Rela), "-byte Elf64_Rela");
    }
    const uint8_t* table = ImageAt(vaddr, size);
    if (!table) return OutsideImage(table_name, vaddr, size);
    for (uint64_t i = 0; i < size / sizeof(Elf64_Rela); ++i) {
      const auto rela = ReadAs<Elf64_Rela>(table + i * sizeof(Elf64_Rela));
      Status status = ApplyRelocation(rela);
      if (!status.ok()) return status.Annotate(table_name, " relocation ", i, ": ");
    }
    return OkStatus();
  }

  // Every relocation type x86_64 and aarch64 shared objects carry for
  // position-independent code writes one 64-bit word: base-relative (B + A)
  // or symbolic (S, or S + A). x86_64 defines GLOB_DAT and JUMP_SLOT as S;
  // aarch64 defines every symbolic type as S + A.
  Status ApplyRelocation(const Elf64_Rela& rela) {
    const uint32_t type = ELF64_R_TYPE(rela.r_info);
    enum class Kind { kNone, kRelative, kSymbol, kSymbolPlusAddend, kUnsupported };
    Kind kind = Kind::kUnsupported;
    if (header_.e_machine == EM_X86_64) {
      switch (type) {
        case R_X86_64_NONE: kind = Kind::kNone; break;
        case R_X86_64_RELATIVE: kind = Kind::kRelative; break;
        case R_X86_64_64: kind = Kind::kSymbolPlusAddend; break;
        case R_X86_64_GLOB_DAT:
        case R_X86_64_JUMP_SLOT: kind = Kind::kSymbol; break;
      }
    } else {
      switch (type) {
        case R_AARCH64_NONE: kind = Kind::kNone; break;
        case R_AARCH64_RELATIVE: kind = Kind::kRelative; break;
        case R_AARCH64_ABS64:
        case R_AARCH64_GLOB_DAT:
        case R_AARCH64_JUMP_SLOT: kind = Kind::kSymbolPlusAddend; break;
      }
    }
    if (kind == Kind::kNone) return OkStatus();
    if (kind == Kind::kUnsupported) {
      return UnimplementedError("unsupported relocation type ", type, " for ",
                                MachineName(header_.e_machine),
                                " (supported: RELATIVE, 64/ABS64, GLOB_DAT, JUMP_SLOT)");
    }
    uint8_t* target = ImageAt(rela.r_offset, sizeof(uint64_t));
    if (!target) {
      return DataLossError("offset ", HexAddress(rela.r_offset), " is outside the image [", HexAddress(image_lo_), ", ",
                           HexAddress(image_hi_), ")");
    }
    const uint64_t addend = static_cast<uint64_t>(rela.r_addend);
    uint64_t value;
    if (kind == Kind::kRelative) {
      value = bias_ + addend;
    } else {
      STRATA_ASSIGN_OR_RETURN(value, ResolveSymbol(ELF64_R_SYM(rela.r_info)));
      if (kind == Kind::kSymbolPlusAddend) value += addend;
    }
    std::memcpy(target, &value, sizeof(value));
    return OkStatus();
  }

  Status CollectExports() {
    for (uint64_t i = 1; i < symbol_count_; ++i) {
      const Elf64_Sym symbol = Symbol(i);
      const unsigned binding = ELF64_ST_BIND(symbol.st_info);
      const unsigned visibility = ELF64_ST_VISIBILITY(symbol.st_other);
      if (symbol.st_shndx == SHN_UNDEF || (binding != STB_GLOBAL && binding != STB_WEAK) ||
          (visibility != STV_DEFAULT && visibility != STV_PROTECTED)) {
        continue;
      }
      STRATA_ASSIGN_OR_RETURN(std::string_view name, SymbolName(i, symbol));
      STRATA_ASSIGN_OR_RETURN(uint64_t address, DefinedAddress(name, symbol));
      image_.exports.emplace(std::string(name), reinterpret_cast<void*>(address));
    }
    return OkStatus();
  }

  Status Seal() {
    // RELRO pages (the GOT, relocated constant tables) only needed writing
    // while relocating. Like glibc, round the end down: a partial last page
    // also holds writable data.
    if (relro_ && relro_->p_memsz != 0) {
      if (!ImageAt(relro_->p_vaddr, relro_->p_memsz)) {
        return OutsideImage("PT_GNU_RELRO", relro_->p_vaddr, relro_->p_memsz);
      }
      const uint64_t relro_end = relro_->p_vaddr + relro_->p_memsz;
      const uint64_t first = (AlignDown(relro_->p_vaddr, page_size_) - image_lo_) / page_size_;
      const uint64_t end = (AlignDown(relro_end, page_size_) - image_lo_) / page_size_;
      for (uint64_t page = first; page < end; ++page) page_protection_[page] &= ~PROT_WRITE;
    }
#if defined(__aarch64__)
    // aarch64 does not keep the instruction cache coherent with stores: make
    // the copied code visible to instruction fetch before it can run.
    for (const Elf64_Phdr& ph : loads_) {
      if (!(ph.p_flags & PF_X)) continue;
      auto* begin = reinterpret_cast<char*>(bias_ + ph.p_vaddr);
      __builtin___clear_cache(begin, begin + ph.p_memsz);
    }
#endif
    // One mprotect per run of pages with the same protection.
    for (size_t run = 0; run < page_protection_.size();) {
      size_t end = run + 1;
      while (end < page_protection_.size() && page_protection_[end] == page_protection_[run]) ++end;
      if (mprotect(image_.mapping + run * page_size_, (end - run) * page_size_, page_protection_[run]) != 0) {
        return InternalError("mprotect of ", (end - run) * page_size_, " bytes at image offset ",
                             run * page_size_, " failed: ", std::strerror(errno));
      }
      run = end;
    }
    return OkStatus();
  }

  std::span<const uint8_t> elf_;
  std::span<const ImportSymbol> imports_;
  LoadedImage& image_;
  const uint64_t page_size_;

  Elf64_Ehdr header_{};
  std::vector<Elf64_Phdr> loads_;
  std::optional<Elf64_Phdr> dynamic_;
  std::optional<Elf64_Phdr> relro_;

  // The image covers vaddrs [image_lo_, image_hi_); vaddr + bias_ = address.
  uint64_t align_ = 0;
  uint64_t image_lo_ = 0;
  uint64_t image_hi_ = 0;
  uint64_t bias_ = 0;
  std::vector<int> page_protection_;

  DynamicInfo dyn_;
  const uint8_t* strtab_ = nullptr;
  const uint8_t* symtab_ = nullptr;
  uint64_t symbol_count_ = 0;
};

#if defined(__x86_64__)
// The half-precision conversions LLVM calls where the CPU has none (x86-64
// without F16C), under compiler-rt's names and with its signatures (_Float16
// travels in a vector register). AArch64 always converts in hardware.
float ExtendHalfToFloat(_Float16 value) {
  return static_cast<float>(F16ToDouble(std::bit_cast<uint16_t>(value)));
}
_Float16 TruncateFloatToHalf(float value) { return std::bit_cast<_Float16>(DoubleToF16(value)); }
_Float16 TruncateDoubleToHalf(double value) { return std::bit_cast<_Float16>(DoubleToF16(value)); }
#endif

// Every row of schemas/kernel_imports.def, a table the linker fills in (no
// code runs to build it). The explicit function types pick the C overload
// where <math.h> also brings C++ overloads into the global namespace.
template <typename F>
using FunctionPointer = F*;
#define STRATA_IMPORT(name, function, ...) \
  {name, reinterpret_cast<void*>(static_cast<FunctionPointer<__VA_ARGS__>>(function))},
#define STRATA_LIBM_TYPE_1(T) T(T)
#define STRATA_LIBM_TYPE_2(T) T(T, T)
#define STRATA_LIBM_TYPE_3(T) T(T, T, T)
#define STRATA_KERNEL_LIBM(name, arity)                                   \
  STRATA_IMPORT(#name "f", ::name##f, STRATA_LIBM_TYPE_##arity(float))   \
  STRATA_IMPORT(#name, ::name, STRATA_LIBM_TYPE_##arity(double))
#define STRATA_KERNEL_MEMORY(name, ...) STRATA_IMPORT(#name, ::name, __VA_ARGS__)
#if defined(__x86_64__)
#define STRATA_KERNEL_HALF(name, impl, type) STRATA_IMPORT(#name, impl, type)
#else
#define STRATA_KERNEL_HALF(name, impl, type)
#endif
const ImportSymbol kImports[] = {
#include "schemas/kernel_imports.def"
};
#undef STRATA_IMPORT
#undef STRATA_KERNEL_LIBM
#undef STRATA_KERNEL_MEMORY
#undef STRATA_KERNEL_HALF
#undef STRATA_LIBM_TYPE_1
#undef STRATA_LIBM_TYPE_2
#undef STRATA_LIBM_TYPE_3

}  // namespace

std::span<const ImportSymbol> RuntimeImports() { return kImports; }

struct ElfLibrary::Impl {
  LoadedImage image;
};

StatusOr<std::unique_ptr<ElfLibrary>> ElfLibrary::Load(std::span<const uint8_t> elf,
                                                       std::span<const ImportSymbol> imports) {
  auto impl = std::make_unique<Impl>();
  STRATA_RETURN_IF_ERROR(Loader(elf, imports, impl->image).Run());
  return std::unique_ptr<ElfLibrary>(new ElfLibrary(std::move(impl)));
}

ElfLibrary::ElfLibrary(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ElfLibrary::~ElfLibrary() = default;

void* ElfLibrary::Lookup(std::string_view symbol) const {
  auto it = impl_->image.exports.find(symbol);
  return it == impl_->image.exports.end() ? nullptr : it->second;
}

}  // namespace strata::cpu
