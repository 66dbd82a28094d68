// Semaphore: a timeline semaphore, the one synchronisation primitive of the
// HAL (as in Vulkan 1.2 and IREE).
//
// A semaphore holds a 64-bit value that only grows. Queue submissions wait for
// semaphores to reach values and signal them to new values when their work is
// done; the host can query, signal and wait (with a timeout) too.
//
// Failure: a semaphore can fail instead of advancing. Failing is permanent and
// carries the original error (a kernel's failure, say); every wait on a value
// the semaphore had not yet reached returns that error, and every submission
// waiting on it fails in turn and fails its own signal semaphores with the same
// error, so a failure travels down the whole chain of dependent work to
// whoever waits at the end.
//
// Timepoints are the asynchronous form of a wait, used by queues to start work
// when its dependencies are met without blocking a thread. Every driver's
// semaphores implement them, so a queue may wait on semaphores of any device.
//
// Ownership: a RefObject; submissions retain the semaphores they wait on and
// signal.
//
// Thread safety: every method is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

#include "hal/resource.h"
#include "vm/base/status.h"

namespace strata::hal {

class Semaphore;

// A (semaphore, value) pair in a wait or signal list; the semaphore is
// borrowed for the duration of the call.
struct SemaphoreValue {
  Semaphore* semaphore;
  uint64_t value;
};

// A callback registered with Semaphore::AddTimepoint. The caller owns the
// memory and keeps it valid until the callback has run (which it always does,
// exactly once: when the value is reached, or when the semaphore fails).
struct Timepoint {
  uint64_t value = 0;
  // `status` is OK when the value was reached, else the semaphore's failure.
  // Runs on whichever thread signals or fails the semaphore (or, if the value
  // is already reached, inside AddTimepoint), with no semaphore lock held.
  void (*callback)(Timepoint* timepoint, const Status& status) = nullptr;
  Timepoint* next = nullptr;  // used by the semaphore while registered
};

class Semaphore : public Resource {
 public:
  static const RefTypeInfo kType;  // "hal.semaphore"
  static constexpr std::chrono::nanoseconds kInfiniteTimeout = std::chrono::nanoseconds::max();

  // The current value, or the failure if the semaphore failed.
  virtual StatusOr<uint64_t> Query() = 0;
  // Advances the value to `value`, which must be greater than the current one.
  // Fails (and leaves the semaphore as it was) if it is not, or if the
  // semaphore has failed (returning that failure).
  virtual Status Signal(uint64_t value) = 0;
  // Fails the semaphore with `status` (not OK). A semaphore that has already
  // failed keeps its first failure.
  virtual void Fail(Status status) = 0;
  // Blocks until the value reaches `value` (OK), the timeout passes
  // (DEADLINE_EXCEEDED) or the semaphore fails (its failure). A zero timeout
  // polls.
  virtual Status Wait(uint64_t value, std::chrono::nanoseconds timeout) = 0;
  // Calls `timepoint->callback` once the value reaches `timepoint->value` or
  // the semaphore fails.
  virtual void AddTimepoint(Timepoint* timepoint) = 0;

  // For queues that run their submissions in the order they were scheduled
  // (hal/host_queue.h): `queue` has scheduled work that signals this
  // semaphore to `value`, ahead of anything it schedules later, so work it
  // schedules later that waits for `value` or less need not wait. The
  // semaphore remembers the last such note; those that do not track it
  // ignore it.
  virtual void NoteScheduledSignal(const void* queue, uint64_t value) {}
  // Whether the last note was `queue`'s, for `value` or beyond.
  virtual bool SignalScheduled(const void* queue, uint64_t value) { return false; }

 protected:
  explicit Semaphore(const DriverFamily* family) : Resource(&kType, family) {}
};

}  // namespace strata::hal
