#include "drivers/cpu/cpu_executable.h"

#include <optional>

#include "drivers/cpu/cpu_device.h"

#include "strata/schemas/cpu_executable_generated.h"

namespace strata::cpu {

const char* HostExecutableFormat() {
#if defined(__x86_64__)
  return "cpu-elf-x86_64";
#elif defined(__aarch64__)
  return "cpu-elf-aarch64";
#else
#error "the CPU drivers run on x86_64 and aarch64 only"
#endif
}

bool IsCpuExecutableFormat(std::string_view format) { return format.rfind("cpu-elf-", 0) == 0; }

namespace {

#if defined(__x86_64__)
// Register `reg` (0 EAX .. 3 EDX) of CPUID `leaf`.`subleaf`; 0 for a leaf
// past the CPU's highest.
uint32_t Cpuid(uint32_t leaf, uint32_t subleaf, int reg) {
  uint32_t r[4];
  __asm__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf & 0x80000000u), "c"(0));
  if (leaf > r[0]) return 0;
  __asm__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(subleaf));
  return r[reg];
}

// Whether the operating system saves the register state `state` names in
// schemas/cpu_features.def (1 YMM, 2 ZMM with the mask registers): XCR0 bits
// 1-2, and 5-7 for AVX-512, as XGETBV reports them where OSXSAVE is set.
bool OsSavesState(int state) {
  if (state == 0) return true;
  if (!(Cpuid(1, 0, 2) & (1u << 27))) return false;
  uint32_t lo, hi;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const uint32_t need = state == 1 ? 0x6u : 0xE6u;
  return (lo & need) == need;
}
#endif

// Whether this CPU has `feature`, one of schemas/cpu_features.def, read
// from CPUID; nullopt for a name this runtime does not know.
std::optional<bool> CpuHasFeature(std::string_view feature) {
#if defined(__x86_64__)
  struct Row {
    const char* name;
    uint8_t leaf, subleaf, reg, bit, state;
  };
  static constexpr Row kRows[] = {
#define STRATA_X86_FEATURE(name, leaf, subleaf, reg, bit, state) {name, leaf, subleaf, reg, bit, state},
#include "schemas/cpu_features.def"
#undef STRATA_X86_FEATURE
  };
  for (const Row& row : kRows) {
    if (feature == row.name) return ((Cpuid(row.leaf, row.subleaf, row.reg) >> row.bit) & 1) && OsSavesState(row.state);
  }
#endif
  (void)feature;
  return std::nullopt;
}

