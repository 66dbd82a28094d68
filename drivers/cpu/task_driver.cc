// cpu-task: submissions run on a oneTBB task arena of `threads` slots, one of
// them reserved for the thread that runs the submission.
//
// A submission runs on the thread that makes it ready, inside the arena: the
// submitting thread when it has no waits (a compiled program submits and
// then waits at once), otherwise the thread whose signal met its last wait.
// That thread takes the reserved slot and threads - 1 workers join it, so
// exactly `threads` threads work and none waits idle beside them: handing
// the submission to a worker instead cost a worker's wake-up, a second wake-
// up for the waiter, and a waiter spinning on a core the workers needed (the
// sample MLP at batch 1 on 2 threads: 38 -> 23 us). A command buffer runs
// barrier group by barrier group: the commands between two barriers run
// concurrently, the workgroups of each dispatch are spread over the arena's
// threads by tbb::parallel_for, and large fills and copies are split into
// chunks. A failing workgroup stops its dispatch and command buffer at the
// next check; the first failure is what the submission reports.
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "drivers/cpu/cpu_device.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
#define STRATA_TSAN 1
#endif
#endif

namespace strata::cpu {
namespace {

// ThreadSanitizer cannot see the synchronisation inside oneTBB (Debian's
// library is not instrumented), so every hand-off through TBB, from the
// submitting thread to a worker and between the workers of a parallel_for,
// would look like a race and hide real ones. These annotations state the
// happens-before edges TBB provides; outside TSan builds they compile to
// nothing. What they cannot reach, TBB's accesses to its own task objects, is
// suppressed by tests/hal/tsan_suppressions.txt.
inline void HappensBefore(const void* address) {
#if STRATA_TSAN
  __tsan_release(const_cast<void*>(address));
#endif
}
inline void HappensAfter(const void* address) {
#if STRATA_TSAN
  __tsan_acquire(const_cast<void*>(address));
#endif
}

// A callable handed to TBB, which TBB copies into its task objects (once per
// split of a parallel_for) and runs on another thread. Every copy releases at
// its own address after it is written, and running a copy first acquires
// there, so what the creating thread wrote is visible to TSan as ordered
// before what the running thread reads.
template <typename F>
class Handoff {
 public:
  explicit Handoff(F f) : f_(std::move(f)) { HappensBefore(this); }
  Handoff(const Handoff& other) : f_((HappensAfter(&other), other.f_)) { HappensBefore(this); }
  Handoff(Handoff&& other) noexcept : f_((HappensAfter(&other), std::move(other.f_))) { HappensBefore(this); }
  Handoff& operator=(const Handoff&) = delete;

  template <typename... Args>
  void operator()(Args&&... args) const {
    HappensAfter(this);
    f_(std::forward<Args>(args)...);
  }

 private:
  F f_;
};

// tbb::parallel_for over [begin, end), calling body(range_begin, range_end)
// for the ranges it splits it into; returns once all have run. The static
// partitioner gives each worker one contiguous share, the same share of a
// dispatch on every call: a workgroup's slice of the weights then stays in
// the cache of the core that read it last time (two cores keep a 2.7 MB MLP
// in their two L2 caches, where work stealing moved slices between them).
template <typename Index, typename Body>
void ParallelFor(Index begin, Index end, const Body& body) {
  // The join: every range releases here when done, the caller acquires after.
  const void* join = &body;
  tbb::parallel_for(tbb::blocked_range<Index>(begin, end),
                    Handoff([&body, join](const tbb::blocked_range<Index>& range) {
                      body(range.begin(), range.end());
                      HappensBefore(join);
                    }),
                    tbb::static_partitioner());
  HappensAfter(join);
}

// Transfers at least this long are split into chunks for the workers; below
// it, handing out the pieces costs more than it saves.
constexpr uint64_t kParallelTransferBytes = uint64_t{1} << 20;
constexpr uint64_t kTransferChunkBytes = uint64_t{256} << 10;

// oneTBB keeps one process-wide pool of workers, by default one fewer than
// the hardware threads, and an arena only gets workers from that pool. When
// several global_control objects limit the pool, the smallest wins. So a
// device that asks for more threads than the default pool has needs the
// process-wide limit raised, to the largest any live device asks for; this
// keeps exactly one control at that value (none while the default suffices,
// so that the runtime never restricts the application's own use of TBB).
class WorkerLimit {
 public:
  static WorkerLimit& Get() {
    // Never destroyed: a device may be destroyed during static destruction.
    static WorkerLimit* limit = new WorkerLimit();
    return *limit;
  }

  void Claim(uint32_t threads) {
    std::lock_guard<std::mutex> lock(mutex_);
    claims_.insert(threads);
    Update();
  }
  void Release(uint32_t threads) {
    std::lock_guard<std::mutex> lock(mutex_);
    claims_.erase(claims_.find(threads));
    Update();
  }

 private:
  void Update() {
    // The limit counts the application thread that runs a submission in the
    // arena's reserved slot, beside its threads - 1 workers.
    size_t wanted = claims_.empty() ? 0 : size_t{*claims_.rbegin()};
    if (wanted <= static_cast<size_t>(tbb::info::default_concurrency())) wanted = 0;
    if (wanted == current_) return;
    // Destroy the old control first: while both live, the smaller one rules.
    control_.reset();
    if (wanted) {
      control_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, wanted);
    }
    current_ = wanted;
  }

  std::mutex mutex_;
  std::multiset<uint32_t> claims_;
  std::unique_ptr<tbb::global_control> control_;
  size_t current_ = 0;
};

// The first failure among concurrently running pieces of work.
class FirstError {
 public:
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  void Record(Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_.load(std::memory_order_relaxed)) return;
    status_ = std::move(status);
    failed_.store(true, std::memory_order_relaxed);
  }
  // Once the work has joined.
  Status Take() { return std::move(status_); }

