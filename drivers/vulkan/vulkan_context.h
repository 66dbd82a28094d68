// VulkanContext: one physical device, logical device and compute queue, with
// what the driver learnt about them (properties, limits, features,
// extensions), shared by every object the device creates. Every context uses
// the process's one VkInstance (another with the validation layer), created
// on first use and never destroyed, as the loader is never closed.
//
// HAL objects may outlive their device (hal/device.h): buffers, executables,
// command buffers and the allocator keep a shared_ptr to the context, so the
// VkDevice is destroyed when the last of them goes.
//
// Thread safety: immutable after creation except the queue, which only the
// device's queue thread uses, and `lost`, which is atomic.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/vulkan/vulkan_api.h"
#include "hal/driver_registry.h"

namespace strata::vulkan {

// Which physical device, and how to open it.
struct ContextOptions {
  // An index into vkEnumeratePhysicalDevices' list, or a substring of the
  // device name; empty: the first device.
  std::string device;
  // Enable VK_LAYER_KHRONOS_validation (an error when it is not installed).
  bool validation = false;
  // Use VK_KHR_push_descriptor when the device has it (false: always a
  // descriptor pool, so that path can be tested on any device).
  bool push_descriptors = true;
  // Enable robustBufferAccess where the device has it: a kernel's stray
  // access cannot reach memory outside its bindings, at the cost of a bounds
  // check on every access.
  bool robust_buffer_access = true;
  // Print each pipeline's statistics (registers, memory, instructions: what
  // the driver reports through VK_KHR_pipeline_executable_properties) to
  // stderr when it is created. Without the extension, one line says so.
  bool pipeline_statistics = false;
};

class VulkanContext {
 public:
  // UNAVAILABLE when there is no loader, no driver (ICD) or no device;
  // NOT_FOUND when `options.device` matches none of the devices (the message
  // lists them).
  static StatusOr<std::shared_ptr<VulkanContext>> Create(const ContextOptions& options);
  ~VulkanContext();
  VulkanContext(const VulkanContext&) = delete;
  VulkanContext& operator=(const VulkanContext&) = delete;

  const DeviceFunctions& vk() const { return vk_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }

  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const VkPhysicalDeviceLimits& limits() const { return properties_.limits; }
  const VkPhysicalDeviceMemoryProperties& memory() const { return memory_; }
  const VkPhysicalDeviceFeatures& features() const { return features_.features; }
  const VkPhysicalDeviceVulkan11Features& features11() const { return features11_; }
  const VkPhysicalDeviceVulkan12Features& features12() const { return features12_; }
  // All false on a Vulkan 1.2 device.
  const VkPhysicalDeviceVulkan13Features& features13() const { return features13_; }
  const VkPhysicalDeviceSubgroupProperties& subgroup() const { return subgroup_; }
  // Which SPIR-V float controls the device honours (Vulkan 1.2 core).
  const VkPhysicalDeviceFloatControlsProperties& float_controls() const { return float_controls_; }
  uint64_t max_memory_allocation_size() const { return max_memory_allocation_size_; }

  bool push_descriptors() const { return push_descriptors_; }
  // The pipeline_statistics option, where the device has the extension.
  bool pipeline_statistics() const { return pipeline_statistics_; }
  // VK_EXT_external_memory_host, and the alignment it asks of host pointers.
  bool external_memory_host() const { return external_memory_host_; }
  uint64_t host_pointer_alignment() const { return host_pointer_alignment_; }
  // Bits of a timestamp on the queue (0: no timestamps).
  uint32_t timestamp_valid_bits() const { return timestamp_valid_bits_; }
  // VK_EXT_calibrated_timestamps with the device and CLOCK_MONOTONIC domains.
  bool calibrated_timestamps() const { return calibrated_timestamps_; }
  // Timeline semaphores (Vulkan 1.2's timelineSemaphore feature), which the
  // queue signals to have several submissions in flight.
  bool timeline_semaphores() const { return features12_.timelineSemaphore; }

  // "llvmpipe (LLVM 15.0.6, 256 bits)".
  std::string name() const { return properties_.deviceName; }
  // "llvmpipe (LLVM 15.0.6, 256 bits), CPU, Vulkan 1.3.230, driver 0.0.1".
  std::string Describe() const;
  // Lines for `run-module --list-devices`: memory, limits, features.
  std::vector<std::string> Details() const;

  // Set once the device reports VK_ERROR_DEVICE_LOST; every later submission
  // fails at once (with LostError).
  std::atomic<bool> lost{false};
  Status LostError() const;

  // Waits for submitted work with `wait(timeout_ns)` (a vkWaitForFences or
  // vkWaitSemaphores): until `deadline`, then, since a GPU cannot stop a
  // running dispatch, until the work ends, setting `*missed_deadline`. A
  // failed wait is an error naming the device (VK_ERROR_DEVICE_LOST also
  // sets `lost`).
  template <typename Wait>
  Status WaitForWork(std::chrono::steady_clock::time_point deadline, Wait wait, bool* missed_deadline) {
    VkResult result = VK_TIMEOUT;
    *missed_deadline = false;
    if (deadline != std::chrono::steady_clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now());
      result = wait(static_cast<uint64_t>(std::max<int64_t>(left.count(), 0)));
      *missed_deadline = result == VK_TIMEOUT;
    }
    if (result == VK_TIMEOUT) result = wait(UINT64_MAX);
    return WorkResult(result);
  }
  // OK for VK_SUCCESS from submitting or waiting for work; else an error
  // naming the device (VK_ERROR_DEVICE_LOST also sets `lost`).
  Status WorkResult(VkResult result);
  // DEADLINE_EXCEEDED for work that WaitForWork saw run past `deadline`.
  static Status RanPastDeadline(std::chrono::steady_clock::time_point deadline, std::string_view what_else);

 private:
  VulkanContext() = default;

  DeviceFunctions vk_;
  VkInstance instance_ = VK_NULL_HANDLE;  // shared by every context, never destroyed
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;

  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  VkPhysicalDeviceFeatures2 features_{};
  VkPhysicalDeviceVulkan11Features features11_{};
  VkPhysicalDeviceVulkan12Features features12_{};
  VkPhysicalDeviceVulkan13Features features13_{};
  VkPhysicalDeviceSubgroupProperties subgroup_{};
  VkPhysicalDeviceFloatControlsProperties float_controls_{};
  uint64_t max_memory_allocation_size_ = 0;
  bool push_descriptors_ = false;
  bool pipeline_statistics_ = false;
  bool external_memory_host_ = false;
  uint64_t host_pointer_alignment_ = 0;
  uint32_t timestamp_valid_bits_ = 0;
  bool calibrated_timestamps_ = false;
  // Every physical device the loader lists ("0: llvmpipe (...), CPU"), and
  // which of them this is.
  std::vector<std::string> device_list_;
  size_t device_index_ = 0;
};

}  // namespace strata::vulkan
