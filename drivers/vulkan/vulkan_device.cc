#include "drivers/vulkan/vulkan_device.h"

#include "drivers/vulkan/vulkan_command_buffer.h"
#include "drivers/vulkan/vulkan_executable.h"
#include "hal/host_semaphore.h"

namespace strata::vulkan {

// ---------------------------------------------------------------------------
// VulkanQueue

StatusOr<std::shared_ptr<VulkanQueue>> VulkanQueue::Create(std::string device_name,
                                                           std::shared_ptr<VulkanContext> context,
                                                           bool pipelined) {
  const DeviceFunctions& vk = context->vk();
  auto fence_info = VkMake<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence fence;
  VkResult result = vk.vkCreateFence(context->device(), &fence_info, nullptr, &fence);
  if (result != VK_SUCCESS) return VkError(result, "vulkan: vkCreateFence");
  VkSemaphore timeline = VK_NULL_HANDLE;
  if (pipelined && context->timeline_semaphores()) {
    auto type_info = VkMake<VkSemaphoreTypeCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO);
    type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type_info.initialValue = 0;
    auto semaphore_info = VkMake<VkSemaphoreCreateInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO);
    semaphore_info.pNext = &type_info;
    result = vk.vkCreateSemaphore(context->device(), &semaphore_info, nullptr, &timeline);
    if (result != VK_SUCCESS) {
      vk.vkDestroyFence(context->device(), fence, nullptr);
      return VkError(result, "vulkan: vkCreateSemaphore (timeline)");
    }
  }
  return std::shared_ptr<VulkanQueue>(new VulkanQueue(std::move(device_name), std::move(context), fence, timeline));
}

VulkanQueue::VulkanQueue(std::string device_name, std::shared_ptr<VulkanContext> context, VkFence fence,
                         VkSemaphore timeline)
    : ThreadedHostQueue(std::move(device_name), /*pipelined=*/timeline != VK_NULL_HANDLE),
      context_(std::move(context)),
      fence_(fence),
      timeline_(timeline) {}

VulkanQueue::~VulkanQueue() {
  // Shutdown (the device's destructor) waited for every launch.
  context_->vk().vkDestroyFence(context_->device(), fence_, nullptr);
  if (timeline_) context_->vk().vkDestroySemaphore(context_->device(), timeline_, nullptr);
}

Status VulkanQueue::Execute(hal::CommandBuffer& command_buffer, std::span<const hal::BufferBinding> /*binding_table*/, Tracer* tracer,
                            std::chrono::steady_clock::time_point deadline) {
  // QueueExecute admitted only command buffers of this device's context.
  return static_cast<const VulkanCommandBuffer&>(command_buffer).Execute(fence_, tracer, deadline);
}

StatusOr<bool> VulkanQueue::Launch(std::span<const Ref<hal::CommandBuffer>> command_buffers,
                                   std::span<const std::span<const hal::BufferBinding>> /*binding_tables*/,
                                   uint64_t* ticket) {
  // (Vulkan's indirect command buffers are replayed into direct ones: no
  // table reaches it.)
  // More command buffers than this in one submission take Execute.
  constexpr size_t kMaxLaunched = 16;
  if (command_buffers.size() > kMaxLaunched) return false;
  auto vulkan = [&](size_t i) -> const VulkanCommandBuffer& {
    return static_cast<const VulkanCommandBuffer&>(*command_buffers[i]);
  };
  auto unlaunch = [&](size_t count) {
    for (size_t i = 0; i < count; ++i) vulkan(i).Unlaunch();
  };
  VkCommandBuffer commands[kMaxLaunched];
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    commands[i] = vulkan(i).Launch();
    if (commands[i] == VK_NULL_HANDLE) {
      unlaunch(i);
      return false;
    }
  }
  if (context_->lost.load(std::memory_order_relaxed)) {
    unlaunch(command_buffers.size());
    return context_->LostError();
  }
  const uint64_t value = last_ticket_ + 1;
  auto timeline_info = VkMake<VkTimelineSemaphoreSubmitInfo>(VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO);
  timeline_info.signalSemaphoreValueCount = 1;
  timeline_info.pSignalSemaphoreValues = &value;
  auto submit = VkMake<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.pNext = &timeline_info;
  submit.commandBufferCount = static_cast<uint32_t>(command_buffers.size());
  submit.pCommandBuffers = commands;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &timeline_;
  VkResult result = context_->vk().vkQueueSubmit(context_->queue(), 1, &submit, VK_NULL_HANDLE);
  if (result != VK_SUCCESS) {
    unlaunch(command_buffers.size());
    return context_->WorkResult(result);
  }
  last_ticket_ = value;
  *ticket = value;
  return true;
}

Status VulkanQueue::Await(uint64_t ticket, std::span<const Ref<hal::CommandBuffer>> command_buffers,
                          std::chrono::steady_clock::time_point deadline) {
  auto wait_info = VkMake<VkSemaphoreWaitInfo>(VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO);
  wait_info.semaphoreCount = 1;
  wait_info.pSemaphores = &timeline_;
  wait_info.pValues = &ticket;
  bool missed_deadline;
  Status status = context_->WaitForWork(
      deadline,
      [&](uint64_t timeout) { return context_->vk().vkWaitSemaphores(context_->device(), &wait_info, timeout); },
      &missed_deadline);
  // Every command buffer leaves flight, whatever happened; the first failed
  // check counts when the device did its work.
  for (const Ref<hal::CommandBuffer>& command_buffer : command_buffers) {
    const auto& vulkan_command_buffer = static_cast<const VulkanCommandBuffer&>(*command_buffer);
    if (status.ok()) {
      status = vulkan_command_buffer.Finish();
    } else {
      vulkan_command_buffer.Unlaunch();
    }
  }
  if (status.ok() && missed_deadline) return VulkanContext::RanPastDeadline(deadline, "");
  return status;
}

