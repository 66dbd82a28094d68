#include "drivers/vulkan/vulkan_context.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>

namespace strata::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool HasExtension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
  for (const VkExtensionProperties& extension : extensions) {
    if (std::strcmp(extension.extensionName, name) == 0) return true;
  }
  return false;
}

const char* DeviceTypeName(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// Whether `text` is a decimal index.
bool IsIndex(std::string_view text) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// One VkInstance per process (and one more with the validation layer),
// created on first use and never destroyed, like the loader itself: an ICD
// stays loaded instead of being loaded and unloaded with every device, and
// whatever it allocates once per load is not lost each time.
struct SharedInstance {
  VkInstance instance = VK_NULL_HANDLE;
  InstanceFunctions functions;
};

StatusOr<const SharedInstance*> GetSharedInstance(const GlobalFunctions& global, bool validation) {
  static std::mutex mutex;
  static SharedInstance* instances[2] = {nullptr, nullptr};
  std::lock_guard<std::mutex> lock(mutex);
  if (instances[validation]) return instances[validation];
  std::vector<const char*> layers;
  if (validation) {
    uint32_t count = 0;
    global.vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    global.vkEnumerateInstanceLayerProperties(&count, available.data());
    bool found = false;
    for (const VkLayerProperties& layer : available) found |= std::strcmp(layer.layerName, kValidationLayer) == 0;
    if (!found) {
      return FailedPreconditionError("vulkan: validation=1 asks for the layer ", kValidationLayer,
                                     ", which is not installed (Debian: vulkan-validationlayers); ", count,
                                     " other layer", count == 1 ? " is" : "s are", " installed");
    }
    layers.push_back(kValidationLayer);
  }
  auto application = VkMake<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  application.pApplicationName = "strata";
  application.pEngineName = "strata";
  application.apiVersion = VK_API_VERSION_1_3;
  auto instance_info = VkMake<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  instance_info.pApplicationInfo = &application;
  instance_info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  instance_info.ppEnabledLayerNames = layers.data();
  auto shared = std::make_unique<SharedInstance>();
  VkResult result = global.vkCreateInstance(&instance_info, nullptr, &shared->instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return UnavailableError("vulkan: no Vulkan driver (ICD) is installed (vkCreateInstance: ",
                            VkResultName(result),
                            "); for a CPU device install Mesa's lavapipe (Debian: mesa-vulkan-drivers)");
  }
  if (result != VK_SUCCESS) return VkError(result, "vulkan: vkCreateInstance");
  Status loaded = LoadInstanceFunctions(global, shared->instance, &shared->functions);
  if (!loaded.ok()) {
    if (shared->functions.vkDestroyInstance) shared->functions.vkDestroyInstance(shared->instance, nullptr);
    return loaded;
  }
  instances[validation] = shared.release();
  return instances[validation];
}

}  // namespace

