// Test kernels: small CPU executables (ELF shared objects) built from the C
// files beside this header for x86_64 and aarch64 at build time and embedded
// in the test binary, so tests load them from memory like an executable
// embedded in a module. Each exports one entry point named after its file,
// following drivers/cpu/kernel_abi.h; the .c file documents its bindings,
// constants and return codes. With the Vulkan driver, the .comp file beside
// it is the same kernel in GLSL, built into SPIR-V for Vulkan 1.3 with the
// entry point of the same name, following schemas/vulkan_executable.fbs; with
// the CUDA driver, the .ptx file is the same kernel in hand-written PTX
// (sm_80, PTX ISA 8.0), following schemas/cuda_executable.fbs and taking its
// bindings' lengths after the constants (drivers/cuda/cuda_executable.h); with
// the ROCm driver, the .cl file is the same kernel in OpenCL C, built into one
// AMD GPU code object per architecture of kRocmTestArchs with the same
// arguments as the PTX:
//
//   add_f32       c = a + b over each workgroup's slice (size: constant 0)
//   fail_if       returns constant 0 (a dispatch that fails on demand)
//   fill_pattern  each workgroup of a 3-D grid stamps its id and a hit count
//   scale_exp     out = scale * expf(in), expf imported from the runtime
//   select_op     out = op(in) through a relocated function-pointer table
//
// The bytes are static data: spans stay valid for the life of the process.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace strata::testing {

enum class KernelArch { kX86_64, kAarch64 };

// The AMD GPU architectures the ROCm code objects are built for, with the
// code object version of each (tests/hal/kernels/CMakeLists.txt).
struct RocmTestArch {
  const char* name;
  uint32_t code_object_version;
};
inline constexpr RocmTestArch kRocmTestArchs[] = {{"gfx90a", 4}, {"gfx942", 5}, {"gfx1100", 5}};
inline constexpr size_t kRocmTestArchCount = sizeof(kRocmTestArchs) / sizeof(kRocmTestArchs[0]);

struct TestKernel {
  const char* name;  // also the exported entry point
  std::span<const uint8_t> x86_64;
  std::span<const uint8_t> aarch64;
  std::span<const uint8_t> spirv;  // empty in a build without the Vulkan driver
  std::span<const uint8_t> ptx;    // NUL-terminated; empty without the CUDA driver
  // The code objects of kRocmTestArchs back to back, and their sizes; empty
  // without the ROCm driver.
  std::span<const uint8_t> rocm;
  std::array<uint32_t, kRocmTestArchCount> rocm_sizes{};
};

// Every test kernel, in name order.
std::span<const TestKernel> TestKernels();

// The architecture this test binary runs on: its kernels are the loadable ones.
KernelArch HostKernelArch();

// The kernel `name` built for `arch`; an empty span for an unknown name.
std::span<const uint8_t> TestKernelElf(std::string_view name, KernelArch arch);

// The kernel `name` as SPIR-V; an empty span for an unknown name or a build
// without the Vulkan driver.
std::span<const uint8_t> TestKernelSpirv(std::string_view name);

// The kernel `name` as PTX text with its terminating NUL; an empty span for
// an unknown name or a build without the CUDA driver.
std::span<const uint8_t> TestKernelPtx(std::string_view name);

// The test kernel `name`; null for an unknown name.
const TestKernel* FindTestKernel(std::string_view name);

// The kernel `name` built for this machine.
inline std::span<const uint8_t> HostKernelElf(std::string_view name) {
  return TestKernelElf(name, HostKernelArch());
}

}  // namespace strata::testing
