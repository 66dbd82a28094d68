#include "drivers/stream/stream_device.h"

#include "drivers/stream/stream_command_buffer.h"
#include "drivers/stream/stream_executable.h"
#include "hal/host_semaphore.h"

namespace strata::stream {

// ---------------------------------------------------------------------------
// StreamDevice

Status StreamQueue::Execute(hal::CommandBuffer& command_buffer, std::span<const hal::BufferBinding> binding_table,
                            Tracer* tracer, std::chrono::steady_clock::time_point deadline) {
  // QueueExecute admitted only command buffers of this device's context,
  // and only tables that fit them.
  return static_cast<const StreamCommandBuffer&>(command_buffer).Execute(binding_table, tracer, deadline);
}

StreamDevice::StreamDevice(hal::DeviceInfo info, std::shared_ptr<StreamContext> context,
                           Ref<StreamAllocator> allocator, std::shared_ptr<StreamQueue> queue, bool graphs)
    : Device(std::move(info), allocator),
      context_(std::move(context)),
      allocator_(std::move(allocator)),
      queue_(std::move(queue)),
      graphs_(graphs) {}

StreamDevice::~StreamDevice() { queue_->Shutdown(); }

StatusOr<Ref<hal::CommandBuffer>> StreamDevice::CreateCommandBuffer() {
  return Ref<hal::CommandBuffer>(MakeRef<StreamCommandBuffer>(context_, allocator_, info().limits, graphs_));
}

StatusOr<Ref<hal::Semaphore>> StreamDevice::CreateSemaphore(uint64_t initial_value) {
  return Ref<hal::Semaphore>(MakeRef<hal::HostSemaphore>(context_->family(), initial_value));
}

StatusOr<Ref<hal::Executable>> StreamDevice::PrepareExecutableImpl(const hal::ExecutableParams& params) {
  STRATA_ASSIGN_OR_RETURN(Ref<StreamExecutable> executable, context_->LoadExecutable(params));
  return Ref<hal::Executable>(std::move(executable));
}

StatusOr<Ref<hal::CommandBuffer>> StreamDevice::CreateIndirectCommandBufferImpl() { return CreateCommandBuffer(); }

Status StreamDevice::CheckOwnCommandBuffers(std::span<hal::CommandBuffer* const> command_buffers) const {
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    if (static_cast<const StreamCommandBuffer*>(command_buffers[i])->context() != context_.get()) {
      return InvalidArgumentError("submit: command buffer ", i, " was created by another ", context_->family()->name,
                                  " device than '", info().name, "'");
    }
  }
  return OkStatus();
}

Status StreamDevice::QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits,
                                      std::span<const hal::SemaphoreValue> signals,
                                      std::span<hal::CommandBuffer* const> command_buffers,
                                      std::chrono::steady_clock::time_point deadline) {
  STRATA_RETURN_IF_ERROR(CheckOwnCommandBuffers(command_buffers));
  return queue_->Submit(waits, signals, command_buffers, tracer(), deadline);
}

Status StreamDevice::QueueExecuteIndirectImpl(std::span<const hal::SemaphoreValue> waits,
                                              std::span<const hal::SemaphoreValue> signals,
                                              std::span<hal::CommandBuffer* const> command_buffers,
                                              std::span<const std::span<const hal::BufferBinding>> binding_tables,
                                              std::chrono::steady_clock::time_point deadline) {
  STRATA_RETURN_IF_ERROR(CheckOwnCommandBuffers(command_buffers));
  return queue_->Submit(waits, signals, command_buffers, tracer(), deadline, binding_tables);
}

StatusOr<StreamDeviceOptions> ReadStreamDeviceOptions(const hal::DeviceSpec& spec) {
  STRATA_RETURN_IF_ERROR(spec.CheckKnownOptions({"device", "graphs"}));
  StreamDeviceOptions options;
  for (const auto& [key, value] : spec.options()) {
    if (key == "device") options.device = value;
  }
  STRATA_ASSIGN_OR_RETURN(int64_t graphs, spec.GetInt("graphs", 1, 0, 1));
  options.graphs = graphs != 0;
  return options;
}

StatusOr<Ref<hal::Device>> CreateStreamDevice(const hal::DeviceSpec& spec, std::shared_ptr<StreamContext> context,
                                              bool graphs) {
  STRATA_ASSIGN_OR_RETURN(Ref<StreamAllocator> allocator, StreamAllocator::Create(context));
  const DeviceFacts& facts = context->facts();
  hal::DeviceInfo info;
  info.name = spec.spec();
  info.driver = spec.driver();
  info.description = context->Describe();
  info.executable_formats = {context->executable_format()};
  info.limits.min_binding_alignment = kBindingAlignment;
  for (int d = 0; d < 3; ++d) info.limits.max_workgroup_count[d] = facts.max_grid_dim[d];
  info.concurrency = facts.multiprocessors;
  info.details = context->Details();
  auto queue = std::make_shared<StreamQueue>(info.name);
  return Ref<hal::Device>(MakeRef<StreamDevice>(std::move(info), std::move(context), std::move(allocator),
                                                std::move(queue), graphs));
}

}  // namespace strata::stream
