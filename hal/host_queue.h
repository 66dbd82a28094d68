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
// Pipelined: a ThreadedHostQueue whose driver can start work on the device
// without waiting for it (Launch: Vulkan, whose queue runs submissions in
// order) hands launched submissions to a second thread, which waits for each
// in turn (Await) and completes it, while the first launches the next one:
// the device has the next submission queued when it finishes one, instead of
// idling until the host has seen the end of it and submitted again. Since
// launched work runs in order, a submission's wait on a semaphore that work
// scheduled earlier on the same queue signals is left to that order
// (Semaphore::NoteScheduledSignal) rather than to a timepoint, so a chain of
// dependent submissions is launched back to back too; if the earlier work
// fails, the later one fails with its error when it completes (its own
// signals fail in turn). A submission that must run through Execute (a
// command buffer Launch cannot start, a traced submission, one whose
// deadline has passed) waits for the work in flight first.
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
  // `in_order`: the queue runs submissions in the order Schedule sees them,
  // so they may leave waits to that order (see ThreadedHostQueue).
  explicit HostQueue(std::string device_name, bool in_order = false)
      : in_order_(in_order), device_name_(std::move(device_name)) {}
  virtual ~HostQueue();

  // `tracer` (may be null) receives the submission's events as it runs.
  // Work still running at `deadline` stops as the driver can (Execute).
  // `binding_tables`: none, or one per command buffer (checked by
  // Device::QueueExecute), held until the work is done.
  Status Submit(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                std::span<CommandBuffer* const> command_buffers, Tracer* tracer,
                std::chrono::steady_clock::time_point deadline,
                std::span<const std::span<const BufferBinding>> binding_tables = {});
  // Waits for every submission that is ready or running (including those that
  // become ready meanwhile); submissions whose waits complete later fail.
  // Called by the device's destructor.
  virtual void Shutdown();

  const std::string& device_name() const { return device_name_; }

 protected:
  // Called once per submission when its waits are met, on the thread that
  // met the last one; must lead to exactly one Run(submission).
  virtual void Schedule(HostSubmission* submission) = 0;
  // Runs one command buffer (of the driver's family) with its binding table
  // (empty unless it binds slots; only drivers whose Device runs binding
  // tables get one), reporting its commands to `tracer` when it is not null
  // and stopping as soon as it can once `deadline` passes.
  virtual Status Execute(CommandBuffer& command_buffer, std::span<const BufferBinding> binding_table,
                         Tracer* tracer, std::chrono::steady_clock::time_point deadline) = 0;
  // Executes a scheduled submission, then completes it.
  void Run(HostSubmission* submission);
  // The binding table of the submission's command buffer `index` (empty
  // when none).
  static std::span<const BufferBinding> BindingTable(const HostSubmission* submission, size_t index);
  // The failure of the submission's waits, if any: of those that failed
  // before it was scheduled, then of those left to the queue's order
  // (whose semaphores must have reached their values by now). Taken once, at
  // the start; `TakeFailure(s, true)` again later checks the ordered ones
  // only.
  static Status TakeFailure(HostSubmission* submission, bool ordered_only);
  // Completes a submission that ran (or failed) outside Run and recycles it.
  void Finish(HostSubmission* submission, const Status& status);

  const bool in_order_;

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
  // Shutdown joined the threads, unless the queue is destroyed on one of
  // them (its device's last reference dropped by a callback there): then
  // the threads are detached and end on their own.
  ~ThreadedHostQueue() override;
  // Waits for scheduled and running work, then stops the threads.
  void Shutdown() override;

  // The most submissions that were launched and not yet completed at once
  // (pipelined queues; for tests).
  size_t max_in_flight() const { return max_in_flight_.load(std::memory_order_relaxed); }

 protected:
  // Starts the thread (and, when `pipelined`, the one that awaits launched
  // work), which run submissions once the queue is fully constructed and
  // shared (Submit needs both). A pipelined queue's driver implements Launch
  // and Await.
  explicit ThreadedHostQueue(std::string device_name, bool pipelined = false);
  void Schedule(HostSubmission* submission) final;

  // Starts `command_buffers` on the device, in order after everything
  // launched before, without waiting for them; `*ticket` identifies the work
  // to Await. `binding_tables`: none when the submission has none, else one
  // per command buffer (empty ones where it binds no slots). False (and
  // nothing started) when they must run through Execute instead; an error
  // when starting them failed.
  virtual StatusOr<bool> Launch(std::span<const Ref<CommandBuffer>> command_buffers,
                                std::span<const std::span<const BufferBinding>> binding_tables, uint64_t* ticket);
  // Waits for the work of `ticket` (launched with `command_buffers`) and
  // returns how it ended, stopping waiting as the driver can once
  // `deadline` passes. Called once per launch, in launch order.
  virtual Status Await(uint64_t ticket, std::span<const Ref<CommandBuffer>> command_buffers,
                       std::chrono::steady_clock::time_point deadline);

 private:
  struct Launched {
    HostSubmission* submission;
    uint64_t ticket;
  };
  void Loop();
  void AwaitLoop();
  // Launches `submission` if it can; false when it must run through Run.
  bool TryLaunch(HostSubmission* submission);
  // Blocks until every launched submission has completed.
  void Drain();

  const bool pipelined_;
  // TryLaunch's list of a submission's tables (the queue thread's, reused).
  std::vector<std::span<const BufferBinding>> launch_tables_;
  std::mutex mutex_;
  std::condition_variable ready_condition_;
  std::deque<HostSubmission*> ready_;
  bool stopping_ = false;
  std::thread thread_;

  // Launched submissions, oldest first; the front stays until it completes.
  std::mutex launched_mutex_;
  std::condition_variable launched_condition_;
  std::condition_variable drained_condition_;
  std::deque<Launched> launched_;
  bool await_stopping_ = false;
  std::atomic<size_t> max_in_flight_{0};
  std::thread await_thread_;
};

}  // namespace strata::hal
