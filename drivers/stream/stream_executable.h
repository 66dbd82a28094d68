// StreamExecutable: a module of kernels loaded by a CUDA-style API (a CUDA
// module of PTX or a cubin, a HIP module of an AMD code object) with one
// function per entry point.
//
// Kernel parameters (the ABI of schemas/cuda_executable.fbs, which
// schemas/rocm_executable.fbs shares): the binding pointers, the
// check-status pointer when the entry point has checks, the 32-bit
// constants; then the driver passes every binding's length in bytes as a
// 64-bit value, which a kernel may declare after the constants to see its
// bindings' extents (as a Vulkan kernel sees its descriptors' ranges and a
// CPU kernel its binding lengths) or leave out: the driver reads only the
// parameters a kernel declares, so kernels of the ABI without them run the
// same.
//
// What the formats' metadata share is read and checked here once
// (ReadKernelEntryPoints): the entry points, each with a workgroup size of 3
// non-zero values within the device's block limits and static shared
// memory within the device's. Each driver parses the rest of its format and
// loads the image its device runs; StreamExecutable::Create then looks up every
// entry point's function and checks that the kernel, as compiled for this
// device, runs the workgroup size.
//
// Ownership: keeps the StreamContext alive and unloads the module when
// destroyed; immutable after creation, so thread-safe (see
// hal/executable.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/stream/stream_context.h"
#include "hal/executable.h"

namespace strata::stream {

// What an entry point's workgroup must fit.
struct KernelLimits {
  uint32_t max_threads_per_block = 1024;
  uint32_t max_block_dim[3] = {1024, 1024, 64};
  uint32_t max_shared_memory_per_block = 48 * 1024;
  // Dynamic shared memory a kernel may have once it opts in.
  uint32_t max_shared_memory_per_block_optin = 48 * 1024;
};

// The limits of `context`'s device.
KernelLimits DeviceKernelLimits(const StreamContext& context);

// The entry points of a CUDA or ROCm executable's metadata (its
// EntryPointDefs), read with hal::ReadEntryPoint plus the workgroup size and
// shared memory checks above. Errors start with `prefix`.
template <typename EntryPointDefs>
StatusOr<std::vector<hal::EntryPointInfo>> ReadKernelEntryPoints(const EntryPointDefs* defs, const std::string& prefix,
                                                                 const KernelLimits& limits);

// The sizes of the parameters the ABI gives `info`'s kernel, without the
// optional binding lengths.
std::vector<size_t> AbiParameterSizes(const hal::EntryPointInfo& info);

// An entry point's kernel as the API reports it once loaded.
struct KernelFunction {
  FunctionHandle function = nullptr;
  uint32_t max_threads_per_block = 0;  // for this kernel's register use
  uint32_t registers = 0;              // per thread
  uint32_t dynamic_shared_bytes = 0;   // passed to every launch
};

using KernelLookup = std::function<StatusOr<KernelFunction>(const hal::EntryPointInfo&)>;

class StreamExecutable final : public hal::Executable {
 public:
  // The executable of a loaded `module` (unloaded again on failure):
  // `lookup` finds each entry point's function, whose threads per block must
  // allow the workgroup size. `on_device` says where the module was loaded
  // (" on 'NAME' (sm_90)") for errors.
  static StatusOr<Ref<StreamExecutable>> Create(std::shared_ptr<StreamContext> context,
                                                const hal::ExecutableParams& params,
                                                std::vector<hal::EntryPointInfo> entry_points, ModuleHandle module,
                                                const KernelLookup& lookup, const std::string& on_device);

  FunctionHandle function(uint32_t entry_point) const { return functions_[entry_point]; }
  // The dynamic shared memory each launch of the entry point gives it.
  uint32_t dynamic_shared_bytes(uint32_t entry_point) const { return dynamic_shared_bytes_[entry_point]; }
  const StreamContext* context() const { return context_.get(); }

 protected:
  ~StreamExecutable() override;

 private:
  StreamExecutable(std::shared_ptr<StreamContext> context, const hal::ExecutableParams& params,
                   std::vector<hal::EntryPointInfo> entry_points, ModuleHandle module);

  std::shared_ptr<StreamContext> context_;
  ModuleHandle module_;
  std::vector<FunctionHandle> functions_;
  std::vector<uint32_t> dynamic_shared_bytes_;
};

// ---------------------------------------------------------------------------

template <typename EntryPointDefs>
StatusOr<std::vector<hal::EntryPointInfo>> ReadKernelEntryPoints(const EntryPointDefs* defs, const std::string& prefix,
                                                                 const KernelLimits& limits) {
  if (!defs || defs->size() == 0) return InvalidArgumentError(prefix, "metadata lists no entry points");
  std::vector<hal::EntryPointInfo> entry_points;
  for (uint32_t i = 0; i < defs->size(); ++i) {
    const auto* entry = defs->Get(i);
    STRATA_ASSIGN_OR_RETURN(hal::EntryPointInfo info, hal::ReadEntryPoint(*entry, i, entry_points, prefix));
    const std::string where = StrCat(prefix, "entry point '", info.name, "' ");
    const auto* size = entry->workgroup_size();
    if (!size || size->size() != 3) {
      return InvalidArgumentError(where, "needs a workgroup size of 3 values (x, y, z), got ", size ? size->size() : 0);
    }
    uint64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      info.workgroup_size[d] = size->Get(d);
      threads *= info.workgroup_size[d];
      if (info.workgroup_size[d] == 0) {
        return InvalidArgumentError(where, "has workgroup size ", "xyz"[d], " = 0; expected at least 1");
      }
      if (info.workgroup_size[d] > limits.max_block_dim[d]) {
        return FailedPreconditionError(where, "has workgroup size ", "xyz"[d], " = ", info.workgroup_size[d],
                                       "; the device allows at most ", limits.max_block_dim[d]);
      }
    }
    if (threads > limits.max_threads_per_block) {
      return FailedPreconditionError(where, "has ", threads, " threads per workgroup (", info.workgroup_size[0], "x",
                                     info.workgroup_size[1], "x", info.workgroup_size[2],
                                     "); the device allows at most ", limits.max_threads_per_block, " per block");
    }
    if (entry->shared_memory_bytes() > limits.max_shared_memory_per_block) {
      return FailedPreconditionError(where, "declares ", entry->shared_memory_bytes(),
                                     " bytes of shared memory; the device allows at most ",
                                     limits.max_shared_memory_per_block, " per block");
    }
    entry_points.push_back(std::move(info));
  }
  return entry_points;
}

}  // namespace strata::stream
