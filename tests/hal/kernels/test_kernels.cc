#include "tests/hal/kernels/test_kernels.h"

namespace strata::testing {

KernelArch HostKernelArch() {
#if defined(__x86_64__)
  return KernelArch::kX86_64;
#elif defined(__aarch64__)
  return KernelArch::kAarch64;
#else
#error "test kernels are built for x86_64 and aarch64 hosts only"
#endif
}

const TestKernel* FindTestKernel(std::string_view name) {
  for (const TestKernel& kernel : TestKernels()) {
    if (name == kernel.name) return &kernel;
  }
  return nullptr;
}

std::span<const uint8_t> TestKernelElf(std::string_view name, KernelArch arch) {
  const TestKernel* kernel = FindTestKernel(name);
  if (!kernel) return {};
  return arch == KernelArch::kX86_64 ? kernel->x86_64 : kernel->aarch64;
}

std::span<const uint8_t> TestKernelSpirv(std::string_view name) {
  const TestKernel* kernel = FindTestKernel(name);
  return kernel ? kernel->spirv : std::span<const uint8_t>();
}

std::span<const uint8_t> TestKernelPtx(std::string_view name) {
  const TestKernel* kernel = FindTestKernel(name);
  return kernel ? kernel->ptx : std::span<const uint8_t>();
}

}  // namespace strata::testing
