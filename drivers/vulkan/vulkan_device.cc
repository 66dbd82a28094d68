#include "drivers/vulkan/vulkan_device.h"

#include "drivers/vulkan/vulkan_command_buffer.h"
#include "drivers/vulkan/vulkan_executable.h"
#include "hal/host_semaphore.h"

namespace strata::vulkan {

// ---------------------------------------------------------------------------
// VulkanQueue

StatusOr<std::shared_ptr<VulkanQueue>> VulkanQueue::Create(std::string device_name,
                                                           std::shared_ptr<VulkanContext> context) {
  auto fence_info = VkMake<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  VkFence fence;
  VkResult result = context->vk().vkCreateFence(context->device(), &fence_info, nullptr, &fence);
  if (result != VK_SUCCESS) return VkError(result, "vulkan: vkCreateFence");
  return std::shared_ptr<VulkanQueue>(new VulkanQueue(std::move(device_name), std::move(context), fence));
}

VulkanQueue::VulkanQueue(std::string device_name, std::shared_ptr<VulkanContext> context, VkFence fence)
    : ThreadedHostQueue(std::move(device_name)), context_(std::move(context)), fence_(fence) {}

VulkanQueue::~VulkanQueue() { context_->vk().vkDestroyFence(context_->device(), fence_, nullptr); }

Status VulkanQueue::Execute(hal::CommandBuffer& command_buffer, Tracer* tracer,
                            std::chrono::steady_clock::time_point deadline) {
  // QueueExecute admitted only command buffers of this device's context.
  return static_cast<const VulkanCommandBuffer&>(command_buffer).Execute(fence_, tracer, deadline);
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
                                                "robust_buffer_access"}));
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
  options.validation = validation != 0;
  options.robust_buffer_access = robust != 0;
  options.push_descriptors = push_descriptors != 0;
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
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<VulkanQueue> queue, VulkanQueue::Create(info.name, context));
  return Ref<hal::Device>(
      MakeRef<VulkanDevice>(std::move(info), std::move(context), std::move(allocator), std::move(queue)));
}

}  // namespace

Status RegisterVulkanDriver(hal::DriverRegistry& registry) {
  return registry.Register({"vulkan",
                            "Vulkan GPU, or Mesa's lavapipe on the CPU, through the Vulkan loader found at run time "
                            "(options: device=INDEX|NAME, validation=1, max_allocation=BYTES, push_descriptors=0, "
                            "unified_memory=0, robust_buffer_access=0)",
                            CreateVulkanDevice});
}

}  // namespace strata::vulkan
