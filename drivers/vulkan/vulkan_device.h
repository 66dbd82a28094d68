// The Vulkan driver: "vulkan", a HAL device on one Vulkan physical device.
//
// Device specs: `vulkan` (the first device), `vulkan?device=1` (by index in
// the loader's list), `vulkan?device=llvmpipe` (the first whose name contains
// the text), `vulkan://1` (the same as device=1); options validation=1
// (enable VK_LAYER_KHRONOS_validation; an error when it is not installed),
// max_allocation=BYTES (the largest allocation, as on the CPU drivers),
// push_descriptors=0 (use descriptor pools even where VK_KHR_push_descriptor
// exists), unified_memory=0, robust_buffer_access=0 and pipelined=0 (one
// submission at a time even where the device has timeline semaphores).
//
// The queue: HAL semaphores are host timelines (hal::HostSemaphore), and
// submissions go through hal::HostQueue: when a submission's waits are met it
// is handed to the device's queue thread. On a device with timeline
// semaphores (Vulkan 1.2's timelineSemaphore feature) the queue is pipelined
// (hal::ThreadedHostQueue): that thread submits a submission's command
// buffers in one vkQueueSubmit that signals a timeline VkSemaphore of the
// queue to the next value and goes on to the next submission, while a second
// thread waits for each value in turn (vkWaitSemaphores, bounded by the
// submission's deadline), reads the check words back and signals or fails
// the HAL semaphores; a chain of dependent submissions is queued on the GPU
// back to back, each ordered after the last by the barrier that starts every
// command buffer. Command buffers of several segments (checks read between
// parts), traced submissions and a command buffer already in flight run as
// before (VulkanCommandBuffer::Execute: vkQueueSubmit with a fence, a wait,
// the check words), once the work in flight is done; so does everything on
// a device without timeline semaphores. The threads wait on the device
// rather than spinning.
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

// Runs ready submissions on a thread of its own; pipelined where the device
// has timeline semaphores.
class VulkanQueue final : public hal::ThreadedHostQueue {
 public:
  // Pipelined when `pipelined` and the device has timeline semaphores.
  static StatusOr<std::shared_ptr<VulkanQueue>> Create(std::string device_name,
                                                       std::shared_ptr<VulkanContext> context, bool pipelined);
  ~VulkanQueue() override;

 protected:
  Status Execute(hal::CommandBuffer& command_buffer, std::span<const hal::BufferBinding> binding_table, Tracer* tracer,
                 std::chrono::steady_clock::time_point deadline) override;
  // One vkQueueSubmit of the command buffers' VkCommandBuffers that signals
  // the queue's timeline semaphore to the next value (the ticket).
  StatusOr<bool> Launch(std::span<const Ref<hal::CommandBuffer>> command_buffers,
                        std::span<const std::span<const hal::BufferBinding>> binding_tables,
                        uint64_t* ticket) override;
  // vkWaitSemaphores for the ticket's value, then the command buffers'
  // check words.
  Status Await(uint64_t ticket, std::span<const Ref<hal::CommandBuffer>> command_buffers,
               std::chrono::steady_clock::time_point deadline) override;

 private:
  VulkanQueue(std::string device_name, std::shared_ptr<VulkanContext> context, VkFence fence, VkSemaphore timeline);

  std::shared_ptr<VulkanContext> context_;
  VkFence fence_;
  // Null without timeline semaphores (no pipelining).
  VkSemaphore timeline_;
  // The value the last launch signals (queue thread only).
  uint64_t last_ticket_ = 0;
};

class VulkanDevice final : public hal::Device {
 public:
  VulkanDevice(hal::DeviceInfo info, std::shared_ptr<VulkanContext> context, Ref<VulkanAllocator> allocator,
               std::shared_ptr<VulkanQueue> queue);
  ~VulkanDevice() override;

  StatusOr<Ref<hal::CommandBuffer>> CreateCommandBuffer() override;
  StatusOr<Ref<hal::Semaphore>> CreateSemaphore(uint64_t initial_value) override;

  const VulkanContext& context() const { return *context_; }
  const VulkanQueue& queue() const { return *queue_; }

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
