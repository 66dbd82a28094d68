// CpuExecutable: an ELF shared object loaded from memory (elf_loader.h) with
// its entry points resolved to kernel function pointers (kernel_abi.h).
//
// The metadata (schemas/cpu_executable.fbs) is verified as an untrusted
// FlatBuffer and names the entry points with their binding and constant counts;
// every name must be exported by the ELF. The loader maps the ELF's segments
// into fresh memory (code must be mapped executable, so running it in place
// from the module is not possible), after which the module's bytes are no
// longer needed.
//
// Ownership and thread safety: see hal/executable.h.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "drivers/cpu/elf_loader.h"
#include "drivers/cpu/kernel_abi.h"
#include "drivers/cpu/way_timings.h"
#include "hal/executable.h"

namespace strata::cpu {

// The executable format this machine runs: "cpu-elf-x86_64" or
// "cpu-elf-aarch64".
const char* HostExecutableFormat();

// Whether `format` is a CPU executable format, for this host or another
// ("cpu-elf-..."): its metadata is a CpuExecutableDef.
bool IsCpuExecutableFormat(std::string_view format);

// The most local memory (strata_cpu_dispatch_v0_t.local_memory) an entry
// point may declare: each thread that runs its workgroups holds that much.
inline constexpr uint64_t kMaxLocalMemoryBytes = uint64_t{16} << 20;

// The entry points that a CPU executable's metadata describes, verified as an
// untrusted FlatBuffer and checked against the HAL's limits; errors name the
// executable. `params.data` is not looked at (dump-module lists the entry
// points of executables for any host this way).
StatusOr<std::vector<hal::EntryPointInfo>> ParseCpuExecutableMetadata(const hal::ExecutableParams& params);

class CpuExecutable final : public hal::Executable {
 public:
  static StatusOr<Ref<CpuExecutable>> Create(const hal::ExecutableParams& params);

  strata_cpu_kernel_fn_t kernel(uint32_t entry_point) const { return kernels_[entry_point]; }

  // How long a unit of work (a workgroup, a transfer's chunk) took in the
  // barrier groups that `entry_point` leads, run by one thread alone or
  // split over several (way_timings.h). cpu-task runs a small group the way
  // that has been faster. Any thread may record.
  WayTimings& GroupTimings(uint32_t entry_point) const { return group_timings_[entry_point]; }

 private:
  CpuExecutable(std::string name, std::vector<hal::EntryPointInfo> entry_points,
                std::unique_ptr<ElfLibrary> library, std::vector<strata_cpu_kernel_fn_t> kernels);

  std::unique_ptr<ElfLibrary> library_;
  std::vector<strata_cpu_kernel_fn_t> kernels_;
  std::unique_ptr<WayTimings[]> group_timings_;
};

}  // namespace strata::cpu
