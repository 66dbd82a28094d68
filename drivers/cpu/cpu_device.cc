#include "drivers/cpu/cpu_device.h"

#include <atomic>

#include "drivers/cpu/cpu_buffer.h"
#include "drivers/cpu/cpu_executable.h"
#include "drivers/cpu/cpu_semaphore.h"

namespace strata::cpu {

const hal::DriverFamily kCpuFamily = {"cpu"};

// Submissions kept for reuse; a burst beyond this is freed afterwards.
constexpr size_t kMaxPooledSubmissions = 256;

// One queue submission. Pooled by its queue: the vectors keep their capacity
// from one use to the next.
struct Submission {
  // A wait is a timepoint on its semaphore that knows its submission.
  struct Wait : hal::Timepoint {
    Submission* submission = nullptr;
    vm::Ref<hal::Semaphore> semaphore;
  };

  // Keeps the queue alive for as long as the submission exists.
  std::shared_ptr<CpuQueue> queue;
  std::vector<Wait> waits;
  std::vector<std::pair<vm::Ref<hal::Semaphore>, uint64_t>> signals;
  std::vector<vm::Ref<CpuCommandBuffer>> command_buffers;
  vm::Tracer* tracer = nullptr;
  std::chrono::steady_clock::time_point deadline;
  std::atomic<uint32_t> pending_waits{0};
  // The first failure among the waits, if any (set before the last wait
  // completes; read only after).
  std::mutex failure_mutex;
  Status failure;
};

CpuQueue::~CpuQueue() {
  for (Submission* submission : free_submissions_) delete submission;
}

Status CpuQueue::Submit(std::span<const hal::SemaphoreValue> waits, std::span<const hal::SemaphoreValue> signals,
                        std::span<hal::CommandBuffer* const> command_buffers, vm::Tracer* tracer,
                        std::chrono::steady_clock::time_point deadline) {
  Submission* submission = nullptr;
  {
    std::lock_guard<SpinLock> lock(pool_lock_);
    if (!free_submissions_.empty()) {
      submission = free_submissions_.back();
      free_submissions_.pop_back();
    }
  }
  if (!submission) submission = new Submission();
  submission->queue = shared_from_this();
  submission->tracer = tracer;
  submission->deadline = deadline;
  // Fill every wait before registering any: a registered wait may fire at
  // once, and the vector must not move afterwards.
  submission->waits.resize(waits.size());
  for (size_t i = 0; i < waits.size(); ++i) {
    Submission::Wait& wait = submission->waits[i];
    wait.value = waits[i].value;
    wait.callback = &CpuQueue::OnWaitDone;
    wait.next = nullptr;
    wait.submission = submission;
    wait.semaphore = vm::Ref<hal::Semaphore>::Borrow(waits[i].semaphore);
  }
  for (const hal::SemaphoreValue& signal : signals) {
    submission->signals.emplace_back(vm::Ref<hal::Semaphore>::Borrow(signal.semaphore), signal.value);
  }
  for (hal::CommandBuffer* command_buffer : command_buffers) {
    command_buffer->AddPendingSubmission();
    submission->command_buffers.push_back(
        vm::Ref<CpuCommandBuffer>::Borrow(static_cast<CpuCommandBuffer*>(command_buffer)));
  }
  // One extra count for registration itself, so that waits firing while we
  // register cannot schedule the submission before every wait is in place.
  submission->pending_waits.store(static_cast<uint32_t>(waits.size()) + 1, std::memory_order_relaxed);
  for (Submission::Wait& wait : submission->waits) wait.semaphore->AddTimepoint(&wait);
  WaitDone(submission);
  return OkStatus();
}

void CpuQueue::OnWaitDone(hal::Timepoint* timepoint, const Status& status) {
  Submission* submission = static_cast<Submission::Wait*>(timepoint)->submission;
  if (!status.ok()) {
    std::lock_guard<std::mutex> lock(submission->failure_mutex);
    if (submission->failure.ok()) submission->failure = status;
  }
  submission->queue->WaitDone(submission);
}

void CpuQueue::WaitDone(Submission* submission) {
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
  std::shared_ptr<CpuQueue> self = std::move(submission->queue);
  delete submission;
}

void CpuQueue::Run(Submission* submission) {
  // Every wait has completed (the last one's acq_rel count made their
  // failures visible), so the failure is ours alone now.
  Status status = std::move(submission->failure);
  submission->failure = OkStatus();
  vm::Tracer* const tracer = submission->tracer;
  const uint64_t trace_begin = tracer ? vm::Tracer::Now() : 0;
  for (size_t i = 0; status.ok() && i < submission->command_buffers.size(); ++i) {
    status = Execute(*submission->command_buffers[i], tracer, submission->deadline);
  }
  // Reported before the signals, so that whoever waits for them finds the
  // event recorded.
  if (tracer) {
    const vm::TraceArg args[] = {{"command_buffers", static_cast<int64_t>(submission->command_buffers.size())},
                                 {"status", StatusCodeName(status.code())}};
    tracer->Record({"submission", "submission", trace_begin, vm::Tracer::Now(), args});
  }
  // If the device is gone, this reference is the queue's last, and the queue
  // is freed on this thread when Run returns.
  std::shared_ptr<CpuQueue> self = std::move(submission->queue);
  Complete(submission, status);
  Recycle(submission);
  if (state_.fetch_sub(1, std::memory_order_acq_rel) - 1 == kShuttingDown) {
    std::lock_guard<std::mutex> lock(shutdown_mutex_);
    idle_.notify_all();
  }
}

void CpuQueue::Recycle(Submission* submission) {
  {
    std::lock_guard<SpinLock> lock(pool_lock_);
    if (free_submissions_.size() < kMaxPooledSubmissions) {
      free_submissions_.push_back(submission);
      return;
    }
  }
  delete submission;
}

void CpuQueue::Complete(Submission* submission, const Status& status) {
  // Release the work's resources before anyone can observe the signal: a
  // waiter may re-record the command buffer, or drop the last reference to an
  // imported buffer and expect its release callback to have run.
  for (auto& command_buffer : submission->command_buffers) command_buffer->RemovePendingSubmission();
  submission->command_buffers.clear();
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

void CpuQueue::Shutdown() {
  state_.fetch_or(kShuttingDown, std::memory_order_acq_rel);
  std::unique_lock<std::mutex> lock(shutdown_mutex_);
  // Close once nothing is active; submissions scheduled meanwhile (by work
  // that is finishing) keep the count above zero and are waited for too.
  idle_.wait(lock, [&] {
    uint64_t idle = kShuttingDown;
    return state_.compare_exchange_strong(idle, kShuttingDown | kClosed, std::memory_order_acq_rel);
  });
}

CpuDevice::CpuDevice(hal::DeviceInfo info, std::shared_ptr<CpuQueue> queue, uint64_t max_allocation)
    : Device(std::move(info), vm::MakeRef<CpuAllocator>(max_allocation)), queue_(std::move(queue)) {}

StatusOr<uint64_t> CpuMaxAllocation(const hal::DeviceSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(int64_t bytes, spec.GetInt("max_allocation", static_cast<int64_t>(DefaultMaxAllocation()),
                                                     1, static_cast<int64_t>(kMaxAllocation)));
  return static_cast<uint64_t>(bytes);
}

CpuDevice::~CpuDevice() { queue_->Shutdown(); }

StatusOr<vm::Ref<hal::CommandBuffer>> CpuDevice::CreateCommandBuffer() {
  return vm::Ref<hal::CommandBuffer>(vm::MakeRef<CpuCommandBuffer>(info().limits));
}

StatusOr<vm::Ref<hal::Semaphore>> CpuDevice::CreateSemaphore(uint64_t initial_value) {
  return vm::Ref<hal::Semaphore>(vm::MakeRef<CpuSemaphore>(initial_value));
}

StatusOr<vm::Ref<hal::Executable>> CpuDevice::PrepareExecutableImpl(const hal::ExecutableParams& params) {
  STRATA_ASSIGN_OR_RETURN(vm::Ref<CpuExecutable> executable, CpuExecutable::Create(params));
  return vm::Ref<hal::Executable>(std::move(executable));
}

Status CpuDevice::QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits,
                                   std::span<const hal::SemaphoreValue> signals,
                                   std::span<hal::CommandBuffer* const> command_buffers,
                                   std::chrono::steady_clock::time_point deadline) {
  return queue_->Submit(waits, signals, command_buffers, tracer(), deadline);
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