// ---------------------------------------------------------------------------
// VulkanDevice

VulkanDevice::VulkanDevice(hal::DeviceInfo info, std::shared_ptr<VulkanContext> context,
                           Ref<VulkanAllocator> allocator, std::shared_ptr<VulkanQueue> queue)
    : Device(std::move(info), allocator),
      context_(std::move(context)),
      allocator_(std::move(allocator)),
      queue_(std::move(queue)) {}

VulkanDevice::~VulkanDevice() { queue_->Shutdown(); }

StatusOr<Ref<hal::CommandBuffer>> VulkanDevice::CreateCommandBuffer() {
  return Ref<hal::CommandBuffer>(MakeRef<VulkanCommandBuffer>(context_, allocator_, info().limits));
}

StatusOr<Ref<hal::Semaphore>> VulkanDevice::CreateSemaphore(uint64_t initial_value) {
  return Ref<hal::Semaphore>(MakeRef<hal::HostSemaphore>(&kVulkanFamily, initial_value));
}

StatusOr<Ref<hal::Executable>> VulkanDevice::PrepareExecutableImpl(const hal::ExecutableParams& params) {
  STRATA_ASSIGN_OR_RETURN(Ref<VulkanExecutable> executable, VulkanExecutable::Create(context_, params));
  return Ref<hal::Executable>(std::move(executable));
}

Status VulkanDevice::QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits,
                                      std::span<const hal::SemaphoreValue> signals,
                                      std::span<hal::CommandBuffer* const> command_buffers,
                                      std::chrono::steady_clock::time_point deadline) {
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    if (static_cast<const VulkanCommandBuffer*>(command_buffers[i])->context() != context_.get()) {
      return InvalidArgumentError("submit: command buffer ", i, " was created by another Vulkan device than '",
                                  info().name, "'");
    }
  }
  return queue_->Submit(waits, signals, command_buffers, tracer(), deadline);
}

// ---------------------------------------------------------------------------
// Registration

namespace {

StatusOr<Ref<hal::Device>> CreateVulkanDevice(const hal::DeviceSpec& spec) {
  STRATA_RETURN_IF_ERROR(spec.CheckKnownOptions({"device", "validation", "max_allocation", "push_descriptors", "unified_memory",
                                                "robust_buffer_access", "pipelined", "pipeline_statistics"}));
  ContextOptions options;
  for (const auto& [key, value] : spec.options()) {
    if (key == "device") options.device = value;
  }
  STRATA_ASSIGN_OR_RETURN(int64_t validation, spec.GetInt("validation", 0, 0, 1));
  STRATA_ASSIGN_OR_RETURN(int64_t push_descriptors, spec.GetInt("push_descriptors", 1, 0, 1));
  STRATA_ASSIGN_OR_RETURN(int64_t max_allocation,
                          spec.GetInt("max_allocation", INT64_MAX, 1, INT64_MAX));
  STRATA_ASSIGN_OR_RETURN(int64_t unified_memory, spec.GetInt("unified_memory", 1, 0, 1));
  STRATA_ASSIGN_OR_RETURN(int64_t robust, spec.GetInt("robust_buffer_access", 1, 0, 1));
  STRATA_ASSIGN_OR_RETURN(int64_t pipelined, spec.GetInt("pipelined", 1, 0, 1));
  STRATA_ASSIGN_OR_RETURN(int64_t statistics, spec.GetInt("pipeline_statistics", 0, 0, 1));
  options.validation = validation != 0;
  options.robust_buffer_access = robust != 0;
  options.push_descriptors = push_descriptors != 0;
  options.pipeline_statistics = statistics != 0;
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<VulkanContext> context, VulkanContext::Create(options));
  STRATA_ASSIGN_OR_RETURN(Ref<VulkanAllocator> allocator,
                          VulkanAllocator::Create(context, static_cast<uint64_t>(max_allocation),
                                                  unified_memory != 0));
  hal::DeviceInfo info;
  info.name = spec.spec();
  info.driver = spec.driver();
  info.description = context->Describe();
  info.executable_formats = {kVulkanSpirvFormat};
  const VkPhysicalDeviceLimits& limits = context->limits();
  info.limits.min_binding_alignment = limits.minStorageBufferOffsetAlignment;
  for (int d = 0; d < 3; ++d) info.limits.max_workgroup_count[d] = limits.maxComputeWorkGroupCount[d];
  // Vulkan does not say how many workgroups run at once.
  info.concurrency = 1;
  info.details = context->Details();
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<VulkanQueue> queue,
                          VulkanQueue::Create(info.name, context, pipelined != 0));
  return Ref<hal::Device>(
      MakeRef<VulkanDevice>(std::move(info), std::move(context), std::move(allocator), std::move(queue)));
}

}  // namespace

Status RegisterVulkanDriver(hal::DriverRegistry& registry) {
  return registry.Register({"vulkan",
                            "Vulkan GPU, or Mesa's lavapipe on the CPU, through the Vulkan loader found at run time "
                            "(options: device=INDEX|NAME, validation=1, max_allocation=BYTES, push_descriptors=0, "
                            "unified_memory=0, robust_buffer_access=0, pipelined=0)",
                            CreateVulkanDevice});
}

}  // namespace strata::vulkan
