// HostQueue: the bookkeeping of a queue whose submissions are started by host
// threads, shared by the CPU drivers and the GPU drivers (Vulkan, CUDA).
//
// A submission registers a timepoint on each wait semaphore, becomes ready
// when the last one fires, is scheduled (where it runs is the driver's
// choice: inline, a task arena, a queue thread), runs its command buffers,
// releases what it held and then signals (or fails) its signal semaphores.
// Submissions are pooled, so steady-state submission does not allocate, and
// the hot path takes no lock that a thread could sleep on.
//
// Lifetime: each submission holds a reference to its queue, so a queue
// outlives its device while work of it is pending. The device's destructor
// shuts the queue down: it waits for scheduled and running work (and work
// that becomes ready meanwhile); submissions whose waits complete after that
// fail with UNAVAILABLE.
//
// ThreadedHostQueue is a HostQueue whose ready submissions run, one at a
// time and in the order they became ready, on a thread of its own: the GPU
// drivers' queues, where that thread waits for the device while the
// submitting threads go on.
//
// Thread safety: Submit and Shutdown are thread-safe; see hal/device.h.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hal/command_buffer.h"
#include "hal/semaphore.h"
#include "hal/spin.h"
#include "vm/base/trace.h"

namespace strata::hal {

struct HostSubmission;

class HostQueue : public std::enable_shared_from_this<HostQueue> {
 public:
  explicit HostQueue(std::string device_name) : device_name_(std::move(device_name)) {}
  virtual ~HostQueue();

  // `tracer` (may be null) receives the submission's events as it runs.
  // Work still running at `deadline` stops as the driver can (Execute).
  Status Submit(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                std::span<CommandBuffer* const> command_buffers, Tracer* tracer,
                std::chrono::steady_clock::time_point deadline);
  // Waits for every submission that is ready or running (including those that
  // become ready meanwhile); submissions whose waits complete later fail.
  // Called by the device's destructor.
  virtual void Shutdown();

  const std::string& device_name() const { return device_name_; }

 protected:
  // Called once per submission when its waits are met, on the thread that
  // met the last one; must lead to exactly one Run(submission).
  virtual void Schedule(HostSubmission* submission) = 0;
  // Runs one command buffer (of the driver's family), reporting its commands
  // to `tracer` when it is not null and stopping as soon as it can once
  // `deadline` passes.
  virtual Status Execute(CommandBuffer& command_buffer, Tracer* tracer,
                         std::chrono::steady_clock::time_point deadline) = 0;
  // Executes a scheduled submission, then completes it.
  void Run(HostSubmission* submission);

 private:
  static void OnWaitDone(Timepoint* timepoint, const Status& status);
  // Counts down the submission's outstanding waits; the last one schedules it.
  void WaitDone(HostSubmission* submission);
  // Releases what the submission holds, then signals or fails its signal
  // semaphores with `status`.
  static void Complete(HostSubmission* submission, const Status& status);
  void Recycle(HostSubmission* submission);

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
  std::vector<HostSubmission*> free_submissions_;
};

class ThreadedHostQueue : public HostQueue {
 public:
  // Shutdown joined the thread, unless the queue is destroyed on that thread
  // itself (its device's last reference dropped by a callback there): then
  // the thread is detached and ends on its own.
  ~ThreadedHostQueue() override;
  // Waits for scheduled and running work, then stops the thread.
  void Shutdown() override;

 protected:
  // Starts the thread, which runs submissions once the queue is fully
  // constructed and shared (Submit needs both).
  explicit ThreadedHostQueue(std::string device_name);
  void Schedule(HostSubmission* submission) final;

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable ready_condition_;
  std::deque<HostSubmission*> ready_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::hal
