// CudaExecutable: a CUDA module (PTX JIT-compiled by the driver, or a cubin)
// with one CUfunction per entry point.
//
// The format is "cuda-ptx": `data` holds images (PTX text for one or more
// compute capabilities, cubins beside them where the compiler had ptxas) and
// `metadata` a CudaExecutableDef (schemas/cuda_executable.fbs, which also
// states the kernel ABI). Preparation trusts neither:
//
// 1. ParseCudaExecutable (no device needed, so tests run it anywhere) verifies
//    the metadata as an untrusted FlatBuffer and checks it against the data
//    and the device's limits: every image inside the data, PTX images
//    NUL-terminated, cubins ELF files; entry points named, unique, within the
//    HAL's binding and constant limits, with one read-only flag per binding
//    when there are flags, a workgroup size of 3 non-zero values within the
//    device's block limits, and static shared memory within the device's.
// 2. SelectCudaImage picks the image for the device's compute capability: a
//    cubin of the same major version and the highest minor one not above the
//    device's; else the PTX of the highest capability not above the
//    device's (the driver compiles it for the device); else an error naming
//    the images there are and the device's capability.
// 3. cuModuleLoadDataEx loads it (a JIT failure reports the driver's log, and
//    a PTX ISA newer than the driver names both versions); cuModuleGetFunction
//    finds every entry point, whose parameters are checked against the ABI
//    where the driver can list them (cuFuncGetParamInfo, CUDA 12.4 and
//    later), and whose register use must allow the workgroup size.
//
// Kernel parameters (the ABI of schemas/cuda_executable.fbs): the binding
// pointers, the check-status pointer when the entry point has checks, the
// 32-bit constants; then the driver passes every binding's length in bytes
// as a 64-bit value, which a kernel may declare after the constants to see
// its bindings' extents (as a Vulkan kernel sees its descriptors' ranges and
// a CPU kernel its binding lengths) or leave out: the driver reads only the
// parameters a kernel declares, so kernels of the ABI without them run the
// same.
//
// Ownership: keeps the CudaContext alive and unloads the module when
// destroyed; immutable after creation, so thread-safe (see
// hal/executable.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/cuda/cuda_context.h"
#include "hal/executable.h"

namespace strata::cuda {

inline constexpr const char* kCudaPtxFormat = "cuda-ptx";

enum class ImageKind : uint8_t { kPtx, kCubin };

// One image of an executable: its bytes lie inside the executable's data.
struct CudaImage {
  ImageKind kind = ImageKind::kPtx;
  uint32_t arch = 0;  // compute capability, major * 10 + minor
  std::span<const uint8_t> bytes;
};

// "PTX for sm_80", "cubin for sm_90".
std::string DescribeImage(const CudaImage& image);

// What ParseCudaExecutable checks against.
struct CudaDeviceLimits {
  uint32_t max_threads_per_block = 1024;
  uint32_t max_block_dim[3] = {1024, 1024, 64};
  uint32_t max_shared_memory_per_block = 48 * 1024;
};

struct CudaExecutableInfo {
  std::vector<hal::EntryPointInfo> entry_points;
  std::vector<CudaImage> images;
  uint32_t ptx_version = 0;  // times 10: 80 for PTX ISA 8.0
};

// Steps 1 and 2 above. Errors start with "executable 'NAME' (cuda-ptx): ".
StatusOr<CudaExecutableInfo> ParseCudaExecutable(const hal::ExecutableParams& params, const CudaDeviceLimits& limits);
StatusOr<size_t> SelectCudaImage(std::span<const CudaImage> images, uint32_t arch);

class CudaExecutable final : public hal::Executable {
 public:
  static StatusOr<Ref<CudaExecutable>> Create(std::shared_ptr<CudaContext> context,
                                              const hal::ExecutableParams& params);

  CUfunction function(uint32_t entry_point) const { return functions_[entry_point]; }
  const CudaContext* context() const { return context_.get(); }

 protected:
  ~CudaExecutable() override;

 private:
  CudaExecutable(std::shared_ptr<CudaContext> context, std::string name, std::vector<hal::EntryPointInfo> entry_points);

  std::shared_ptr<CudaContext> context_;
  CUmodule module_ = nullptr;
  std::vector<CUfunction> functions_;
};

}  // namespace strata::cuda
