#include "hal/host_semaphore.h"

#include <chrono>

#include "hal/spin.h"

namespace strata::hal {

namespace {

// How long a host wait spins before it blocks: longer than a small
// submission's round trip through the task queue, short enough that a waiter
// on long work wastes little.
constexpr auto kSpinDuration = std::chrono::microseconds(50);

}  // namespace

HostSemaphore::HostSemaphore(const DriverFamily* family, uint64_t initial_value)
    : Semaphore(family), value_(initial_value) {}

StatusOr<uint64_t> HostSemaphore::Query() {
  if (failed_.load(std::memory_order_acquire)) return failure_;
  return value_.load(std::memory_order_acquire);
}

Status HostSemaphore::Signal(uint64_t value) {
  Timepoint* reached = nullptr;
  bool notify;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) return failure_;
    uint64_t current = value_.load(std::memory_order_relaxed);
    if (value <= current) {
      return FailedPreconditionError("semaphore signal: value ", value, " is not greater than the current value ",
                                     current, "; timeline values must increase");
    }
    value_.store(value, std::memory_order_release);
    // Detach the timepoints this value reaches.
    for (Timepoint** link = &timepoints_; *link;) {
      Timepoint* timepoint = *link;
      if (timepoint->value <= value) {
        *link = timepoint->next;
        timepoint->next = reached;
        reached = timepoint;
      } else {
        link = &timepoint->next;
      }
    }
    notify = blocked_waiters_ > 0;
  }
  if (notify) condition_.notify_all();
  Fire(reached, OkStatus());
  return OkStatus();
}

void HostSemaphore::Fail(Status status) {
  Timepoint* all;
  bool notify;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) return;
    if (status.ok()) status = InternalError("semaphore failed with an OK status");
    failure_ = std::move(status);
    failed_.store(true, std::memory_order_release);
    all = std::exchange(timepoints_, nullptr);
    notify = blocked_waiters_ > 0;
  }
  if (notify) condition_.notify_all();
  Fire(all, failure_);
}

void HostSemaphore::NoteScheduledSignal(const void* queue, uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  scheduled_queue_ = queue;
  scheduled_value_ = value;
}

bool HostSemaphore::SignalScheduled(const void* queue, uint64_t value) {
  std::lock_guard<std::mutex> lock(mutex_);
  return scheduled_queue_ == queue && scheduled_value_ >= value;
}

void HostSemaphore::Fire(Timepoint* list, const Status& status) {
  while (list) {
    // The callback may release the node's memory: read the link first.
    Timepoint* next = list->next;
    list->next = nullptr;
    list->callback(list, status);
    list = next;
  }
}

Status HostSemaphore::Wait(uint64_t value, std::chrono::nanoseconds timeout) {
  auto reached = [&] { return value_.load(std::memory_order_acquire) >= value; };
  auto failed = [&] { return failed_.load(std::memory_order_acquire); };
  if (reached()) return OkStatus();
  if (failed()) return failure_;
  if (timeout <= std::chrono::nanoseconds::zero()) {
    return DeadlineExceededError("semaphore wait: value ", value, " not reached (current value ",
                                 value_.load(std::memory_order_acquire), ")");
  }
  const auto start = std::chrono::steady_clock::now();
  const auto spin = timeout < kSpinDuration ? timeout : std::chrono::nanoseconds(kSpinDuration);
  for (uint32_t i = 0;; ++i) {
    if (reached()) return OkStatus();
    if (failed()) return failure_;
    // Reading the clock costs more than a pause: look at it now and then.
    if ((i & 63) == 63 && std::chrono::steady_clock::now() - start >= spin) break;
    CpuRelax();
  }

  std::unique_lock<std::mutex> lock(mutex_);
  ++blocked_waiters_;
  auto done = [&] { return reached() || failed(); };
  // A timeout too long to add to the clock is as good as infinite.
  if (timeout >= std::chrono::steady_clock::time_point::max() - start) {
    condition_.wait(lock, done);
  } else {
    condition_.wait_until(lock, start + timeout, done);
  }
  --blocked_waiters_;
  if (reached()) return OkStatus();
  if (failed()) return failure_;
  return DeadlineExceededError("semaphore wait: value ", value, " not reached within ", timeout.count(),
                               " ns (current value ", value_.load(std::memory_order_acquire), ")");
}

void HostSemaphore::AddTimepoint(Timepoint* timepoint) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failed_.load(std::memory_order_relaxed) &&
        value_.load(std::memory_order_relaxed) < timepoint->value) {
      timepoint->next = timepoints_;
      timepoints_ = timepoint;
      return;
    }
  }
  // Already reached or failed: run it now, outside the lock.
  timepoint->next = nullptr;
  if (value_.load(std::memory_order_acquire) >= timepoint->value) {
    timepoint->callback(timepoint, OkStatus());
  } else {
    timepoint->callback(timepoint, failure_);
  }
}

}  // namespace strata::hal
