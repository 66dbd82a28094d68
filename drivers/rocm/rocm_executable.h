// The ROCm executable format, "rocm-hsaco": AMD GPU code objects (HSACO,
// one per architecture the module was compiled for) loaded with
// hipModuleLoadData as a stream::StreamExecutable.
//
// `data` holds the code objects and `metadata` a RocmExecutableDef
// (schemas/rocm_executable.fbs; the kernel ABI is CUDA's,
// stream_executable.h). Preparation trusts neither:
//
// 1. ParseRocmExecutable (no device needed, so tests run it anywhere)
//    verifies the metadata as an untrusted FlatBuffer and checks it against
//    the data and the device's limits: every code object inside the data,
//    an AMDGPU ELF file (EM_AMDGPU), with an architecture name and a code
//    object version from 2 to 6; the entry points as
//    stream::ReadKernelEntryPoints checks them, each with a kernel argument
//    block at least as long as the ABI's arguments.
// 2. SelectRocmCodeObject picks the code object for the device's
//    architecture (gcnArchName without its features: "gfx90a" of
//    "gfx90a:sramecc+:xnack-") of the highest code object version the HIP
//    runtime reads (ROCm 5: up to 5, ROCm 6 and later: up to 6); else an
//    error naming the code objects there are, the device's architecture and
//    what to recompile with.
// 3. hipModuleLoadData loads it; hipModuleGetFunction finds every entry
//    point, whose register use must allow the workgroup size.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/stream/stream_executable.h"

namespace strata::rocm {

inline constexpr const char* kRocmHsacoFormat = "rocm-hsaco";

// One code object of an executable: its bytes lie inside the executable's
// data.
struct RocmCodeObject {
  std::string arch;  // "gfx90a"
  uint32_t version = 0;
  std::span<const uint8_t> bytes;
};

// "gfx90a code object v4".
std::string DescribeCodeObject(const RocmCodeObject& object);

struct RocmExecutableInfo {
  std::vector<hal::EntryPointInfo> entry_points;
  std::vector<RocmCodeObject> code_objects;
};

// Steps 1 and 2 above. Errors start with "executable 'NAME' (rocm-hsaco): ".
StatusOr<RocmExecutableInfo> ParseRocmExecutable(const hal::ExecutableParams& params,
                                                 const stream::KernelLimits& limits);
// `arch` as HIP names it, features included or not; `max_version`, the
// highest code object version the runtime reads.
StatusOr<size_t> SelectRocmCodeObject(std::span<const RocmCodeObject> objects, std::string_view arch,
                                      uint32_t max_version);

// The highest code object version a HIP runtime of hipDriverGetVersion
// value `hip_version` reads.
uint32_t MaxCodeObjectVersion(int hip_version);

class RocmContext;

// Steps 1 to 3 on `context`'s device.
StatusOr<Ref<stream::StreamExecutable>> LoadRocmExecutable(std::shared_ptr<RocmContext> context,
                                                           const hal::ExecutableParams& params);

}  // namespace strata::rocm
