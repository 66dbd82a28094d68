// HostSemaphore: a timeline semaphore kept on the host, a value and a failure
// status under a mutex, with a condition variable for blocked host waiters and
// an intrusive list of timepoints for queues.
//
// Every driver whose queue is driven by host threads uses it (the CPU drivers,
// and the GPU drivers, whose queue threads signal it when the GPU is done),
// each with its own driver family.
//
// Host waits spin briefly before blocking: on the CPU the work a waiter waits
// for is often microseconds long, and parking a thread and waking it again
// costs more than that.
//
// Signalling never allocates: timepoints are caller-owned list nodes, and the
// condition variable is notified only when a thread is blocked on it.
//
// Ownership and thread safety: see hal/semaphore.h.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "hal/semaphore.h"

namespace strata::hal {

class HostSemaphore final : public Semaphore {
 public:
  HostSemaphore(const DriverFamily* family, uint64_t initial_value);

  StatusOr<uint64_t> Query() override;
  Status Signal(uint64_t value) override;
  void Fail(Status status) override;
  Status Wait(uint64_t value, std::chrono::nanoseconds timeout) override;
  void AddTimepoint(Timepoint* timepoint) override;
  void NoteScheduledSignal(const void* queue, uint64_t value) override;
  bool SignalScheduled(const void* queue, uint64_t value) override;

 private:
  // Runs the callbacks of a detached list of timepoints.
  static void Fire(Timepoint* list, const Status& status);

  // Readable without the mutex for the fast paths; written under it.
  std::atomic<uint64_t> value_;
  std::atomic<bool> failed_{false};

  std::mutex mutex_;
  std::condition_variable condition_;
  uint32_t blocked_waiters_ = 0;
  // Set once, when failed_ becomes true; never changes afterwards, so it may
  // be read without the mutex once failed_ has been seen true.
  Status failure_;
  Timepoint* timepoints_ = nullptr;
  // The last NoteScheduledSignal.
  const void* scheduled_queue_ = nullptr;
  uint64_t scheduled_value_ = 0;
};

}  // namespace strata::hal