// Refuses code that needs CPU features this CPU lacks (it would fault on
// its first such instruction).
Status CheckRequiredFeatures(const schema::cpu::CpuExecutableDef& def, const hal::ExecutableParams& params,
                             std::string_view prefix) {
  const auto* features = def.required_features();
  if (!features || features->size() == 0 || params.format != HostExecutableFormat()) return OkStatus();
  bool any_unknown = false, any_missing = false;
  for (const flatbuffers::String* feature : *features) {
    const std::optional<bool> has = CpuHasFeature(feature->string_view());
    any_unknown |= !has;
    any_missing |= has && !*has;
  }
  // The features this runtime does not know (`known` false), or knows and
  // this CPU lacks, for the messages.
  const auto list = [&](bool known) {
    std::string out;
    for (const flatbuffers::String* feature : *features) {
      const std::optional<bool> has = CpuHasFeature(feature->string_view());
      if (known ? has && !*has : !has) out += StrCat(out.empty() ? "" : ", ", feature->string_view());
    }
    return out;
  };
  if (any_unknown) {
    return InvalidArgumentError(prefix, "needs CPU features this runtime does not know: ", list(false));
  }
  if (any_missing) {
    return FailedPreconditionError(prefix, "needs CPU features this CPU lacks: ", list(true),
                                   "; compile it for this CPU (--cpu=NAME) or for the baseline (--cpu=generic)");
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<hal::EntryPointInfo>> ParseCpuExecutableMetadata(const hal::ExecutableParams& params) {
  const auto prefix = [&] { return StrCat("executable '", params.name, "' (", params.format, "): "); };
  std::span<const uint8_t> bytes = params.metadata;
  if (bytes.size() < 8 || !flatbuffers::BufferHasIdentifier(bytes.data(), schema::cpu::CpuExecutableDefIdentifier())) {
    return InvalidArgumentError(prefix(), "metadata is not a CPU executable description (expected ",
                                "FlatBuffer identifier '", schema::cpu::CpuExecutableDefIdentifier(), "')");
  }
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!schema::cpu::VerifyCpuExecutableDefBuffer(verifier)) {
    return DataLossError(prefix(), "metadata is a corrupt FlatBuffer");
  }
  const schema::cpu::CpuExecutableDef* def = schema::cpu::GetCpuExecutableDef(bytes.data());
  if (!def->entry_points() || def->entry_points()->size() == 0) {
    return InvalidArgumentError(prefix(), "metadata lists no entry points");
  }
  STRATA_RETURN_IF_ERROR(CheckRequiredFeatures(*def, params, STRATA_FOR_MESSAGE(prefix())));
  std::vector<hal::EntryPointInfo> entry_points;
  for (uint32_t i = 0; i < def->entry_points()->size(); ++i) {
    const schema::cpu::EntryPointDef* entry = def->entry_points()->Get(i);
    STRATA_ASSIGN_OR_RETURN(hal::EntryPointInfo info, hal::ReadEntryPoint(*entry, i, entry_points, STRATA_FOR_MESSAGE(prefix())));
    if (const auto* size = entry->workgroup_size()) {
      if (size->size() != 3) {
        return InvalidArgumentError(prefix(), "entry point '", info.name, "' workgroup size has ", size->size(),
                                    " dimensions, expected 3");
      }
      for (int d = 0; d < 3; ++d) info.workgroup_size[d] = size->Get(d);
    }
    info.scratch_bytes = entry->scratch_bytes();
    if (info.scratch_bytes != 0 && info.binding_count == 0) {
      return InvalidArgumentError(prefix(), "entry point '", info.name, "' needs ", info.scratch_bytes,
                                  " bytes of scratch but takes no binding to hold them");
    }
    info.local_memory_bytes = entry->local_memory_bytes();
    info.ascending_workgroups = entry->ascending_workgroups();
    if (info.local_memory_bytes > kMaxLocalMemoryBytes) {
      return InvalidArgumentError(prefix(), "entry point '", info.name, "' needs ", info.local_memory_bytes,
                                  " bytes of local memory per thread; the CPU driver gives at most ",
                                  kMaxLocalMemoryBytes);
    }
    entry_points.push_back(std::move(info));
  }
  return entry_points;
}

StatusOr<Ref<CpuExecutable>> CpuExecutable::Create(const hal::ExecutableParams& params) {
  STRATA_ASSIGN_OR_RETURN(std::vector<hal::EntryPointInfo> entry_points, ParseCpuExecutableMetadata(params));
  auto library = ElfLibrary::Load(params.data, RuntimeImports());
  if (!library.ok()) {
    return std::move(library).status().Annotate("executable '", params.name, "': ");
  }
  std::vector<strata_cpu_kernel_fn_t> kernels;
  for (const hal::EntryPointInfo& info : entry_points) {
    void* address = (*library)->Lookup(info.name);
    if (!address) {
      return NotFoundError("executable '", params.name, "': entry point '", info.name,
                           "' named in the metadata is not exported by the ELF");
    }
    kernels.push_back(reinterpret_cast<strata_cpu_kernel_fn_t>(address));
  }
  return Ref<CpuExecutable>::Adopt(new CpuExecutable(std::string(params.name), std::move(entry_points),
                                                         std::move(library).value(), std::move(kernels)));
}

CpuExecutable::CpuExecutable(std::string name, std::vector<hal::EntryPointInfo> entry_points,
                             std::unique_ptr<ElfLibrary> library, std::vector<strata_cpu_kernel_fn_t> kernels)
    : Executable(&kCpuFamily, std::move(name), HostExecutableFormat(), std::move(entry_points)),
      library_(std::move(library)),
      kernels_(std::move(kernels)),
      group_timings_(new WayTimings[kernels_.size()]) {}

}  // namespace strata::cpu
