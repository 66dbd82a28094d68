// Device: one instance of a driver, with an allocator and a queue.
//
// A device is created through the DriverRegistry ("cpu-task?threads=2"). It
// describes itself (DeviceInfo: name, driver, the executable formats it runs,
// its limits), owns an Allocator, creates command buffers and semaphores,
// prepares executables, and runs submissions on its queue.
//
// Queue submission (QueueExecute): a submission waits until every (semaphore,
// value) of its wait list is reached, runs its command buffers in order, then
// signals every (semaphore, value) of its signal list. Submissions are ordered
// only by their semaphores, as in IREE: two submissions with no semaphore
// between them may run concurrently. QueueExecute itself only reports invalid
// submissions (a command buffer not ended, a resource of another driver
// family); errors while the work runs, such as a kernel returning failure, fail
// the signal semaphores with the original error and reach whoever waits on
// them. That holds on synchronous drivers too, so programs behave alike on all.
// Where the work runs is the driver's choice: a CPU driver runs a ready
// submission before QueueExecute returns (cpu-sync alone, cpu-task with its
// workers), a GPU driver hands it to the device.
//
// Statistics and tracing, both off by default: with statistics enabled
// (set_statistics_enabled) a device counts the submissions it accepts and the
// dispatches they carry, and its allocator the bytes it allocates; while a
// tracer is installed (set_tracer, vm/base/trace.h) it reports each submission as
// it is made and the device work of each submission as it runs: the
// submission and every dispatch in it, on the threads that run them. Off,
// each costs one relaxed load and a predicted branch per submission (and per
// command, for the tracer); on, statistics cost two atomic additions per
// submission.
//
// Ownership: a RefObject. Buffers, executables, command buffers and semaphores
// do not keep their device alive and remain valid after it is destroyed
// (submitting them needs a live device, of course). Destroying a device waits
// for the work it is running; submissions still waiting on semaphores at that
// point fail their signal semaphores when their waits complete, with a message
// saying the device was destroyed.
//
// Thread safety: every method is thread-safe; several threads may record and
// submit at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/allocator.h"
#include "hal/command_buffer.h"
#include "hal/executable.h"
#include "hal/semaphore.h"
#include "vm/base/ref.h"
#include "vm/base/status.h"
#include "vm/base/trace.h"

namespace strata::hal {

struct DeviceInfo {
  std::string name;         // as created, with options: "cpu-task?threads=2"
  std::string driver;       // "cpu-task"
  std::string description;  // one line for humans: "CPU, 2 worker threads (oneTBB)"
  // Executable formats the device prepares, in order of preference.
  std::vector<std::string> executable_formats;
  DeviceLimits limits;
  // How many workgroups the device runs at once (worker threads, compute units).
  uint32_t concurrency = 1;
  // More for humans, one line each (`run-module --list-devices`): memory,
  // limits, features. May be empty.
  std::vector<std::string> details;
};

struct DeviceStatistics {
  uint64_t submissions = 0;  // QueueExecute calls accepted
  uint64_t dispatches = 0;   // dispatches in the command buffers they submitted
};

class Device : public RefObject {
 public:
  static const RefTypeInfo kType;  // "hal.device"

  const DeviceInfo& info() const { return info_; }
  // Borrowed; lives as long as the device (or longer, if retained).
  Allocator* allocator() const { return allocator_.get(); }
  bool SupportsExecutableFormat(std::string_view format) const;

  virtual StatusOr<Ref<CommandBuffer>> CreateCommandBuffer() = 0;
  // A command buffer whose recorder promises what a compiled program's
  // command buffers keep to: it is submitted once, right after End, waiting
  // on nothing, and nothing else reads or writes the bytes its commands
  // touch between Begin and the end of that submission. The device may then
  // run its commands while they are being recorded (cpu-task with several
  // threads does for command buffers of many commands that would run in
  // order anyway: the rest of the recording overlaps the first commands). A
  // submission of it with waits fails.
  // Devices that do not run commands early return a CreateCommandBuffer()
  // marked streamed (CommandBuffer::streamed).
  virtual StatusOr<Ref<CommandBuffer>> CreateStreamedCommandBuffer();
  // A command buffer whose dispatches may bind slots of a binding table that
  // each submission gives (CommandBuffer::indirect, QueueExecute with
  // binding tables): recorded once, submitted again and again with other
  // buffers. The CPU drivers run it as recorded, putting the table's
  // pointers in place per submission; others record it anew into a command
  // buffer of their own per submission (hal/command_log.h).
  StatusOr<Ref<CommandBuffer>> CreateIndirectCommandBuffer();
  virtual StatusOr<Ref<Semaphore>> CreateSemaphore(uint64_t initial_value) = 0;
  // Fails for a format the device does not support, naming those it does.
  StatusOr<Ref<Executable>> PrepareExecutable(const ExecutableParams& params);

