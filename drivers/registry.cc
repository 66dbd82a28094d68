#include "drivers/registry.h"

#include <cstdio>
#include <cstdlib>

#include "drivers/cpu/cpu_device.h"
#if STRATA_DRIVER_VULKAN
#include "drivers/vulkan/vulkan_device.h"
#endif
#if STRATA_DRIVER_CUDA
#include "drivers/cuda/cuda_device.h"
#endif
#if STRATA_DRIVER_ROCM
#include "drivers/rocm/rocm_device.h"
#endif

namespace strata::drivers {

static hal::DriverRegistry* CreateRegistry() {
  auto* registry = new hal::DriverRegistry();
  // Registering the build's own drivers into an empty registry fails only if
  // two drivers share a name: a bug in this file, caught by every test.
  auto must = [](Status status) {
    if (!status.ok()) {
      std::fprintf(stderr, "strata: driver registration failed: %s\n", status.ToString().c_str());
      std::abort();
    }
  };
  must(cpu::RegisterSyncDriver(*registry));
#if STRATA_DRIVER_CPU_TASK
  must(cpu::RegisterTaskDriver(*registry));
#endif
#if STRATA_DRIVER_VULKAN
  must(vulkan::RegisterVulkanDriver(*registry));
#endif
#if STRATA_DRIVER_CUDA
  must(cuda::RegisterCudaDriver(*registry));
#endif
#if STRATA_DRIVER_ROCM
  must(rocm::RegisterRocmDriver(*registry));
#endif
  return registry;
}

hal::DriverRegistry& DefaultRegistry() {
  // Never destroyed: devices may outlive static destruction order.
  static hal::DriverRegistry* registry = CreateRegistry();
  return *registry;
}

}  // namespace strata::drivers
