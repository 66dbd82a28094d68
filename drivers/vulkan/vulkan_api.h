// The Vulkan API as the driver reaches it: the loader (libvulkan.so.1) opened
// at run time with dlopen, and tables of the functions the driver calls,
// resolved through vkGetInstanceProcAddr and vkGetDeviceProcAddr. Nothing
// links against libvulkan, so a runtime built with the Vulkan driver starts
// and runs its CPU drivers on a machine without any Vulkan installed.
//
// Thread safety: LoadVulkanLoader is thread-safe (the loader is opened once
// per process and never closed); the tables are immutable once filled.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include "vm/base/status.h"

namespace strata::vulkan {

// Functions resolved before any instance exists.
#define STRATA_VK_GLOBAL_FUNCTIONS(X) \
  X(vkCreateInstance)                 \
  X(vkEnumerateInstanceLayerProperties)

// Functions of an instance and its physical devices.
#define STRATA_VK_INSTANCE_FUNCTIONS(X)       \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

// Functions of a device.
#define STRATA_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                  \
  X(vkGetDeviceQueue)                 \
  X(vkQueueSubmit)                    \
  X(vkDeviceWaitIdle)                 \
  X(vkAllocateMemory)                 \
  X(vkFreeMemory)                     \
  X(vkMapMemory)                      \
  X(vkUnmapMemory)                    \
  X(vkFlushMappedMemoryRanges)        \
  X(vkInvalidateMappedMemoryRanges)   \
  X(vkCreateBuffer)                   \
  X(vkDestroyBuffer)                  \
  X(vkGetBufferMemoryRequirements)    \
  X(vkBindBufferMemory)               \
  X(vkCreateShaderModule)             \
  X(vkDestroyShaderModule)            \
  X(vkCreateDescriptorSetLayout)      \
  X(vkDestroyDescriptorSetLayout)     \
  X(vkCreatePipelineLayout)           \
  X(vkDestroyPipelineLayout)          \
  X(vkCreatePipelineCache)            \
  X(vkDestroyPipelineCache)           \
  X(vkCreateComputePipelines)         \
  X(vkDestroyPipeline)                \
  X(vkCreateDescriptorPool)           \
  X(vkDestroyDescriptorPool)          \
  X(vkAllocateDescriptorSets)         \
  X(vkUpdateDescriptorSets)           \
  X(vkCreateCommandPool)              \
  X(vkDestroyCommandPool)             \
  X(vkAllocateCommandBuffers)         \
  X(vkResetCommandPool)               \
  X(vkBeginCommandBuffer)             \
  X(vkEndCommandBuffer)               \
  X(vkCmdBindPipeline)                \
  X(vkCmdBindDescriptorSets)          \
  X(vkCmdPushConstants)               \
  X(vkCmdDispatch)                    \
  X(vkCmdFillBuffer)                  \
  X(vkCmdCopyBuffer)                  \
  X(vkCmdUpdateBuffer)                \
  X(vkCmdPipelineBarrier)             \
  X(vkCmdWriteTimestamp)              \
  X(vkCmdResetQueryPool)              \
  X(vkCreateQueryPool)                \
  X(vkDestroyQueryPool)               \
  X(vkGetQueryPoolResults)            \
  X(vkCreateFence)                    \
  X(vkDestroyFence)                   \
  X(vkWaitForFences)                  \
  X(vkResetFences)                    \
  X(vkCreateSemaphore)                \
  X(vkDestroySemaphore)               \
  X(vkWaitSemaphores)

// Device functions of extensions; null when the extension is not enabled.
#define STRATA_VK_DEVICE_EXTENSION_FUNCTIONS(X) \
  X(vkCmdPushDescriptorSetKHR)                  \
  X(vkGetMemoryHostPointerPropertiesEXT)        \
  X(vkGetCalibratedTimestampsEXT)               \
  X(vkGetPipelineExecutablePropertiesKHR)       \
  X(vkGetPipelineExecutableStatisticsKHR)

#define STRATA_VK_DECLARE(name) PFN_##name name = nullptr;

struct GlobalFunctions {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  STRATA_VK_GLOBAL_FUNCTIONS(STRATA_VK_DECLARE)
};
struct InstanceFunctions {
  STRATA_VK_INSTANCE_FUNCTIONS(STRATA_VK_DECLARE)
  // Instance-level, for VK_EXT_calibrated_timestamps.
  PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT vkGetPhysicalDeviceCalibrateableTimeDomainsEXT = nullptr;
};
struct DeviceFunctions {
  STRATA_VK_DEVICE_FUNCTIONS(STRATA_VK_DECLARE)
  STRATA_VK_DEVICE_EXTENSION_FUNCTIONS(STRATA_VK_DECLARE)
};

#undef STRATA_VK_DECLARE

// Opens the loader once per process and resolves the global functions.
// UNAVAILABLE when libvulkan.so.1 cannot be opened (Vulkan is not installed).
StatusOr<const GlobalFunctions*> LoadVulkanLoader();

// Resolves every instance function; fails naming the first one missing.
Status LoadInstanceFunctions(const GlobalFunctions& global, VkInstance instance, InstanceFunctions* out);
// Resolves every device function (extension functions stay null when absent);
// fails naming the first core function missing.
Status LoadDeviceFunctions(const InstanceFunctions& instance, VkDevice device, DeviceFunctions* out);

// "VK_ERROR_DEVICE_LOST (-4)".
std::string VkResultName(VkResult result);

// The error for a failed Vulkan call: RESOURCE_EXHAUSTED for out-of-memory
// results, UNAVAILABLE for a lost device, INTERNAL otherwise; the message
// says what was being done and the result's name.
Status VkError(VkResult result, std::string_view what);

// A Vulkan structure with its sType set and every other field zero.
template <typename T>
T VkMake(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

// "1.3.230".
std::string VkVersionString(uint32_t version);

}  // namespace strata::vulkan
