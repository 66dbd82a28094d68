#include "hal/host_queue.h"

namespace strata::hal {

// Submissions kept for reuse; a burst beyond this is freed afterwards.
constexpr size_t kMaxPooledSubmissions = 256;

// One queue submission. Pooled by its queue: the vectors keep their capacity
// from one use to the next.
struct HostSubmission {
  // A wait is a timepoint on its semaphore that knows its submission.
  struct Wait : Timepoint {
    HostSubmission* submission = nullptr;
    Ref<Semaphore> semaphore;
    // Left to the queue's order: work scheduled earlier on this queue
    // signals the value (see ThreadedHostQueue).
    bool ordered = false;
  };

  // Keeps the queue alive for as long as the submission exists.
  std::shared_ptr<HostQueue> queue;
  std::vector<Wait> waits;
  std::vector<std::pair<Ref<Semaphore>, uint64_t>> signals;
  std::vector<Ref<CommandBuffer>> command_buffers;
  // The binding tables, one after another (table i from table_starts[i] to
  // table_starts[i + 1]; empty when none was given), and their buffers held.
  std::vector<BufferBinding> table_entries;
  std::vector<size_t> table_starts;
  std::vector<Ref<Buffer>> table_buffers;
  Tracer* tracer = nullptr;
  std::chrono::steady_clock::time_point deadline;
  std::atomic<uint32_t> pending_waits{0};
  // The first failure among the waits, if any (set before the last wait
  // completes; read only after).
  std::mutex failure_mutex;
  Status failure;
};

HostQueue::~HostQueue() {
  for (HostSubmission* submission : free_submissions_) delete submission;
}

Status HostQueue::Submit(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                        std::span<CommandBuffer* const> command_buffers, Tracer* tracer,
                        std::chrono::steady_clock::time_point deadline,
                        std::span<const std::span<const BufferBinding>> binding_tables) {
  HostSubmission* submission = nullptr;
  {
    std::lock_guard<SpinLock> lock(pool_lock_);
    if (!free_submissions_.empty()) {
      submission = free_submissions_.back();
      free_submissions_.pop_back();
    }
  }
  if (!submission) submission = new HostSubmission();
  submission->queue = shared_from_this();
  submission->tracer = tracer;
  submission->deadline = deadline;
  // Fill every wait before registering any: a registered wait may fire at
  // once, and the vector must not move afterwards.
  submission->waits.resize(waits.size());
  for (size_t i = 0; i < waits.size(); ++i) {
    HostSubmission::Wait& wait = submission->waits[i];
    wait.value = waits[i].value;
    wait.callback = &HostQueue::OnWaitDone;
    wait.next = nullptr;
    wait.submission = submission;
    wait.semaphore = Ref<Semaphore>::Borrow(waits[i].semaphore);
  }
  for (const SemaphoreValue& signal : signals) {
    submission->signals.emplace_back(Ref<Semaphore>::Borrow(signal.semaphore), signal.value);
  }
  for (CommandBuffer* command_buffer : command_buffers) {
    command_buffer->AddPendingSubmission();
    submission->command_buffers.push_back(Ref<CommandBuffer>::Borrow(command_buffer));
  }
  if (!binding_tables.empty()) {
    submission->table_starts.push_back(0);
    for (std::span<const BufferBinding> table : binding_tables) {
      for (const BufferBinding& entry : table) {
        submission->table_entries.push_back(entry);
        if (entry.buffer) submission->table_buffers.push_back(Ref<Buffer>::Borrow(entry.buffer));
      }
      submission->table_starts.push_back(submission->table_entries.size());
    }
  }
  // Waits for values that work this queue scheduled earlier signals are left
  // to the queue's order; checked when the submission runs or completes.
  uint32_t registered = 0;
  for (HostSubmission::Wait& wait : submission->waits) {
    wait.ordered = in_order_ && wait.semaphore->SignalScheduled(this, wait.value);
    registered += !wait.ordered;
  }
  // One extra count for registration itself, so that waits firing while we
  // register cannot schedule the submission before every wait is in place.
  submission->pending_waits.store(registered + 1, std::memory_order_relaxed);
  for (HostSubmission::Wait& wait : submission->waits) {
    if (!wait.ordered) wait.semaphore->AddTimepoint(&wait);
  }
  WaitDone(submission);
  return OkStatus();
}

void HostQueue::OnWaitDone(Timepoint* timepoint, const Status& status) {
  HostSubmission* submission = static_cast<HostSubmission::Wait*>(timepoint)->submission;
  if (!status.ok()) {
    std::lock_guard<std::mutex> lock(submission->failure_mutex);
    if (submission->failure.ok()) submission->failure = status;
  }
  submission->queue->WaitDone(submission);
}

void HostQueue::WaitDone(HostSubmission* submission) {
  if (submission->pending_waits.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Count the submission as active unless the queue has closed; one atomic
  // step, so Shutdown never misses it.
  if (!(state_.fetch_add(1, std::memory_order_acq_rel) & kClosed)) {
    Schedule(submission);
    return;
  }
  state_.fetch_sub(1, std::memory_order_relaxed);
  Complete(submission, UnavailableError("device '", device_name_,
                                        "' was destroyed before this submission's waits were met"));
  // The submission's reference may be the queue's last: drop it last.
  std::shared_ptr<HostQueue> self = std::move(submission->queue);
  delete submission;
}

Status HostQueue::TakeFailure(HostSubmission* submission, bool ordered_only) {
  if (!ordered_only) {
    // Every wait has completed (the last one's acq_rel count made their
    // failures visible), so the failure is ours alone now.
    Status status = std::move(submission->failure);
    submission->failure = OkStatus();
    if (!status.ok()) return status;
  }
  for (HostSubmission::Wait& wait : submission->waits) {
    if (!wait.ordered) continue;
    StatusOr<uint64_t> value = wait.semaphore->Query();
    if (!value.ok()) return value.status();
  }
  return OkStatus();
}

std::span<const BufferBinding> HostQueue::BindingTable(const HostSubmission* submission, size_t index) {
  if (submission->table_starts.empty()) return {};
  return {submission->table_entries.data() + submission->table_starts[index],
          submission->table_entries.data() + submission->table_starts[index + 1]};
}

void HostQueue::Run(HostSubmission* submission) {
  Status status = TakeFailure(submission, /*ordered_only=*/false);
  Tracer* const tracer = ActiveTracer(submission->tracer);
  const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
  for (size_t i = 0; status.ok() && i < submission->command_buffers.size(); ++i) {
    status = Execute(*submission->command_buffers[i], BindingTable(submission, i), tracer, submission->deadline);
  }
  // Reported before the signals, so that whoever waits for them finds the
  // event recorded.
  if (tracer) {
    const TraceArg args[] = {{"command_buffers", static_cast<int64_t>(submission->command_buffers.size())},
                                 {"status", StatusCodeName(status.code())}};
    tracer->Record({"submission", "submission", trace_begin, Tracer::Now(), args});
  }
  Finish(submission, status);
}

void HostQueue::Finish(HostSubmission* submission, const Status& status) {
  // If the device is gone, this reference is the queue's last, and the queue
  // is freed on this thread when Run returns.
  std::shared_ptr<HostQueue> self = std::move(submission->queue);
  Complete(submission, status);
  Recycle(submission);
  if (state_.fetch_sub(1, std::memory_order_acq_rel) - 1 == kShuttingDown) {
    std::lock_guard<std::mutex> lock(shutdown_mutex_);
    idle_.notify_all();
  }
}

void HostQueue::Recycle(HostSubmission* submission) {
  {
    std::lock_guard<SpinLock> lock(pool_lock_);
    if (free_submissions_.size() < kMaxPooledSubmissions) {
      free_submissions_.push_back(submission);
      return;
    }
  }
  delete submission;
}

void HostQueue::Complete(HostSubmission* submission, const Status& status) {
  // Release the work's resources before anyone can observe the signal: a
  // waiter may re-record the command buffer, or drop the last reference to an
  // imported buffer and expect its release callback to have run.
  for (auto& command_buffer : submission->command_buffers) command_buffer->RemovePendingSubmission();
  submission->command_buffers.clear();
  submission->table_entries.clear();
  submission->table_starts.clear();
  submission->table_buffers.clear();
  submission->waits.clear();
  for (auto& [semaphore, value] : submission->signals) {
    if (status.ok()) {
      Status signaled = semaphore->Signal(value);
      if (!signaled.ok()) semaphore->Fail(std::move(signaled));
    } else {
      semaphore->Fail(status);
    }
  }
  submission->signals.clear();
}

void HostQueue::Shutdown() {
  state_.fetch_or(kShuttingDown, std::memory_order_acq_rel);
  std::unique_lock<std::mutex> lock(shutdown_mutex_);
  // Close once nothing is active; submissions scheduled meanwhile (by work
  // that is finishing) keep the count above zero and are waited for too.
  idle_.wait(lock, [&] {
    uint64_t idle = kShuttingDown;
    return state_.compare_exchange_strong(idle, kShuttingDown | kClosed, std::memory_order_acq_rel);
  });
}

// ---------------------------------------------------------------------------
// ThreadedHostQueue

ThreadedHostQueue::ThreadedHostQueue(std::string device_name, bool pipelined)
    : HostQueue(std::move(device_name), /*in_order=*/pipelined), pipelined_(pipelined) {
  thread_ = std::thread([this] { Loop(); });
  if (pipelined_) await_thread_ = std::thread([this] { AwaitLoop(); });
}

ThreadedHostQueue::~ThreadedHostQueue() {
  if (thread_.joinable()) thread_.detach();
  if (await_thread_.joinable()) await_thread_.detach();
}

StatusOr<bool> ThreadedHostQueue::Launch(std::span<const Ref<CommandBuffer>>,
                                         std::span<const std::span<const BufferBinding>>, uint64_t*) {
  return false;
}

Status ThreadedHostQueue::Await(uint64_t, std::span<const Ref<CommandBuffer>>, std::chrono::steady_clock::time_point) {
  return InternalError("queue of '", device_name(), "': Await without Launch");
}

void ThreadedHostQueue::Schedule(HostSubmission* submission) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Noted under the lock that orders the ready list, so that a submission
    // that sees a note is scheduled after the work that made it.
    if (in_order_) {
      for (auto& [semaphore, value] : submission->signals) semaphore->NoteScheduledSignal(this, value);
    }
    ready_.push_back(submission);
  }
  ready_condition_.notify_one();
}

