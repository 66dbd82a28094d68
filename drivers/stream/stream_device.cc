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

StreamQueue::~StreamQueue() {
  // The device's destructor shut the queue down: nothing is in flight.
  const bool current = context_->MakeCurrent().ok();
  for (EventHandle event : free_events_) {
    if (current) context_->DestroyEvent(event);
  }
}

StatusOr<bool> StreamQueue::Launch(std::span<const Ref<hal::CommandBuffer>> command_buffers,
                                   std::span<const std::span<const hal::BufferBinding>> binding_tables,
                                   uint64_t* ticket) {
  auto stream = [&](size_t i) -> const StreamCommandBuffer& {
    return static_cast<const StreamCommandBuffer&>(*command_buffers[i]);
  };
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    if (!stream(i).Launchable()) return false;
    // The same command buffer twice: its launches would share its check
    // words.
    for (size_t j = 0; j < i; ++j) {
      if (command_buffers[j].get() == command_buffers[i].get()) return false;
    }
  }
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  EventHandle event = nullptr;
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    if (!free_events_.empty()) {
      event = free_events_.back();
      free_events_.pop_back();
    }
  }
  if (!event) {
    STRATA_ASSIGN_OR_RETURN(event, context_->CreateEvent());
  }
  // On a failure, what was launched finishes first (it uses what the
  // submission holds), and nothing stays launched.
  auto undo = [&](size_t launched, Status status) {
    bool sticky = false;
    context_->Synchronize(&sticky).IgnoreError();
    for (size_t i = 0; i < launched; ++i) stream(i).FinishLaunch(status, false).IgnoreError();
    std::lock_guard<std::mutex> lock(events_mutex_);
    free_events_.push_back(event);
    return status;
  };
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    Status launched = stream(i).Launch(binding_tables.empty() ? std::span<const hal::BufferBinding>()
                                                               : binding_tables[i]);
    if (!launched.ok()) return undo(i, launched);
  }
  if (Status recorded = context_->RecordEvent(event); !recorded.ok()) {
    return undo(command_buffers.size(), recorded.Annotate("submit: "));
  }
  *ticket = ++last_ticket_;
  std::lock_guard<std::mutex> lock(events_mutex_);
  in_flight_.emplace_back(*ticket, event);
  return true;
}

Status StreamQueue::Await(uint64_t ticket, std::span<const Ref<hal::CommandBuffer>> command_buffers,
                          std::chrono::steady_clock::time_point deadline) {
  EventHandle event = nullptr;
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    // Awaited in launch order.
    if (in_flight_.empty() || in_flight_.front().first != ticket) {
      return InternalError("queue of '", device_name(), "': awaiting launch ", ticket, " out of order");
    }
    event = in_flight_.front().second;
    in_flight_.pop_front();
  }
  bool sticky = false;
  Status waited = context_->MakeCurrent();
  if (waited.ok()) waited = context_->WaitEvent(event, &sticky);
  Status status;
  for (const Ref<hal::CommandBuffer>& command_buffer : command_buffers) {
    Status finished = static_cast<const StreamCommandBuffer&>(*command_buffer).FinishLaunch(waited, sticky);
    if (status.ok()) status = finished;
  }
  if (status.ok() && !waited.ok()) status = waited;  // no command buffer to name
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    free_events_.push_back(event);
  }
  if (status.ok() && deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() > deadline) {
    const double late = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - deadline).count();
    return DeadlineExceededError("the submission was still running at the call's deadline and finished ", late,
                                 " ms after it (a GPU cannot stop a running kernel)");
  }
  return status;
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
  STRATA_RETURN_IF_ERROR(spec.CheckKnownOptions({"device", "graphs", "pipelined"}));
  StreamDeviceOptions options;
  for (const auto& [key, value] : spec.options()) {
    if (key == "device") options.device = value;
  }
  STRATA_ASSIGN_OR_RETURN(int64_t graphs, spec.GetInt("graphs", 1, 0, 1));
  options.graphs = graphs != 0;
  STRATA_ASSIGN_OR_RETURN(int64_t pipelined, spec.GetInt("pipelined", 1, 0, 1));
  options.pipelined = pipelined != 0;
  return options;
}

StatusOr<Ref<hal::Device>> CreateStreamDevice(const hal::DeviceSpec& spec, std::shared_ptr<StreamContext> context,
                                              const StreamDeviceOptions& options) {
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
  auto queue = std::make_shared<StreamQueue>(info.name, context, options.pipelined);
  return Ref<hal::Device>(MakeRef<StreamDevice>(std::move(info), std::move(context), std::move(allocator),
                                                std::move(queue), options.graphs));
}

}  // namespace strata::stream
