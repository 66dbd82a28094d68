// The Vulkan driver: "vulkan", a HAL device on one Vulkan physical device.
//
// Device specs: `vulkan` (the first device), `vulkan?device=1` (by index in
// the loader's list), `vulkan?device=llvmpipe` (the first whose name contains
// the text), `vulkan://1` (the same as device=1); options validation=1
// (enable VK_LAYER_KHRONOS_validation; an error when it is not installed),
// max_allocation=BYTES (the largest allocation, as on the CPU drivers) and
// push_descriptors=0 (use descriptor pools even where VK_KHR_push_descriptor
// exists).
//
// The queue: semaphores are host timelines (hal::HostSemaphore), and
// submissions go through hal::HostQueue: when a submission's waits are met it
// is handed to the device's queue thread, which runs its command buffers one
// at a time (VulkanCommandBuffer::Execute: vkQueueSubmit with a fence, a wait
// bounded by the submission's deadline, the check words read back), then
// signals or fails the signal semaphores. One submission is on the GPU at a
// time; the thread waits on a fence rather than spinning.
//
// Errors: no loader, no Vulkan driver (ICD) or no device: UNAVAILABLE (the
// conformance suite and run-module skip the driver with that line); a device
// index or name that matches none: NOT_FOUND, listing the devices; a lost
// device fails the submission running then and every later one with
// UNAVAILABLE, while the process and the other drivers go on.
//
// Thread safety: see hal/device.h.
#pragma once

#include <memory>

#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_context.h"
#include "hal/device.h"
#include "hal/driver_registry.h"
#include "hal/host_queue.h"

namespace strata::vulkan {

// Runs ready submissions on a thread of its own.
class VulkanQueue final : public hal::ThreadedHostQueue {
 public:
  static StatusOr<std::shared_ptr<VulkanQueue>> Create(std::string device_name,
                                                       std::shared_ptr<VulkanContext> context);
  ~VulkanQueue() override;

 protected:
  Status Execute(hal::CommandBuffer& command_buffer, Tracer* tracer,
                 std::chrono::steady_clock::time_point deadline) override;

 private:
  VulkanQueue(std::string device_name, std::shared_ptr<VulkanContext> context, VkFence fence);

  std::shared_ptr<VulkanContext> context_;
  VkFence fence_;
};

class VulkanDevice final : public hal::Device {
 public:
  VulkanDevice(hal::DeviceInfo info, std::shared_ptr<VulkanContext> context, Ref<VulkanAllocator> allocator,
               std::shared_ptr<VulkanQueue> queue);
  ~VulkanDevice() override;

  StatusOr<Ref<hal::CommandBuffer>> CreateCommandBuffer() override;
  StatusOr<Ref<hal::Semaphore>> CreateSemaphore(uint64_t initial_value) override;

  const VulkanContext& context() const { return *context_; }

 protected:
  const hal::DriverFamily* family() const override { return &kVulkanFamily; }
  StatusOr<Ref<hal::Executable>> PrepareExecutableImpl(const hal::ExecutableParams& params) override;
  Status QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits, std::span<const hal::SemaphoreValue> signals,
                          std::span<hal::CommandBuffer* const> command_buffers,
                          std::chrono::steady_clock::time_point deadline) override;

 private:
  std::shared_ptr<VulkanContext> context_;
  Ref<VulkanAllocator> allocator_;
  std::shared_ptr<VulkanQueue> queue_;
};

// Registration, called by drivers/registry.cc.
Status RegisterVulkanDriver(hal::DriverRegistry& registry);

}  // namespace strata::vulkan