void ThreadedHostQueue::Loop() {
  for (;;) {
    HostSubmission* submission;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_condition_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (ready_.empty()) return;
      submission = ready_.front();
      ready_.pop_front();
    }
    if (pipelined_ && TryLaunch(submission)) continue;
    Drain();
    Run(submission);
  }
}

bool ThreadedHostQueue::TryLaunch(HostSubmission* submission) {
  // Traced submissions and late ones take Run, which reports and stops them.
  if (ActiveTracer(submission->tracer) || std::chrono::steady_clock::now() > submission->deadline) return false;
  // So do submissions whose waits have failed already: Run fails them
  // without running anything (ordered waits that fail later are checked
  // again when the submission completes).
  if (!submission->failure.ok() || !TakeFailure(submission, /*ordered_only=*/true).ok()) return false;
  uint64_t ticket = 0;
  // The tables as spans, where the submission has any (none: an empty list).
  launch_tables_.clear();
  if (!submission->table_starts.empty()) {
    for (size_t i = 0; i < submission->command_buffers.size(); ++i) {
      launch_tables_.push_back(BindingTable(submission, i));
    }
  }
  StatusOr<bool> launched = Launch(submission->command_buffers, launch_tables_, &ticket);
  if (!launched.ok()) {
    // Nothing started, and nothing launched waits for it.
    Finish(submission, launched.status());
    return true;
  }
  if (!*launched) return false;
  {
    std::lock_guard<std::mutex> lock(launched_mutex_);
    launched_.push_back({submission, ticket});
    if (launched_.size() > max_in_flight_.load(std::memory_order_relaxed)) {
      max_in_flight_.store(launched_.size(), std::memory_order_relaxed);
    }
  }
  launched_condition_.notify_one();
  return true;
}

