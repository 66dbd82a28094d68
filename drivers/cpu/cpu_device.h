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
// The CpuQueue does the bookkeeping both share: a submission registers a
// timepoint on each wait semaphore, becomes ready when the last one fires,
// runs, releases what it held and then signals (or fails) its signal
// semaphores. Submissions are pooled, so steady-state submission does not
// allocate, and the hot path takes no lock that a thread could sleep on.
//
// Lifetime: each submission holds a reference to its queue, so a queue
// outlives the device while work of it is pending. The device's destructor
// shuts the queue down: it waits for scheduled and running work (and work
// that becomes ready meanwhile); submissions whose waits complete after that
// fail with UNAVAILABLE.
//
// Thread safety: see hal/device.h.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drivers/cpu/cpu_command_buffer.h"
#include "drivers/cpu/spin.h"
#include "hal/device.h"
#include "hal/driver_registry.h"

namespace strata::cpu {

// The family of every CPU object: cpu-sync and cpu-task accept each other's.
extern const hal::DriverFamily kCpuFamily;

struct Submission;

class CpuQueue : public std::enable_shared_from_this<CpuQueue> {
 public:
  explicit CpuQueue(std::string device_name) : device_name_(std::move(device_name)) {}
  virtual ~CpuQueue();

  // `tracer` (may be null) receives the submission's events as it runs.
  // Dispatches still running at `deadline` stop between workgroups.
  Status Submit(std::span<const hal::SemaphoreValue> waits, std::span<const hal::SemaphoreValue> signals,
                std::span<hal::CommandBuffer* const> command_buffers, vm::Tracer* tracer,
                std::chrono::steady_clock::time_point deadline);
  // Waits for every submission that is ready or running (including those that
  // become ready meanwhile); submissions whose waits complete later fail.
  // Called by the device's destructor.
  virtual void Shutdown();

 protected:
  // Called once per submission when its waits are met, on the thread that
  // met the last one; must lead to exactly one Run(submission).
  virtual void Schedule(Submission* submission) = 0;
  // Runs one command buffer's commands, reporting each to `tracer` when it
  // is not null; a dispatch stops between workgroups once `deadline` passes.
  virtual Status Execute(const CpuCommandBuffer& command_buffer, vm::Tracer* tracer,
                         std::chrono::steady_clock::time_point deadline) = 0;
  // Executes a scheduled submission, then completes it.
  void Run(Submission* submission);

 private:
  static void OnWaitDone(hal::Timepoint* timepoint, const Status& status);
  // Counts down the submission's outstanding waits; the last one schedules it.
  void WaitDone(Submission* submission);
  // Releases what the submission holds, then signals or fails its signal
  // semaphores with `status`.
  static void Complete(Submission* submission, const Status& status);
  void Recycle(Submission* submission);

  // The number of scheduled or running submissions, and two flags, in one
  // word so that scheduling checks "closed" and counts itself atomically
  // without a lock.
  static constexpr uint64_t kClosed = uint64_t{1} << 63;
  static constexpr uint64_t kShuttingDown = uint64_t{1} << 62;

  const std::string device_name_;
  std::atomic<uint64_t> state_{0};
  std::mutex shutdown_mutex_;
  std::condition_variable idle_;
  SpinLock pool_lock_;
  std::vector<Submission*> free_submissions_;
};

class CpuDevice final : public hal::Device {
 public:
  // Allocations above `max_allocation` bytes fail with RESOURCE_EXHAUSTED.
  CpuDevice(hal::DeviceInfo info, std::shared_ptr<CpuQueue> queue, uint64_t max_allocation);
  ~CpuDevice() override;

  StatusOr<vm::Ref<hal::CommandBuffer>> CreateCommandBuffer() override;
  StatusOr<vm::Ref<hal::Semaphore>> CreateSemaphore(uint64_t initial_value) override;

 protected:
  const hal::DriverFamily* family() const override { return &kCpuFamily; }
  StatusOr<vm::Ref<hal::Executable>> PrepareExecutableImpl(const hal::ExecutableParams& params) override;
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
