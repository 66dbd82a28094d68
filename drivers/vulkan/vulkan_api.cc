#include "drivers/vulkan/vulkan_api.h"

#include <dlfcn.h>

#include <mutex>

namespace strata::vulkan {

StatusOr<const GlobalFunctions*> LoadVulkanLoader() {
  static GlobalFunctions functions;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    // Never closed: Vulkan objects may be destroyed during static destruction.
    void* library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* error = dlerror();
      status = UnavailableError("the Vulkan loader libvulkan.so.1 could not be opened (",
                                error ? error : "unknown error", "); install it (Debian: libvulkan1)");
      return;
    }
    functions.vkGetInstanceProcAddr =
        reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
    if (!functions.vkGetInstanceProcAddr) {
      status = UnavailableError("libvulkan.so.1 does not export vkGetInstanceProcAddr");
      return;
    }
#define STRATA_VK_LOAD(name)                                                                            \
  functions.name = reinterpret_cast<PFN_##name>(functions.vkGetInstanceProcAddr(nullptr, #name));      \
  if (!functions.name) {                                                                                \
    status = UnavailableError("the Vulkan loader libvulkan.so.1 does not provide " #name);               \
    return;                                                                                             \
  }
    STRATA_VK_GLOBAL_FUNCTIONS(STRATA_VK_LOAD)
#undef STRATA_VK_LOAD
  });
  if (!status.ok()) return status;
  return &functions;
}

Status LoadInstanceFunctions(const GlobalFunctions& global, VkInstance instance, InstanceFunctions* out) {
#define STRATA_VK_LOAD(name)                                                                   \
  out->name = reinterpret_cast<PFN_##name>(global.vkGetInstanceProcAddr(instance, #name));    \
  if (!out->name) return UnavailableError("the Vulkan instance does not provide " #name);
  STRATA_VK_INSTANCE_FUNCTIONS(STRATA_VK_LOAD)
#undef STRATA_VK_LOAD
  out->vkGetPhysicalDeviceCalibrateableTimeDomainsEXT = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
      global.vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
  return OkStatus();
}

Status LoadDeviceFunctions(const InstanceFunctions& instance, VkDevice device, DeviceFunctions* out) {
#define STRATA_VK_LOAD(name)                                                               \
  out->name = reinterpret_cast<PFN_##name>(instance.vkGetDeviceProcAddr(device, #name)); \
  if (!out->name) return UnavailableError("the Vulkan device does not provide " #name);
  STRATA_VK_DEVICE_FUNCTIONS(STRATA_VK_LOAD)
#undef STRATA_VK_LOAD
#define STRATA_VK_LOAD_OPTIONAL(name) \
  out->name = reinterpret_cast<PFN_##name>(instance.vkGetDeviceProcAddr(device, #name));
  STRATA_VK_DEVICE_EXTENSION_FUNCTIONS(STRATA_VK_LOAD_OPTIONAL)
#undef STRATA_VK_LOAD_OPTIONAL
  return OkStatus();
}

std::string VkResultName(VkResult result) {
  const char* name = "unknown result";
  switch (result) {
#define STRATA_VK_RESULT(r) \
  case r: name = #r; break;
    STRATA_VK_RESULT(VK_SUCCESS)
    STRATA_VK_RESULT(VK_NOT_READY)
    STRATA_VK_RESULT(VK_TIMEOUT)
    STRATA_VK_RESULT(VK_INCOMPLETE)
    STRATA_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    STRATA_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    STRATA_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    STRATA_VK_RESULT(VK_ERROR_DEVICE_LOST)
    STRATA_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    STRATA_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    STRATA_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    STRATA_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    STRATA_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    STRATA_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    STRATA_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    STRATA_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    STRATA_VK_RESULT(VK_ERROR_UNKNOWN)
    STRATA_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    STRATA_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    STRATA_VK_RESULT(VK_ERROR_FRAGMENTATION)
    STRATA_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    STRATA_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
    STRATA_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef STRATA_VK_RESULT
    default: break;
  }
  return StrCat(name, " (", static_cast<int>(result), ")");
}

Status VkError(VkResult result, std::string_view what) {
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_TOO_MANY_OBJECTS:
      return ResourceExhaustedError(what, ": ", VkResultName(result));
    case VK_ERROR_DEVICE_LOST:
      return UnavailableError(what, ": the Vulkan device was lost (", VkResultName(result),
                              "); create a new device to go on");
    default:
      return InternalError(what, ": ", VkResultName(result));
  }
}

std::string VkVersionString(uint32_t version) {
  return StrCat(VK_API_VERSION_MAJOR(version), ".", VK_API_VERSION_MINOR(version), ".",
                VK_API_VERSION_PATCH(version));
}

}  // namespace strata::vulkan
