#include "drivers/cpu/cpu_device.h"

#include <atomic>

#include "drivers/cpu/cpu_buffer.h"
#include "drivers/cpu/cpu_executable.h"
#include "hal/host_semaphore.h"

namespace strata::cpu {

const hal::DriverFamily kCpuFamily = {"cpu"};

CpuDevice::CpuDevice(hal::DeviceInfo info, std::shared_ptr<CpuQueue> queue, uint64_t max_allocation)
    : Device(std::move(info), MakeRef<CpuAllocator>(max_allocation)), queue_(std::move(queue)) {}

StatusOr<uint64_t> CpuMaxAllocation(const hal::DeviceSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(int64_t bytes, spec.GetInt("max_allocation", static_cast<int64_t>(DefaultMaxAllocation()),
                                                     1, static_cast<int64_t>(kMaxAllocation)));
  return static_cast<uint64_t>(bytes);
}

CpuDevice::~CpuDevice() { queue_->Shutdown(); }

StatusOr<Ref<hal::CommandBuffer>> CpuDevice::CreateCommandBuffer() {
  return Ref<hal::CommandBuffer>(MakeRef<CpuCommandBuffer>(info().limits));
}

StatusOr<Ref<hal::CommandBuffer>> CpuDevice::CreateStreamedCommandBuffer() {
  CpuCommandBuffer::Streamer* streamer = tracer() ? nullptr : queue_->streamer();
  auto command_buffer = MakeRef<CpuCommandBuffer>(
      info().limits, streamer ? std::shared_ptr<CpuCommandBuffer::Streamer>(queue_, streamer) : nullptr);
  command_buffer->MarkStreamed();
  return Ref<hal::CommandBuffer>(std::move(command_buffer));
}

StatusOr<Ref<hal::Semaphore>> CpuDevice::CreateSemaphore(uint64_t initial_value) {
  return Ref<hal::Semaphore>(MakeRef<hal::HostSemaphore>(&kCpuFamily, initial_value));
}

StatusOr<Ref<hal::Executable>> CpuDevice::PrepareExecutableImpl(const hal::ExecutableParams& params) {
  STRATA_ASSIGN_OR_RETURN(Ref<CpuExecutable> executable, CpuExecutable::Create(params));
  return Ref<hal::Executable>(std::move(executable));
}

Status CpuDevice::QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits,
                                   std::span<const hal::SemaphoreValue> signals,
                                   std::span<hal::CommandBuffer* const> command_buffers,
                                   std::chrono::steady_clock::time_point deadline) {
  return queue_->Submit(waits, signals, command_buffers, tracer(), deadline);
}

StatusOr<Ref<hal::CommandBuffer>> CpuDevice::CreateIndirectCommandBufferImpl() { return CreateCommandBuffer(); }

Status CpuDevice::QueueExecuteIndirectImpl(std::span<const hal::SemaphoreValue> waits,
                                           std::span<const hal::SemaphoreValue> signals,
                                           std::span<hal::CommandBuffer* const> command_buffers,
                                           std::span<const std::span<const hal::BufferBinding>> binding_tables,
                                           std::chrono::steady_clock::time_point deadline) {
  return queue_->Submit(waits, signals, command_buffers, tracer(), deadline, binding_tables);
}

Status CpuQueue::Execute(hal::CommandBuffer& command_buffer, std::span<const hal::BufferBinding> binding_table,
                         Tracer* tracer, std::chrono::steady_clock::time_point deadline) {
  // HAL::QueueExecute admits only command buffers of the CPU family. A
  // thread runs one command buffer at a time (cpu-sync drains ready
  // submissions in a loop, not recursively), so one storage per thread
  // serves every run on it.
  const auto& commands = static_cast<const CpuCommandBuffer&>(command_buffer);
  thread_local CpuCommandBuffer::BoundStorage storage;
  CpuCommandBuffer::Bindings bindings = commands.Bind(binding_table, &storage);
  bindings.descending = commands.NextRunDescending();
  return ExecuteCommands(commands, bindings, tracer, deadline);
}

hal::DeviceInfo CpuDeviceInfo(const hal::DeviceSpec& spec, std::string description, uint32_t concurrency) {
  hal::DeviceInfo info;
  info.name = spec.spec();
  info.driver = spec.driver();
  info.description = std::move(description);
  info.executable_formats = {HostExecutableFormat()};
  // 16 bytes keeps every binding aligned for the widest scalar and for
  // 128-bit vector loads; workgroup counts follow common GPU limits so that a
  // module runs unchanged on either.
  info.limits.min_binding_alignment = 16;
  info.limits.max_workgroup_count[0] = 0x7FFFFFFF;
  info.limits.max_workgroup_count[1] = 65535;
  info.limits.max_workgroup_count[2] = 65535;
  info.concurrency = concurrency;
  return info;
}

}  // namespace strata::cpu
