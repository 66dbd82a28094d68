// The CUDA executable format, "cuda-ptx": a CUDA module (PTX JIT-compiled by
// the driver, or a cubin) loaded as a stream::StreamExecutable.
//
// `data` holds images (PTX text for one or more compute capabilities, cubins
// beside them where the compiler had ptxas) and `metadata` a
// CudaExecutableDef (schemas/cuda_executable.fbs, which also states the
// kernel ABI; stream_executable.h). Preparation trusts neither:
//
// 1. ParseCudaExecutable (no device needed, so tests run it anywhere) verifies
//    the metadata as an untrusted FlatBuffer and checks it against the data
//    and the device's limits: every image inside the data, PTX images
//    NUL-terminated, cubins ELF files; the entry points as
//    stream::ReadKernelEntryPoints checks them.
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
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/stream/stream_executable.h"
#include "hal/executable.h"

namespace strata::cuda {

inline constexpr const char* kCudaPtxFormat = "cuda-ptx";

enum class ImageKind : uint8_t { kPtx, kCubin };

// One image of an executable: its bytes lie inside the executable's data.
struct CudaImage {
  ImageKind kind = ImageKind::kPtx;
  uint32_t arch = 0;  // compute capability, major * 10 + minor
  std::span<const uint8_t> bytes;
  bool arch_specific = false;  // sm_90a: runs on devices of exactly `arch`
};

// "PTX for sm_80", "cubin for sm_90", "cubin for sm_90a".
std::string DescribeImage(const CudaImage& image);

struct CudaExecutableInfo {
  std::vector<hal::EntryPointInfo> entry_points;
  // Per entry point, its dynamic shared memory (0: none).
  std::vector<uint32_t> dynamic_shared_bytes;
  std::vector<CudaImage> images;
  uint32_t ptx_version = 0;  // times 10: 80 for PTX ISA 8.0
};

// Steps 1 and 2 above. Errors start with "executable 'NAME' (cuda-ptx): ".
StatusOr<CudaExecutableInfo> ParseCudaExecutable(const hal::ExecutableParams& params,
                                                 const stream::KernelLimits& limits);
StatusOr<size_t> SelectCudaImage(std::span<const CudaImage> images, uint32_t arch);

class CudaContext;

// Steps 1 to 3 on `context`'s device.
StatusOr<Ref<stream::StreamExecutable>> LoadCudaExecutable(std::shared_ptr<CudaContext> context,
                                                           const hal::ExecutableParams& params);

}  // namespace strata::cuda
