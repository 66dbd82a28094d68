#include "hal/device.h"

#include <cstring>

#include "hal/command_log.h"

namespace strata::hal {

const RefTypeInfo Device::kType = {"hal.device"};

bool Device::SupportsExecutableFormat(std::string_view format) const {
  for (const std::string& supported : info_.executable_formats) {
    if (supported == format) return true;
  }
  return false;
}

StatusOr<Ref<Executable>> Device::PrepareExecutable(const ExecutableParams& params) {
  if (!SupportsExecutableFormat(params.format)) {
    return IncompatibleError("executable '", params.name, "': device '", info_.name, "' cannot run format '",
                             params.format, "' (it runs: ",
                             JoinNames(info_.executable_formats, [](const std::string& f) { return f; }), ")");
  }
  return PrepareExecutableImpl(params);
}

StatusOr<Ref<CommandBuffer>> Device::CreateStreamedCommandBuffer() {
  STRATA_ASSIGN_OR_RETURN(Ref<CommandBuffer> command_buffer, CreateCommandBuffer());
  command_buffer->MarkStreamed();
  return command_buffer;
}

StatusOr<Ref<CommandBuffer>> Device::CreateIndirectCommandBuffer() {
  STRATA_ASSIGN_OR_RETURN(Ref<CommandBuffer> command_buffer, CreateIndirectCommandBufferImpl());
  command_buffer->MarkIndirect();
  return command_buffer;
}

StatusOr<Ref<CommandBuffer>> Device::CreateIndirectCommandBufferImpl() {
  return Ref<CommandBuffer>(MakeRef<CommandLog>(family(), info_.limits));
}

Status Device::QueueExecuteIndirectImpl(std::span<const SemaphoreValue>, std::span<const SemaphoreValue>,
                                        std::span<CommandBuffer* const>,
                                        std::span<const std::span<const BufferBinding>>,
                                        std::chrono::steady_clock::time_point) {
  return InternalError("device '", info_.name, "' made its own indirect command buffers but runs no binding tables");
}

Status Device::QueueExecute(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                            std::span<CommandBuffer* const> command_buffers,
                            std::chrono::steady_clock::time_point deadline) {
  return QueueExecute(waits, signals, command_buffers, {}, deadline);
}

Status Device::QueueExecute(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                            std::span<CommandBuffer* const> command_buffers,
                            std::span<const std::span<const BufferBinding>> binding_tables,
                            std::chrono::steady_clock::time_point deadline) {
  Tracer* const tracer = this->tracer();
  const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
  if (!binding_tables.empty() && binding_tables.size() != command_buffers.size()) {
    return InvalidArgumentError("submit: ", binding_tables.size(), " binding tables for ", command_buffers.size(),
                                " command buffers (expected one per command buffer, or none)");
  }
  uint64_t dispatches = 0;
  bool indirect = false;
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    CommandBuffer* command_buffer = command_buffers[i];
    if (!command_buffer) return InvalidArgumentError("submit: command buffer ", i, " is null");
    if (command_buffer->family() != family()) {
      return InvalidArgumentError("submit: command buffer ", i, " was created by a '",
                                  command_buffer->family()->name, "' device; device '", info_.name,
                                  "' runs '", family()->name, "' command buffers");
    }
    STRATA_RETURN_IF_ERROR(command_buffer->CheckSubmittable());
    if (command_buffer->streamed() && !waits.empty()) {
      return FailedPreconditionError("submit: command buffer ", i,
                                     " was created streamed (its commands may run as they are recorded), so "
                                     "its submission cannot wait; got ",
                                     waits.size(), " wait", waits.size() == 1 ? "" : "s");
    }
    dispatches += command_buffer->dispatch_count();
    const size_t table_size = binding_tables.empty() ? 0 : binding_tables[i].size();
    if (table_size && !command_buffer->indirect()) {
      return InvalidArgumentError("submit: command buffer ", i, " is not indirect, so it takes no binding table; got ",
                                  table_size, " entries");
    }
    indirect |= command_buffer->slot_count() != 0;
  }
  for (size_t i = 0; i < waits.size(); ++i) {
    if (!waits[i].semaphore) return InvalidArgumentError("submit: wait semaphore ", i, " is null");
  }
  for (size_t i = 0; i < signals.size(); ++i) {
    if (!signals[i].semaphore) return InvalidArgumentError("submit: signal semaphore ", i, " is null");
    // A failed semaphore passes: the failure reaches its waiters either way.
    StatusOr<uint64_t> current = signals[i].semaphore->Query();
    if (current.ok() && signals[i].value <= *current) {
      return InvalidArgumentError("submit: signal semaphore ", i, " would go from ", *current, " to ",
                                  signals[i].value, "; timeline values must increase");
    }
  }
  if (!indirect) {
    STRATA_RETURN_IF_ERROR(QueueExecuteImpl(waits, signals, command_buffers, deadline));
  } else {
    STRATA_RETURN_IF_ERROR(QueueExecuteWithTables(waits, signals, command_buffers, binding_tables, deadline));
  }
  if (statistics_enabled_.load(std::memory_order_relaxed)) {
    submissions_.fetch_add(1, std::memory_order_relaxed);
    dispatches_.fetch_add(dispatches, std::memory_order_relaxed);
  }
  if (tracer) {
    const TraceArg args[] = {{"waits", static_cast<int64_t>(waits.size())},
                                 {"signals", static_cast<int64_t>(signals.size())},
                                 {"command_buffers", static_cast<int64_t>(command_buffers.size())},
                                 {"dispatches", static_cast<int64_t>(dispatches)}};
    tracer->Record({"submit", "queue.execute", trace_begin, Tracer::Now(), args});
  }
  return OkStatus();
}