  // Submits `command_buffers` (run in order) to wait on `waits` and signal
  // `signals` (see above). Signal values must be above their semaphores'
  // current values.
  // Work still running at `deadline` stops (a CPU device checks between
  // workgroups) and fails the submission with DEADLINE_EXCEEDED, saying how
  // late it stopped.
  Status QueueExecute(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                      std::span<CommandBuffer* const> command_buffers,
                      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
  // The same, with a binding table per command buffer (an indirect one's
  // slots; empty for others), checked against what each recorded
  // (CommandBuffer::CheckBindingTable). `binding_tables` is empty or has
  // one table per command buffer.
  Status QueueExecute(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                      std::span<CommandBuffer* const> command_buffers,
                      std::span<const std::span<const BufferBinding>> binding_tables,
                      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

  // Counts submissions and dispatches from now on, and the allocator's
  // allocations (Allocator::set_statistics_enabled); false stops counting.
  void set_statistics_enabled(bool enabled);
  // What was counted while enabled (a snapshot).
  DeviceStatistics statistics() const;

  // Where submissions made from now on report (null: nowhere, the default).
  // The tracer must outlive the work of every submission made while it is
  // installed.
  void set_tracer(Tracer* tracer) { tracer_.store(tracer, std::memory_order_relaxed); }
  Tracer* tracer() const { return ActiveTracer(tracer_.load(std::memory_order_relaxed)); }

 protected:
  Device(DeviceInfo info, Ref<Allocator> allocator)
      : RefObject(&kType), info_(std::move(info)), allocator_(std::move(allocator)) {}

  // The family whose command buffers this device runs.
  virtual const DriverFamily* family() const = 0;
  // Driver hooks, called with validated arguments. QueueExecuteImpl reports
  // the submission's device work to tracer() as it is at the call.
  virtual StatusOr<Ref<Executable>> PrepareExecutableImpl(const ExecutableParams& params) = 0;
  virtual Status QueueExecuteImpl(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                                  std::span<CommandBuffer* const> command_buffers,
                                  std::chrono::steady_clock::time_point deadline) = 0;
  // Indirect command buffers: by default a CommandLog, replayed into a
  // command buffer of CreateCommandBuffer per submission. A driver that
  // binds tables itself returns its own and runs submissions of them, with
  // their tables (checked), in QueueExecuteIndirectImpl.
  virtual StatusOr<Ref<CommandBuffer>> CreateIndirectCommandBufferImpl();
  virtual Status QueueExecuteIndirectImpl(std::span<const SemaphoreValue> waits,
                                          std::span<const SemaphoreValue> signals,
                                          std::span<CommandBuffer* const> command_buffers,
                                          std::span<const std::span<const BufferBinding>> binding_tables,
                                          std::chrono::steady_clock::time_point deadline);

 private:
  // QueueExecute of command buffers some of which bind slots.
  Status QueueExecuteWithTables(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                                std::span<CommandBuffer* const> command_buffers,
                                std::span<const std::span<const BufferBinding>> binding_tables,
                                std::chrono::steady_clock::time_point deadline);

  DeviceInfo info_;
  Ref<Allocator> allocator_;
  std::atomic<Tracer*> tracer_{nullptr};
  std::atomic<bool> statistics_enabled_{false};
  std::atomic<uint64_t> submissions_{0};
  std::atomic<uint64_t> dispatches_{0};
};

// Copies `out.size()` bytes of `buffer` from `offset` to host memory: through
// a mapping when the buffer is host-visible and mappable, otherwise through a
// host-visible staging buffer that a transfer on `device`'s queue fills
// (submitted and waited for here).
Status ReadBuffer(Device& device, Buffer& buffer, uint64_t offset, std::span<uint8_t> out);

// Copies `data` into `buffer` at `offset`: through a mapping when the buffer
// is host-visible and mappable, otherwise through a host-visible staging
// buffer copied on `device`'s queue (submitted and waited for here).
Status WriteBuffer(Device& device, Buffer& buffer, uint64_t offset, std::span<const uint8_t> data);

// A new device-local buffer of `device` holding a copy of `data`, for kernels
// to read and write: mappable where that memory is host-visible (the CPU,
// unified memory), written through a staging buffer where it is not (a
// discrete GPU).
StatusOr<Ref<Buffer>> UploadBuffer(Device& device, std::span<const uint8_t> data);

}  // namespace strata::hal
