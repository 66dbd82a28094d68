// The CPU drivers: cpu-sync and cpu-task.
//
// Both share every object (buffers, executables, command buffers, semaphores:
// the "cpu" driver family) and one device class; they differ only in their
// queue, the CpuQueue that decides where submitted work runs:
//
//   cpu-sync  runs each submission on the thread that makes it ready: the
//             submitting thread when its waits are already met, otherwise the
//             thread that signals its last wait. No threads of its own; the
//             smallest useful runtime.
//   cpu-task  hands ready submissions to a oneTBB task arena with a fixed
//             number of worker threads ("cpu-task?threads=2"), which spreads
//             the workgroups of each dispatch, and the commands between two
//             barriers, over the workers.
//
// The CpuQueue is hal::HostQueue (hal/host_queue.h): submissions wait on
// semaphore timepoints, run when ready, then signal or fail; the device's
// destructor shuts the queue down.
//
// Thread safety: see hal/device.h.
#pragma once

#include <chrono>
#include <memory>

#include "drivers/cpu/cpu_command_buffer.h"
#include "hal/device.h"
#include "hal/driver_registry.h"
#include "hal/host_queue.h"

namespace strata::cpu {

// The family of every CPU object: cpu-sync and cpu-task accept each other's.
extern const hal::DriverFamily kCpuFamily;

// The queue of both CPU drivers: hal::HostQueue's bookkeeping, running CPU
// command buffers.
class CpuQueue : public hal::HostQueue {
 public:
  using HostQueue::HostQueue;

  // What runs streamed command buffers' commands as they are recorded
  // (CpuCommandBuffer::Streamer), if this queue does; lives as long as the
  // queue.
  virtual CpuCommandBuffer::Streamer* streamer() { return nullptr; }

 protected:
  // Runs one command buffer's commands with `bindings` (its own, or bound
  // to the submission's binding table), reporting each to `tracer` when it
  // is not null; a dispatch stops between workgroups once `deadline` passes.
  virtual Status ExecuteCommands(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Bindings& bindings,
                                 Tracer* tracer, std::chrono::steady_clock::time_point deadline) = 0;

 private:
  Status Execute(hal::CommandBuffer& command_buffer, std::span<const hal::BufferBinding> binding_table,
                 Tracer* tracer, std::chrono::steady_clock::time_point deadline) final;
};

class CpuDevice final : public hal::Device {
 public:
  // Allocations above `max_allocation` bytes fail with RESOURCE_EXHAUSTED.
  CpuDevice(hal::DeviceInfo info, std::shared_ptr<CpuQueue> queue, uint64_t max_allocation);
  ~CpuDevice() override;

  StatusOr<Ref<hal::CommandBuffer>> CreateCommandBuffer() override;
  // Given the queue's streamer unless the device is traced (a helper running
  // commands before their submission would leave them out of the trace).
  StatusOr<Ref<hal::CommandBuffer>> CreateStreamedCommandBuffer() override;
  StatusOr<Ref<hal::Semaphore>> CreateSemaphore(uint64_t initial_value) override;

 protected:
  // Indirect command buffers are CPU command buffers: a submission puts its
  // table's pointers in place of the slots (CpuCommandBuffer::Bind).
  StatusOr<Ref<hal::CommandBuffer>> CreateIndirectCommandBufferImpl() override;
  Status QueueExecuteIndirectImpl(std::span<const hal::SemaphoreValue> waits,
                                  std::span<const hal::SemaphoreValue> signals,
                                  std::span<hal::CommandBuffer* const> command_buffers,
                                  std::span<const std::span<const hal::BufferBinding>> binding_tables,
                                  std::chrono::steady_clock::time_point deadline) override;
  const hal::DriverFamily* family() const override { return &kCpuFamily; }
  StatusOr<Ref<hal::Executable>> PrepareExecutableImpl(const hal::ExecutableParams& params) override;
  Status QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits, std::span<const hal::SemaphoreValue> signals,
                          std::span<hal::CommandBuffer* const> command_buffers,
                          std::chrono::steady_clock::time_point deadline) override;

 private:
  std::shared_ptr<CpuQueue> queue_;
};

// The spec's max_allocation=BYTES (both CPU drivers take it), by default the
// machine's physical memory.
StatusOr<uint64_t> CpuMaxAllocation(const hal::DeviceSpec& spec);

// What both CPU devices report about themselves.
hal::DeviceInfo CpuDeviceInfo(const hal::DeviceSpec& spec, std::string description, uint32_t concurrency);

// Registration, called by drivers/registry.cc.
Status RegisterSyncDriver(hal::DriverRegistry& registry);
Status RegisterTaskDriver(hal::DriverRegistry& registry);

}  // namespace strata::cpu