Status Device::QueueExecuteWithTables(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                                      std::span<CommandBuffer* const> command_buffers,
                                      std::span<const std::span<const BufferBinding>> binding_tables,
                                      std::chrono::steady_clock::time_point deadline) {
  // A CommandLog's submission runs a command buffer recorded from it now
  // (in `run`, made at the first).
  std::vector<Ref<CommandBuffer>> replayed;
  std::vector<CommandBuffer*> run;
  bool native = false;
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    CommandBuffer* command_buffer = command_buffers[i];
    if (command_buffer->slot_count() == 0) continue;
    const std::span<const BufferBinding> table =
        binding_tables.empty() ? std::span<const BufferBinding>() : binding_tables[i];
    STRATA_RETURN_IF_ERROR(command_buffer->CheckBindingTable(i, table));
    if (const CommandLog* log = command_buffer->AsLog()) {
      STRATA_ASSIGN_OR_RETURN(Ref<CommandBuffer> direct, CreateCommandBuffer());
      STRATA_RETURN_IF_ERROR(log->Replay(*direct, table));
      if (run.empty()) run.assign(command_buffers.begin(), command_buffers.end());
      run[i] = direct.get();
      replayed.push_back(std::move(direct));
    } else {
      native = true;
    }
  }
  const std::span<CommandBuffer* const> submitted = run.empty() ? command_buffers : std::span(run);
  if (!native) return QueueExecuteImpl(waits, signals, submitted, deadline);
  return QueueExecuteIndirectImpl(waits, signals, submitted, binding_tables, deadline);
}

void Device::set_statistics_enabled(bool enabled) {
  statistics_enabled_.store(enabled, std::memory_order_relaxed);
  allocator_->set_statistics_enabled(enabled);
}

DeviceStatistics Device::statistics() const {
  DeviceStatistics statistics;
  statistics.submissions = submissions_.load(std::memory_order_relaxed);
  statistics.dispatches = dispatches_.load(std::memory_order_relaxed);
  return statistics;
}