 private:
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  Status status_;
};

class TaskQueue final : public CpuQueue {
 public:
  TaskQueue(std::string device_name, uint32_t threads)
      : CpuQueue(std::move(device_name)),
        threads_(threads),
        arena_(std::make_unique<tbb::task_arena>(static_cast<int>(threads), /*reserved_for_masters=*/1)) {
    WorkerLimit::Get().Claim(threads_);
    arena_->initialize();
  }

  void Shutdown() override {
    CpuQueue::Shutdown();
    arena_.reset();
    WorkerLimit::Get().Release(threads_);
  }

 protected:
  void Schedule(hal::HostSubmission* submission) override {
    // Run here, in the arena; should its slot for this thread be taken
    // (another thread submitting at once), TBB hands the work to a worker
    // and this thread waits for it.
    arena_->execute(Handoff([this, submission] { Run(submission); }));
  }

  Status ExecuteCommands(const CpuCommandBuffer& command_buffer, Tracer* tracer,
                         std::chrono::steady_clock::time_point deadline) override {
    std::span<const CpuCommandBuffer::Command> commands = command_buffer.commands();
    size_t begin = 0;
    while (begin < commands.size()) {
      size_t end = begin;
      while (end < commands.size() && commands[end].kind != CpuCommandBuffer::Kind::kBarrier) ++end;
      if (end - begin == 1) {
        STRATA_RETURN_IF_ERROR(RunCommand(command_buffer, commands[begin], tracer, deadline));
      } else if (end > begin) {
        FirstError error;
        ParallelFor(begin, end, [&](size_t first, size_t last) {
          for (size_t i = first; i < last && !error.failed(); ++i) {
            Status status = RunCommand(command_buffer, commands[i], tracer, deadline);
            if (!status.ok()) error.Record(std::move(status));
          }
        });
        if (error.failed()) return error.Take();
      }
      begin = end + 1;
    }
    return OkStatus();
  }

 private:
  static Status RunCommand(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Command& command,
                           Tracer* tracer, std::chrono::steady_clock::time_point deadline) {
    const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
    Status status = ExecuteCommand(command_buffer, command, tracer, deadline);
    if (ActiveTracer(tracer) && status.ok()) CpuCommandBuffer::TraceCommand(tracer, command, trace_begin);
    return status;
  }

  // Runs one command (RunCommand reports it as a whole); `tracer` receives
  // each worker's share of a dispatch.
  static Status ExecuteCommand(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Command& command,
                               Tracer* tracer, std::chrono::steady_clock::time_point deadline) {
    if (command.kind == CpuCommandBuffer::Kind::kDispatch) {
      const CpuCommandBuffer::DispatchCommand& dispatch = command.dispatch;
      const uint64_t total = CpuCommandBuffer::WorkgroupTotal(dispatch);
      if (total == 1) return command_buffer.RunWorkgroups(dispatch, 0, 1, deadline);
      FirstError error;
      ParallelFor(uint64_t{0}, total, [&](uint64_t first, uint64_t last) {
        if (error.failed()) return;
        const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
        Status status = command_buffer.RunWorkgroups(dispatch, first, last, deadline);
        if (ActiveTracer(tracer)) CpuCommandBuffer::TraceWorkgroups(tracer, dispatch, first, last, trace_begin);
        if (!status.ok()) error.Record(std::move(status));
      });
      return error.failed() ? error.Take() : OkStatus();
    }
    const uint64_t length = CpuCommandBuffer::TransferLength(command);
    if (length < kParallelTransferBytes) {
      command_buffer.RunTransfer(command, 0, length);
      return OkStatus();
    }
    // Chunks are multiples of 4 bytes, so every chunk of a fill starts on a
    // whole pattern.
    const uint64_t chunks = (length + kTransferChunkBytes - 1) / kTransferChunkBytes;
    ParallelFor(uint64_t{0}, chunks, [&](uint64_t first, uint64_t last) {
      for (uint64_t chunk = first; chunk < last; ++chunk) {
        const uint64_t begin = chunk * kTransferChunkBytes;
        command_buffer.RunTransfer(command, begin, std::min(length, begin + kTransferChunkBytes));
      }
    });
    return OkStatus();
  }

  const uint32_t threads_;
  std::unique_ptr<tbb::task_arena> arena_;
};

}  // namespace

Status RegisterTaskDriver(hal::DriverRegistry& registry) {
  return registry.Register(
      {"cpu-task", "CPU, submissions run asynchronously on oneTBB worker threads (options: threads=N, max_allocation=BYTES)",
       [](const hal::DeviceSpec& spec) -> StatusOr<Ref<hal::Device>> {
         STRATA_RETURN_IF_ERROR(spec.CheckKnownOptions({"threads", "max_allocation"}));
         STRATA_ASSIGN_OR_RETURN(uint64_t max_allocation, CpuMaxAllocation(spec));
         const int64_t hardware = std::max(1u, std::thread::hardware_concurrency());
         STRATA_ASSIGN_OR_RETURN(int64_t threads, spec.GetInt("threads", hardware, 1, 1024));
         hal::DeviceInfo info = CpuDeviceInfo(
             spec, StrCat("CPU, ", threads, " worker thread", threads == 1 ? "" : "s", " (oneTBB)"),
             static_cast<uint32_t>(threads));
         auto queue = std::make_shared<TaskQueue>(info.name, static_cast<uint32_t>(threads));
         return Ref<hal::Device>(MakeRef<CpuDevice>(std::move(info), std::move(queue), max_allocation));
       }});
}

}  // namespace strata::cpu