StatusOr<std::shared_ptr<VulkanContext>> VulkanContext::Create(const ContextOptions& options) {
  STRATA_ASSIGN_OR_RETURN(const GlobalFunctions* global, LoadVulkanLoader());
  STRATA_ASSIGN_OR_RETURN(const SharedInstance* instance, GetSharedInstance(*global, options.validation));
  std::shared_ptr<VulkanContext> context(new VulkanContext());
  context->instance_ = instance->instance;
  const InstanceFunctions& fi = instance->functions;

  uint32_t device_count = 0;
  fi.vkEnumeratePhysicalDevices(context->instance_, &device_count, nullptr);
  std::vector<VkPhysicalDevice> devices(device_count);
  fi.vkEnumeratePhysicalDevices(context->instance_, &device_count, devices.data());
  devices.resize(device_count);
  if (devices.empty()) return UnavailableError("vulkan: the Vulkan loader found no devices");
  std::string names;
  size_t chosen = devices.size();
  for (size_t i = 0; i < devices.size(); ++i) {
    VkPhysicalDeviceProperties properties;
    fi.vkGetPhysicalDeviceProperties(devices[i], &properties);
    names += StrCat(names.empty() ? "" : ", ", i, ": ", properties.deviceName);
    context->device_list_.push_back(
        StrCat(i, ": ", properties.deviceName, ", ", DeviceTypeName(properties.deviceType)));
    if (chosen != devices.size()) continue;
    if (options.device.empty() ? i == 0
                               : IsIndex(options.device) ? std::to_string(i) == options.device
                                                         : std::string_view(properties.deviceName).find(options.device) !=
                                                               std::string_view::npos) {
      chosen = i;
    }
  }
  if (chosen == devices.size()) {
    return NotFoundError("vulkan: no device ", IsIndex(options.device) ? "with index " : "whose name contains ", "'",
                         options.device, "' (devices: ", names, ")");
  }
  context->physical_device_ = devices[chosen];
  context->device_index_ = chosen;
  VkPhysicalDevice physical = context->physical_device_;

  auto maintenance3 = VkMake<VkPhysicalDeviceMaintenance3Properties>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  auto host_memory = VkMake<VkPhysicalDeviceExternalMemoryHostPropertiesEXT>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT);
  context->subgroup_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  context->subgroup_.pNext = &maintenance3;
  maintenance3.pNext = &host_memory;
  context->float_controls_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
  host_memory.pNext = &context->float_controls_;
  auto properties2 = VkMake<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  properties2.pNext = &context->subgroup_;
  fi.vkGetPhysicalDeviceProperties2(physical, &properties2);
  context->properties_ = properties2.properties;
  context->subgroup_.pNext = nullptr;
  context->float_controls_.pNext = nullptr;
  context->max_memory_allocation_size_ = maintenance3.maxMemoryAllocationSize;
  const uint32_t api = context->properties_.apiVersion;
  if (VK_API_VERSION_MAJOR(api) == 1 && VK_API_VERSION_MINOR(api) < 2) {
    return UnavailableError("vulkan: device '", context->name(), "' supports Vulkan ", VkVersionString(api),
                            "; this driver needs Vulkan 1.2 or later");
  }
  fi.vkGetPhysicalDeviceMemoryProperties(physical, &context->memory_);

  auto features11 = VkMake<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  auto features12 = VkMake<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  auto features13 = VkMake<VkPhysicalDeviceVulkan13Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
  auto features = VkMake<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  const bool vulkan13 = VK_API_VERSION_MAJOR(api) > 1 || VK_API_VERSION_MINOR(api) >= 3;
  features.pNext = &features11;
  features11.pNext = &features12;
  if (vulkan13) features12.pNext = &features13;
  fi.vkGetPhysicalDeviceFeatures2(physical, &features);

  // Enable only what kernels may use (the capabilities of
  // vulkan_executable.cc), plus robust buffer access unless turned off: a
  // kernel's stray access then cannot reach memory outside its bindings.
  VkPhysicalDeviceFeatures2& enabled = context->features_;
  VkPhysicalDeviceVulkan11Features& enabled11 = context->features11_;
  VkPhysicalDeviceVulkan12Features& enabled12 = context->features12_;
  enabled = VkMake<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  enabled11 = VkMake<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  enabled12 = VkMake<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  enabled.features.robustBufferAccess = options.robust_buffer_access ? features.features.robustBufferAccess : VK_FALSE;
  enabled.features.shaderFloat64 = features.features.shaderFloat64;
  enabled.features.shaderInt64 = features.features.shaderInt64;
  enabled.features.shaderInt16 = features.features.shaderInt16;
  enabled11.storageBuffer16BitAccess = features11.storageBuffer16BitAccess;
  enabled11.uniformAndStorageBuffer16BitAccess = features11.uniformAndStorageBuffer16BitAccess;
  enabled11.storagePushConstant16 = features11.storagePushConstant16;
  enabled11.variablePointersStorageBuffer = features11.variablePointersStorageBuffer;
  enabled11.variablePointers = features11.variablePointers;
  enabled12.shaderFloat16 = features12.shaderFloat16;
  enabled12.shaderInt8 = features12.shaderInt8;
  enabled12.storageBuffer8BitAccess = features12.storageBuffer8BitAccess;
  enabled12.uniformAndStorageBuffer8BitAccess = features12.uniformAndStorageBuffer8BitAccess;
  enabled12.storagePushConstant8 = features12.storagePushConstant8;
  enabled12.shaderBufferInt64Atomics = features12.shaderBufferInt64Atomics;
  enabled12.bufferDeviceAddress = features12.bufferDeviceAddress;
  enabled12.vulkanMemoryModel = features12.vulkanMemoryModel;
  enabled12.vulkanMemoryModelDeviceScope = features12.vulkanMemoryModelDeviceScope;
  enabled12.timelineSemaphore = features12.timelineSemaphore;
  // Vulkan 1.3: maintenance4 allows LocalSizeId, which SPIR-V 1.6 compilers
  // emit for workgroup sizes.
  VkPhysicalDeviceVulkan13Features& enabled13 = context->features13_;
  enabled13 = VkMake<VkPhysicalDeviceVulkan13Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES);
  enabled13.maintenance4 = features13.maintenance4;
  enabled13.subgroupSizeControl = features13.subgroupSizeControl;
  enabled13.computeFullSubgroups = features13.computeFullSubgroups;
  enabled.pNext = &enabled11;
  enabled11.pNext = &enabled12;
  if (vulkan13) enabled12.pNext = &enabled13;

  uint32_t family_count = 0;
  fi.vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  fi.vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());
  bool found_queue = false;
  for (uint32_t i = 0; i < family_count && !found_queue; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      context->queue_family_ = i;
      context->timestamp_valid_bits_ = families[i].timestampValidBits;
      found_queue = true;
    }
  }
  if (!found_queue) return UnavailableError("vulkan: device '", context->name(), "' has no compute queue");

  uint32_t extension_count = 0;
  fi.vkEnumerateDeviceExtensionProperties(physical, nullptr, &extension_count, nullptr);
  std::vector<VkExtensionProperties> extensions(extension_count);
  fi.vkEnumerateDeviceExtensionProperties(physical, nullptr, &extension_count, extensions.data());
  std::vector<const char*> enabled_extensions;
  if (options.push_descriptors && HasExtension(extensions, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME)) {
    enabled_extensions.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    context->push_descriptors_ = true;
  }
  if (HasExtension(extensions, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME)) {
    enabled_extensions.push_back(VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
    context->external_memory_host_ = true;
    context->host_pointer_alignment_ = host_memory.minImportedHostPointerAlignment;
  }
  if (HasExtension(extensions, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) &&
      fi.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT) {
    uint32_t domain_count = 0;
    fi.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(physical, &domain_count, nullptr);
    std::vector<VkTimeDomainEXT> domains(domain_count);
    fi.vkGetPhysicalDeviceCalibrateableTimeDomainsEXT(physical, &domain_count, domains.data());
    bool device_domain = false, monotonic = false;
    for (VkTimeDomainEXT domain : domains) {
      device_domain |= domain == VK_TIME_DOMAIN_DEVICE_EXT;
      monotonic |= domain == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
    }
    if (device_domain && monotonic) {
      enabled_extensions.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
      context->calibrated_timestamps_ = true;
    }
  }

  // Pipeline statistics, asked for: the extension and its one feature.
  auto executable_info = VkMake<VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR);
  if (options.pipeline_statistics) {
    if (HasExtension(extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
      enabled_extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
      executable_info.pipelineExecutableInfo = VK_TRUE;
      executable_info.pNext = enabled.pNext;
      enabled.pNext = &executable_info;
      context->pipeline_statistics_ = true;
    } else {
      std::fprintf(stderr, "vulkan: device '%s' has no %s: no pipeline statistics\n", context->name().c_str(),
                   VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
  }

  const float priority = 1.0f;
  auto queue_info = VkMake<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue_info.queueFamilyIndex = context->queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  auto device_info = VkMake<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  device_info.pNext = &enabled;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = static_cast<uint32_t>(enabled_extensions.size());
  device_info.ppEnabledExtensionNames = enabled_extensions.data();
  VkResult result = fi.vkCreateDevice(physical, &device_info, nullptr, &context->device_);
  if (enabled.pNext == &executable_info) enabled.pNext = executable_info.pNext;
  if (result != VK_SUCCESS) return VkError(result, StrCat("vulkan: vkCreateDevice for '", context->name(), "'"));
  STRATA_RETURN_IF_ERROR(LoadDeviceFunctions(fi, context->device_, &context->vk_));
  if (!context->vk_.vkCmdPushDescriptorSetKHR) context->push_descriptors_ = false;
  if (!context->vk_.vkGetMemoryHostPointerPropertiesEXT) context->external_memory_host_ = false;
  if (!context->vk_.vkGetCalibratedTimestampsEXT) context->calibrated_timestamps_ = false;
  context->vk_.vkGetDeviceQueue(context->device_, context->queue_family_, 0, &context->queue_);
  auto cache_info = VkMake<VkPipelineCacheCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
  result = context->vk_.vkCreatePipelineCache(context->device_, &cache_info, nullptr, &context->pipeline_cache_);
  if (result != VK_SUCCESS) return VkError(result, "vulkan: vkCreatePipelineCache");
  return context;
}

VulkanContext::~VulkanContext() {
  if (device_) {
    vk_.vkDeviceWaitIdle(device_);
    if (pipeline_cache_) vk_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    vk_.vkDestroyDevice(device_, nullptr);
  }
}

Status VulkanContext::LostError() const {
  return UnavailableError("device '", name(), "' was lost (VK_ERROR_DEVICE_LOST) earlier; ",
                          "create a new device to go on");
}

Status VulkanContext::WorkResult(VkResult result) {
  if (result == VK_SUCCESS) return OkStatus();
  if (result == VK_ERROR_DEVICE_LOST) lost.store(true, std::memory_order_relaxed);
  return VkError(result, StrCat("device '", name(), "': running a submission"));
}

Status VulkanContext::RanPastDeadline(std::chrono::steady_clock::time_point deadline, std::string_view what_else) {
  const double late_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - deadline).count();
  return DeadlineExceededError("the submission was still running at the call's deadline and finished ", late_ms,
                               " ms after it (a Vulkan device cannot stop a running dispatch)", what_else);
}

std::string VulkanContext::Describe() const {
  return StrCat(properties_.deviceName, ", ", DeviceTypeName(properties_.deviceType), ", Vulkan ",
                VkVersionString(properties_.apiVersion), ", driver ", VkVersionString(properties_.driverVersion));
}

std::vector<std::string> VulkanContext::Details() const {
  const VkPhysicalDeviceLimits& l = properties_.limits;
  std::string heaps;
  for (uint32_t i = 0; i < memory_.memoryHeapCount; ++i) {
    const VkMemoryHeap& heap = memory_.memoryHeaps[i];
    heaps += StrCat(i ? ", " : "", heap.size >> 20, " MiB",
                    (heap.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) ? " device-local" : " host");
  }
  auto yes = [](VkBool32 value) { return value ? "yes" : "no"; };
  std::string devices;
  for (size_t i = 0; i < device_list_.size(); ++i) {
    devices += StrCat(i ? "; " : "", device_list_[i], i == device_index_ ? " (this one)" : "");
  }
  return {
      StrCat("devices (vulkan?device=INDEX): ", devices),
      StrCat("memory heaps: ", heaps, "; largest allocation ", max_memory_allocation_size_ >> 20, " MiB"),
      StrCat("workgroup size max ", l.maxComputeWorkGroupSize[0], "x", l.maxComputeWorkGroupSize[1], "x",
             l.maxComputeWorkGroupSize[2], ", ", l.maxComputeWorkGroupInvocations, " invocations; count max ",
             l.maxComputeWorkGroupCount[0], "x", l.maxComputeWorkGroupCount[1], "x", l.maxComputeWorkGroupCount[2]),
      StrCat("shared memory ", l.maxComputeSharedMemorySize, " B; push constants ", l.maxPushConstantsSize,
             " B; storage buffers per stage ", l.maxPerStageDescriptorStorageBuffers, ", range ",
             l.maxStorageBufferRange >> 20, " MiB, offset alignment ", l.minStorageBufferOffsetAlignment),
      StrCat("f16 ", yes(features12_.shaderFloat16), ", f64 ", yes(features_.features.shaderFloat64), ", i64 ",
             yes(features_.features.shaderInt64), ", i16 ", yes(features_.features.shaderInt16), ", i8 ",
             yes(features12_.shaderInt8), "; subgroup size ", subgroup_.subgroupSize, "; push descriptors ",
             yes(push_descriptors_), ", host memory import ", yes(external_memory_host_),
             ", timeline semaphores ", yes(features12_.timelineSemaphore)),
      StrCat("float controls (f16/f32/f64): denormals preserved ",
             yes(float_controls_.shaderDenormPreserveFloat16), "/", yes(float_controls_.shaderDenormPreserveFloat32),
             "/", yes(float_controls_.shaderDenormPreserveFloat64), ", NaN, infinities and signed zeros preserved ",
             yes(float_controls_.shaderSignedZeroInfNanPreserveFloat16), "/",
             yes(float_controls_.shaderSignedZeroInfNanPreserveFloat32), "/",
             yes(float_controls_.shaderSignedZeroInfNanPreserveFloat64)),
  };
}

}  // namespace strata::vulkan