void ThreadedHostQueue::AwaitLoop() {
  for (;;) {
    Launched next;
    {
      std::unique_lock<std::mutex> lock(launched_mutex_);
      launched_condition_.wait(lock, [&] { return await_stopping_ || !launched_.empty(); });
      if (launched_.empty()) return;
      next = launched_.front();
    }
    HostSubmission* submission = next.submission;
    Status status = Await(next.ticket, submission->command_buffers, submission->deadline);
    // The work of earlier submissions has completed by now, so the
    // semaphores of ordered waits hold their values or their failures.
    if (status.ok()) status = TakeFailure(submission, /*ordered_only=*/true);
    // Signalled (or failed) before it leaves the list: a submission that
    // Drain lets run next may have left its waits on these signals to the
    // queue's order, and must find their failures.
    Finish(submission, status);
    {
      std::lock_guard<std::mutex> lock(launched_mutex_);
      launched_.pop_front();
    }
    drained_condition_.notify_all();
  }
}

void ThreadedHostQueue::Drain() {
  if (!pipelined_) return;
  std::unique_lock<std::mutex> lock(launched_mutex_);
  drained_condition_.wait(lock, [&] { return launched_.empty(); });
}

void ThreadedHostQueue::Shutdown() {
  HostQueue::Shutdown();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_condition_.notify_one();
  {
    std::lock_guard<std::mutex> lock(launched_mutex_);
    await_stopping_ = true;
  }
  launched_condition_.notify_one();
  for (std::thread* thread : {&thread_, &await_thread_}) {
    if (thread->joinable() && thread->get_id() != std::this_thread::get_id()) thread->join();
  }
}

}  // namespace strata::hal
