// The test kernels (kernels/) as HAL executables: their CPU, Vulkan, CUDA and
// ROCm metadata and their preparation on a device. Shared by the conformance suite and the HAL
// benchmarks; no test framework here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hal/device.h"
#include "vm/base/status.h"

namespace strata::testing {

// The metadata FlatBuffer (schemas/cpu_executable.fbs) describing one entry
// point; `read_only` is empty or has one flag per binding; the executable
// requires `features` (names of schemas/cpu_features.def); the entry point
// uses `local_memory_bytes` of the runtime's per-thread local memory and
// with `ascending_workgroups` wants its workgroups run in ascending order.
std::vector<uint8_t> CpuMetadata(const std::string& entry_point, uint32_t binding_count, uint32_t constant_count,
                                 std::vector<bool> read_only = {}, std::vector<std::string> features = {},
                                 uint64_t local_memory_bytes = 0, bool ascending_workgroups = false);

// One entry point of a GPU executable, as both GPU formats describe it.
struct GpuKernelDescription {
  std::string entry_point;
  uint32_t binding_count = 0;
  uint32_t constant_count = 0;
  std::vector<bool> read_only;  // empty, or one flag per binding
  std::array<uint32_t, 3> workgroup_size = {1, 1, 1};
  std::vector<std::string> check_messages;
};

// One entry point of a Vulkan executable (schemas/vulkan_executable.fbs), and
// what the executable declares around it.
struct VulkanKernelDescription : GpuKernelDescription {
  std::vector<std::string> capabilities;  // SPIR-V capability names beyond Shader
  std::vector<std::string> extensions;    // SPIR-V extensions
  uint32_t spirv_version = 0x00010600;
  uint32_t workgroup_memory_bytes = 0;
};

// The metadata FlatBuffer of a Vulkan executable with one entry point.
std::vector<uint8_t> VulkanMetadata(const VulkanKernelDescription& description);

// The description of test kernel `name`'s SPIR-V (kernels/<name>.comp); an
// empty entry point for an unknown name.
VulkanKernelDescription VulkanTestKernel(std::string_view name);

// One entry point of a CUDA executable (schemas/cuda_executable.fbs), and the
// images of the executable's data.
struct CudaKernelDescription : GpuKernelDescription {
  struct Image {
    uint8_t kind = 0;  // 0 PTX, 1 cubin (schema::cuda::ImageKind)
    uint32_t arch = 80;
    uint64_t offset = 0;
    uint64_t size = 0;
    bool arch_specific = false;
  };
  std::vector<Image> images;
  uint32_t ptx_version = 80;
  uint32_t shared_memory_bytes = 0;
  uint32_t dynamic_shared_memory_bytes = 0;
};

// The metadata FlatBuffer of a CUDA executable with one entry point.
std::vector<uint8_t> CudaMetadata(const CudaKernelDescription& description);

// The description of test kernel `name`'s PTX (kernels/<name>.ptx): one PTX
// image for sm_80 over the whole of TestKernelPtx(name); an empty entry point
// for an unknown name.
CudaKernelDescription CudaTestKernel(std::string_view name);

// One entry point of a ROCm executable (schemas/rocm_executable.fbs), and the
// code objects of the executable's data.
struct RocmKernelDescription : GpuKernelDescription {
  struct CodeObject {
    std::string arch;
    uint32_t version = 5;
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  std::vector<CodeObject> code_objects;
  uint32_t shared_memory_bytes = 0;
  uint32_t kernarg_bytes = 0;
};

// The metadata FlatBuffer of a ROCm executable with one entry point.
std::vector<uint8_t> RocmMetadata(const RocmKernelDescription& description);

// The description of test kernel `name`'s code objects (kernels/<name>.cl),
// one per kRocmTestArchs over the whole of its TestKernel::rocm, with the
// kernel argument block the .cl file declares (the ABI's arguments, then a
// 64-bit length per binding); an empty entry point for an unknown name or a
// build without the ROCm driver.
RocmKernelDescription RocmTestKernel(std::string_view name);

// Prepares test kernel `name` for `device`, in the first of the device's
// formats the kernels are built for, with metadata describing the kernel (as
// its .c file documents it). Returns null when the device runs none of those
// formats; fails for an unknown kernel or a failed preparation.
StatusOr<Ref<hal::Executable>> PrepareTestKernelIfSupported(hal::Device& device, std::string_view name);

}  // namespace strata::testing