namespace {

bool Mappable(const Buffer& buffer, MemoryAccesses access) {
  return (buffer.memory_types() & kMemoryHostVisible) && (buffer.usage() & kUsageMapping) &&
         (buffer.allowed_access() & access) == access;
}

// Runs one copy between `from` and `to` on `device`'s queue and waits for it.
Status CopyOnQueue(Device& device, Buffer& from, uint64_t from_offset, Buffer& to, uint64_t to_offset,
                   uint64_t length) {
  STRATA_ASSIGN_OR_RETURN(Ref<CommandBuffer> commands, device.CreateCommandBuffer());
  STRATA_RETURN_IF_ERROR(commands->Begin());
  STRATA_RETURN_IF_ERROR(commands->Copy(&from, from_offset, &to, to_offset, length));
  STRATA_RETURN_IF_ERROR(commands->End());
  STRATA_ASSIGN_OR_RETURN(Ref<Semaphore> done, device.CreateSemaphore(0));
  SemaphoreValue signal{done.get(), 1};
  CommandBuffer* list[] = {commands.get()};
  STRATA_RETURN_IF_ERROR(device.QueueExecute({}, {&signal, 1}, list));
  return done->Wait(1, Semaphore::kInfiniteTimeout);
}

StatusOr<Ref<Buffer>> AllocateStaging(Device& device, BufferUsages transfer, uint64_t length) {
  BufferParams params;
  params.memory_types = kMemoryHostVisible;
  params.usage = transfer | kUsageMapping;
  return device.allocator()->Allocate(params, length);
}

}  // namespace

Status ReadBuffer(Device& device, Buffer& buffer, uint64_t offset, std::span<uint8_t> out) {
  if (out.empty()) return OkStatus();
  if (Mappable(buffer, kAccessRead)) {
    STRATA_ASSIGN_OR_RETURN(MappedRange range, buffer.Map(kAccessRead, offset, out.size()));
    std::memcpy(out.data(), range.bytes().data(), out.size());
    return range.Unmap();
  }
  STRATA_ASSIGN_OR_RETURN(Ref<Buffer> staging, AllocateStaging(device, kUsageTransferTarget, out.size()));
  STRATA_RETURN_IF_ERROR(CopyOnQueue(device, buffer, offset, *staging, 0, out.size()));
  STRATA_ASSIGN_OR_RETURN(MappedRange range, staging->Map(kAccessRead));
  std::memcpy(out.data(), range.bytes().data(), out.size());
  return range.Unmap();
}

StatusOr<Ref<Buffer>> UploadBuffer(Device& device, std::span<const uint8_t> data) {
  BufferParams params;
  params.memory_types = kMemoryDeviceLocal;
  params.usage = kUsageDispatchStorage | kUsageTransferSource | kUsageTransferTarget;
  STRATA_ASSIGN_OR_RETURN(Ref<Buffer> buffer, device.allocator()->Allocate(params, data.size(), kUsageMapping));
  STRATA_RETURN_IF_ERROR(WriteBuffer(device, *buffer, 0, data));
  return buffer;
}

Status WriteBuffer(Device& device, Buffer& buffer, uint64_t offset, std::span<const uint8_t> data) {
  if (data.empty()) return OkStatus();
  if (Mappable(buffer, kAccessWrite)) {
    STRATA_ASSIGN_OR_RETURN(MappedRange range, buffer.Map(kAccessWrite, offset, data.size()));
    std::memcpy(range.bytes().data(), data.data(), data.size());
    return range.Unmap();
  }
  STRATA_ASSIGN_OR_RETURN(Ref<Buffer> staging, AllocateStaging(device, kUsageTransferSource, data.size()));
  {
    STRATA_ASSIGN_OR_RETURN(MappedRange range, staging->Map(kAccessWrite));
    std::memcpy(range.bytes().data(), data.data(), data.size());
    STRATA_RETURN_IF_ERROR(range.Unmap());
  }
  return CopyOnQueue(device, *staging, 0, buffer, offset, data.size());
}

}  // namespace strata::hal
