// cpu-task: submissions run on the thread that makes them ready, helped by
// the workers of a oneTBB task arena of `threads` slots, one of them
// reserved for an application thread (which leaves threads - 1 to workers).
//
// A submission runs on the thread that makes it ready: the submitting
// thread when it has no waits (a compiled program submits and then waits at
// once), otherwise the thread whose signal met its last wait. When a group
// splits, threads - 1 workers join that thread, so exactly `threads` threads
// work and none waits idle beside them: handing the submission to a worker
// instead cost a worker's wake-up, a second wake-up for the waiter, and a
// waiter spinning on a core the workers needed (the sample MLP at batch 1 on
// 2 threads: 38 -> 23 us). The submitting thread does not enter the arena
// itself: a command buffer that never splits then costs no more than on
// cpu-sync (entering and leaving the arena was 2 % of the sample CNN's call,
// 0.3 us). The threads - 1 helpers stay with the submission until it ends
// (Team). A command buffer
// runs barrier group by barrier group: the commands between two barriers run
// concurrently, the workgroups of each dispatch are spread over the team's
// threads in contiguous shares, and large fills and copies are split into
// chunks. A failing workgroup stops its dispatch and command buffer at the
// next check; the first failure is what the submission reports. A command
// buffer that has run faster wholly on the submitting thread (small ones,
// measured by their shape) runs there in order, as cpu-sync runs it.
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "drivers/cpu/cpu_device.h"
#include "drivers/cpu/spin.h"

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

// The arena's workers as helpers of the submitting threads: Launch runs a
// task on one, and a helper whose task is done stays, spinning, for
// kLingerNanos, for the next task Launch hands it, so that a program called
// in a loop wakes no worker per call. A sleeping worker's wake-up is 15 to
// 70 us on some machines, more than a small command buffer takes. (ViT at
// batch 1, called back to back from Python, in 10 processes each: 2 threads
// over 1 took 0.66 to 1.29 times, 2 processes over 1.1, when each
// submission enqueued its helpers anew; 0.58 to 1.01 with them lingering.
// Called from benchmark-module, back to back without Python between calls,
// oneTBB's workers were still spinning and it made no difference.) At most
// `slots` helpers linger (the arena's workers, threads - 1), each in a
// mailbox of its own; more leave at once. A lingering helper leaves early
// when a task is enqueued into the arena (no mailbox was free): the task
// needs the worker it holds.
class Helpers {
 public:
  Helpers(tbb::task_arena& arena, uint32_t slots) : arena_(arena), slots_(slots), mailboxes_(new Mailbox[slots]) {}

  // Runs `task` on a helper: a lingering one, one just finishing its task
  // (waited for, briefly), or a new one in the arena.
  void Launch(std::function<void()> task) {
    for (int spins = 0; spins < 1000; ++spins) {
      bool busy = false;
      for (uint32_t i = 0; i < slots_; ++i) {
        Mailbox& box = mailboxes_[i];
        int state = box.state.load(std::memory_order_acquire);
        if (state == kIdle && box.state.compare_exchange_strong(state, kHanding, std::memory_order_acq_rel)) {
          box.task = std::move(task);
          box.state.store(kFull, std::memory_order_release);
          return;
        }
        busy |= state == kBusy || state == kHanding || state == kFull;
      }
      if (!busy) break;
      SpinPause();
    }
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    enqueued_.fetch_add(1, std::memory_order_release);
    // The task object TBB allocates holds only pointers, whose destruction
    // reads nothing: TBB recycles its memory for the next task through its
    // small-object pool, unseen by ThreadSanitizer, which took a
    // std::function destroyed there and one built in the same memory on
    // another thread for a race.
    auto* owned = new std::function<void()>(std::move(task));
    arena_.enqueue(Handoff([this, owned] {
      Linger(*owned);
      delete owned;
      // The last touch of the pool: Shutdown waits for it.
      in_flight_.fetch_sub(1, std::memory_order_release);
    }));
  }

  // Lingering helpers leave; returns once every helper, started or not,
  // has (one that starts after this leaves after its task).
  void Shutdown() {
    shut_down_.store(true, std::memory_order_release);
    SpinUntil([&] { return in_flight_.load(std::memory_order_acquire) == 0; });
  }

 private:
  static constexpr int kAbsent = 0, kIdle = 1, kHanding = 2, kFull = 3, kBusy = 4;
  static constexpr int64_t kLingerNanos = 200000;

  // A lingering helper's mailbox: kAbsent (none lingers in it), kIdle (one
  // waits), kHanding then kFull (Launch put a task in it), kBusy (it runs
  // that task).
  struct alignas(64) Mailbox {
    std::atomic<int> state{kAbsent};
    std::function<void()> task;
  };

  // Runs `first`, then lingers in a free mailbox running what Launch hands
  // it, until kLingerNanos pass without a task, a task is enqueued into the
  // arena, or the pool shuts down.
  void Linger(const std::function<void()>& first) {
    first();
    Mailbox* box = nullptr;
    for (uint32_t i = 0; i < slots_ && !box; ++i) {
      int absent = kAbsent;
      if (mailboxes_[i].state.compare_exchange_strong(absent, kIdle, std::memory_order_acq_rel)) box = &mailboxes_[i];
    }
    if (!box) return;
    auto since = std::chrono::steady_clock::now();
    uint64_t enqueued = enqueued_.load(std::memory_order_acquire);
    for (int spins = 0;;) {
      const int state = box->state.load(std::memory_order_acquire);
      if (state == kFull) {
        std::function<void()> task = std::move(box->task);
        box->state.store(kBusy, std::memory_order_release);
        task();
        box->state.store(kIdle, std::memory_order_release);
        since = std::chrono::steady_clock::now();
        enqueued = enqueued_.load(std::memory_order_acquire);
        spins = 0;
        continue;
      }
      if (state == kIdle && ++spins % 64 == 0 &&
          (shut_down_.load(std::memory_order_acquire) || enqueued_.load(std::memory_order_acquire) != enqueued ||
           std::chrono::steady_clock::now() - since > std::chrono::nanoseconds(kLingerNanos))) {
        int idle = kIdle;
        if (box->state.compare_exchange_strong(idle, kAbsent, std::memory_order_acq_rel)) return;
        continue;
      }
      if (spins >= 4096) std::this_thread::yield();
      else SpinPause();
    }
  }

  tbb::task_arena& arena_;
  const uint32_t slots_;
  std::unique_ptr<Mailbox[]> mailboxes_;
  std::atomic<bool> shut_down_{false};
  // Tasks enqueued into the arena, and those not yet returned.
  std::atomic<uint64_t> enqueued_{0};
  std::atomic<uint64_t> in_flight_{0};
};

// The threads that run one submission: the thread that runs it (outside the
// arena) and threads - 1 helpers (Helpers), launched by its first split
// group, that spin between its dispatches until it ends. A worker
// woken for each dispatch arrived too late for half of them: in a trace of
// ResNet-18 on 2 threads, 13 of 23 parallel dispatches ran wholly on the
// submitting thread, which took the idle worker's share itself after
// finishing its own.
//
// ParallelFor splits [begin, end) into one contiguous share per thread, and
// each thread of the team runs the same share of every dispatch (the
// submitting thread the first, helper k the k-th), so that a dispatch's
// slice of the weights tends to stay in the cache of the core that read it
// last time, and the rows one dispatch wrote are read on the same core by
// the next. One atomic word holds the job's generation and share count, so
// a helper still holding an old job starts nothing of a new one. A share
// runs in chunks (about 8 a share) from its front; a thread that has run its
// own takes chunks from the back of the others' (one atomic word per share
// holds its next and end chunk), so that the work completes when a helper
// has not arrived, and a thread slowed by its core (another process on it,
// a busier cache) does not hold up the dispatch: in a trace of MobileNetV2
// on 2 threads without taking from the others, 14 % of a call went to
// waiting for the slower thread, in dispatches of 33 evenly sized
// workgroups. The submitting thread spins until every chunk is done. A
// helper that arrives after the submission ended leaves at once.
//
// A thread taking chunks may find the ranges of a job newer than the one
// whose generation it saw; a chunk it takes is still the current
// job's (every range of an ended job is empty, and a job cannot end before
// its taken chunks are done), and the job's fields it then reads were
// written before that range was published.
class Team {
 public:
  // One thread alone needs no shared state: its ParallelFor runs inline.
  // The helpers are launched by the first ParallelFor that splits its range:
  // waking a worker costs a system call, which a submission whose groups
  // all run on its own thread (RunGroup) does not pay (the sample CNN on 2
  // threads: 14.1 to 12.7 us a call).
  Team(Helpers& helpers, uint32_t threads) : helpers_(helpers), threads_(threads) {}
  ~Team() {
    if (state_) state_->stop.store(true, std::memory_order_release);
  }
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  // Runs body(range_begin, range_end) over [begin, end) in pieces; returns
  // once all have run, whether they ran as a split does: false when the
  // range had shares for helpers and the calling thread ran every piece
  // (the helpers had yet to arrive).
  template <typename Index, typename Body>
  bool ParallelFor(Index begin, Index end, const Body& body) {
    const uint64_t count = static_cast<uint64_t>(end - begin);
    const uint64_t shares = std::min<uint64_t>(count, threads_);
    if (shares <= 1) {
      if (count) body(begin, end);
      return true;
    }
    if (!state_) {
      state_ = std::make_shared<State>(static_cast<uint32_t>(threads_));
      for (uint64_t slot = 1; slot < threads_; ++slot) {
        helpers_.Launch([state = state_, slot] { Help(*state, slot); });
      }
    }
    State& s = *state_;
    // The job's fields, read by a helper only after it takes a chunk (which
    // the releases below order after these writes).
    const uint64_t chunks = std::min<uint64_t>(count, shares * kChunksPerShare);
    s.run = [](const void* context, uint64_t chunk, uint64_t chunks) {
      const auto& job = *static_cast<const Job<Index, Body>*>(context);
      job.body(job.begin + static_cast<Index>(job.count * chunk / chunks),
               job.begin + static_cast<Index>(job.count * (chunk + 1) / chunks));
    };
    Job<Index, Body> job{begin, count, body};
    s.context = &job;
    s.chunks = chunks;
    s.done.store(0, std::memory_order_relaxed);
    for (uint64_t share = 0; share < shares; ++share) {
      s.ranges[share].word.store((chunks * share / shares) << 32 | chunks * (share + 1) / shares, std::memory_order_release);
    }
    const uint64_t generation = ++generation_ & 0xffffffffu;
    s.claims.store(generation << 32 | shares << 16, std::memory_order_release);
    RunShares(s, generation, /*slot=*/0);
    SpinUntil([&] { return s.done.load(std::memory_order_acquire) == chunks; });
    return s.helped.load(std::memory_order_relaxed) == generation;
  }

 private:
  static constexpr uint64_t kChunksPerShare = 8;

  template <typename Index, typename Body>
  struct Job {
    Index begin;
    uint64_t count;
    const Body& body;
  };
  struct State {
    explicit State(uint32_t threads) : ranges(new Range[threads]) {
      for (uint32_t i = 0; i < threads; ++i) ranges[i].word.store(0, std::memory_order_relaxed);
    }
    // Each word that threads write apart from the others has a cache line of
    // its own: a helper spinning on `claims` while the submitting thread
    // counted `done` in the same line made every chunk's count wait for the
    // line (the sample CNN on 2 threads: chunks of 1 us 3 to 4 us apart).
    struct alignas(64) Range {
      // next chunk << 32 | end chunk; its owner takes from the front, the
      // others from the back.
      std::atomic<uint64_t> word;
    };
    alignas(64) std::atomic<bool> stop{false};
    // generation << 32 | shares << 16.
    alignas(64) std::atomic<uint64_t> claims{0};
    alignas(64) std::atomic<uint64_t> done{0};
    // The last generation a helper ran a chunk of (written by the helper
    // right before it counts its chunks in `done`, whose line it then holds
    // anyway; the count's release orders it before the join).
    std::atomic<uint64_t> helped{0};
    std::unique_ptr<Range[]> ranges;
    alignas(64) void (*run)(const void* context, uint64_t chunk, uint64_t chunks) = nullptr;
    const void* context = nullptr;
    uint64_t chunks = 0;
  };

  // Takes one chunk of `share`, from its front or its back; false when it
  // has none left.
  static bool TakeChunk(State& s, uint64_t share, bool front, uint64_t* chunk) {
    uint64_t word = s.ranges[share].word.load(std::memory_order_acquire);
    for (;;) {
      const uint64_t next = word >> 32, end = word & 0xffffffffu;
      if (next >= end) return false;
      const uint64_t taken = front ? (next + 1) << 32 | end : next << 32 | (end - 1);
      if (s.ranges[share].word.compare_exchange_weak(word, taken, std::memory_order_acq_rel)) {
        *chunk = front ? next : end - 1;
        return true;
      }
    }
  }

  // Runs the share of job `generation` that belongs to the team's thread
  // `slot` (the submitting thread is 0, the helpers 1 to threads - 1) from
  // its front, then takes what is left of the others' from their backs.
  // Each thread's share is the same part of every dispatch, so what one
  // dispatch wrote, the next reads on the same core: when the helper and
  // the submitting thread raced for the first share instead, either could
  // get it, and in half of MobileNetV2's 14 x 14 depthwise layers each read
  // the rows the other core had just written (a row in 2.5-3 us, against
  // 1.1 on one thread).
  //
  // The chunks of its own share a thread counts in `done` at once, when it
  // has run them all, and each chunk taken from another's share as it ends:
  // `done` is written by every thread, and a count per chunk waited for its
  // line each time.
  static void RunShares(State& s, uint64_t generation, uint64_t slot) {
    const uint64_t word = s.claims.load(std::memory_order_acquire);
    if ((word >> 32) != generation) return;
    const uint64_t shares = (word >> 16) & 0xffff;
    uint64_t chunk, ran = 0;
    auto count = [&] {
      if (!ran) return;
      if (slot != 0) s.helped.store(generation, std::memory_order_relaxed);
      s.done.fetch_add(ran, std::memory_order_release);
      ran = 0;
    };
    if (slot < shares) {
      for (; TakeChunk(s, slot, /*front=*/true, &chunk); ++ran) s.run(s.context, chunk, s.chunks);
      count();
    }
    for (uint64_t share = 0; share < shares; ++share) {
      while (TakeChunk(s, share, /*front=*/false, &chunk)) {
        s.run(s.context, chunk, s.chunks);
        ++ran;
        count();
      }
    }
  }

  static void Help(State& s, uint64_t slot) {
    uint64_t seen = 0;
    for (int idle = 0; !s.stop.load(std::memory_order_acquire);) {
      const uint64_t generation = s.claims.load(std::memory_order_acquire) >> 32;
      if (generation != seen) {
        seen = generation;
        RunShares(s, generation, slot);
        idle = 0;
      } else if (++idle >= 4096) {
        std::this_thread::yield();
      } else {
        SpinPause();
      }
    }
  }

  std::shared_ptr<State> state_;
  Helpers& helpers_;
  const uint64_t threads_;
  uint64_t generation_ = 0;
};

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
    // The limit counts the application thread that runs a submission (the
    // arena's reserved slot) beside its threads - 1 workers.
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

// Whether streamed command buffers (hal::Device::CreateStreamedCommandBuffer)
// run as they are recorded: as chosen per recording site (TaskQueue::Decide),
// always, or never (the device's stream option).
enum class Streaming { kChosen, kAlways, kNever };

class TaskQueue final : public CpuQueue, public CpuCommandBuffer::Streamer {
 public:
  TaskQueue(std::string device_name, uint32_t threads, Streaming streaming)
      : CpuQueue(std::move(device_name)),
        threads_(threads),
        streaming_(streaming),
        arena_(std::make_unique<tbb::task_arena>(static_cast<int>(threads), /*reserved_for_masters=*/1)),
        helpers_(std::make_unique<Helpers>(*arena_, threads - 1)) {
    WorkerLimit::Get().Claim(threads_);
    arena_->initialize();
  }

  CpuCommandBuffer::Streamer* streamer() override {
    return threads_ > 1 && streaming_ != Streaming::kNever ? this : nullptr;
  }

  // A streamed command buffer whose first dispatch is `entry_point` of
  // `executable` (its recording site) streams where the shape of the
  // command buffers recorded there has settled on running in order on the
  // submitting thread (ChooseWay) and has at least kStreamMinCommands
  // commands: running them in order on the helper instead, while the rest
  // is recorded, takes the recording off the critical path (ViT at batch 1
  // when it was recorded every call, 151 commands, a third of its call
  // recording them: 0.85 to 0.90 of the time; compiled programs now record
  // static submissions once, and stream only those of dynamic shapes).
  // Smaller ones gain nothing over the hand-off (the sample CNN's 8
  // commands: the same time streamed), and a shape that splits gains more
  // from splitting (streamed by their timings instead, the sample MLPs ran
  // on one thread in some processes). A site that streams keeps streaming:
  // its shape's chooser, which no longer runs, stays as it was (run now and
  // then, after many streamed calls, its timings were of cold caches, and
  // ViT's flipped to split in some processes, 1.2 times as slow).
  bool Decide(const CpuExecutable* executable, uint32_t entry_point) override {
    if (shut_down_.load(std::memory_order_acquire)) return false;
    if (streaming_ == Streaming::kAlways) return true;
    Site& site = SlotOf(sites_.get(), DispatchKey(executable, entry_point));
    const BurstChooser* shape = site.shape.load(std::memory_order_acquire);
    bool in_order = false;
    return shape && shape->Settled(&in_order) && in_order &&
           site.commands.load(std::memory_order_relaxed) >= kStreamMinCommands;
  }
  bool Stopping() const override { return shut_down_.load(std::memory_order_acquire); }

  // A helper (Helpers) runs the stream; one still finishing the last
  // stream (its submission collected it, the task has yet to return) is
  // waited for, briefly.
  void Launch(std::function<void()> task) override { helpers_->Launch(std::move(task)); }

  void Shutdown() override {
    shut_down_.store(true, std::memory_order_release);
    // A stream helper waiting for commands leaves once it sees shut_down_
    // (Stopping). The submissions still running finish first: they may
    // launch helpers, whose tasks touch the pool. Then lingering helpers
    // leave.
    CpuQueue::Shutdown();
    helpers_->Shutdown();
    helpers_.reset();
    arena_.reset();
    WorkerLimit::Get().Release(threads_);
  }

 protected:
  void Schedule(hal::HostSubmission* submission) override {
    // Run here; a split group enqueues the helpers into the arena (Team).
    // Two threads submitting at once each run their own submission, and
    // share the workers.
    Run(submission);
  }

  Status ExecuteCommands(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Bindings& bindings,
                         Tracer* tracer, std::chrono::steady_clock::time_point deadline) override {
    if (!command_buffer.HasStream()) return ExecuteRecorded(command_buffer, bindings, tracer, deadline);
    // Run while recorded (Decide): what the helper has not run runs here.
    size_t ran = 0;
    Status status = command_buffer.CollectStream(deadline, &ran);
    if (status.ok() && ran < command_buffer.commands().size()) {
      status = command_buffer.RunInOrder(bindings, tracer, deadline, ran);
    }
    return status;
  }

 private:
  // Runs a command buffer recorded before its submission.
  Status ExecuteRecorded(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Bindings& bindings,
                         Tracer* tracer, std::chrono::steady_clock::time_point deadline) {
    // A small command buffer whose shape has run faster with every command
    // on this thread runs as cpu-sync runs it (ChooseWay): each group's own
    // choice (RunGroup) misses what a split costs outside the group, the
    // helper's wake-up and the next groups reading on this core what the
    // other core wrote (ViT at batch 1: 3 of its 85 groups split, each
    // measured faster so, and a call on 2 threads took 1.07 times cpu-sync's
    // time; 1.03 with this choice).
    const Choice choice = threads_ > 1 ? ChooseWay(command_buffer) : Choice{};
    const auto clock_begin = choice.chooser ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    Status status = choice.in_order ? command_buffer.RunInOrder(bindings, tracer, deadline)
                                    : RunGroups(command_buffer, bindings, tracer, deadline, choice.split_all);
    if (choice.chooser && status.ok()) {
      choice.chooser->Record(choice.in_order, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                        std::chrono::steady_clock::now() - clock_begin)
                                                                        .count()));
    }
    return status;
  }

  // Runs the command buffer barrier group by barrier group (RunGroup),
  // every group split with `split_all`.
  Status RunGroups(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Bindings& bindings,
                   Tracer* tracer, std::chrono::steady_clock::time_point deadline, bool split_all) {
    std::span<const CpuCommandBuffer::Command> commands = command_buffer.commands();
    Team team(*helpers_, threads_);
    // Groups are numbered across calls, so that the groups that time
    // themselves (RunGroup) or try the slower way (RunsAlone) rotate. The
    // count is read once and written back once a command buffer, not
    // incremented atomically per group: a locked increment waits for every
    // store before it to reach the cache, here the outputs of the dispatch
    // just run (1.4 % of ViT's call on one thread). Two submissions that
    // run at once may then reuse numbers, which only shifts the rotation.
    uint64_t count = groups_.load(std::memory_order_relaxed);
    Status status;
    size_t begin = 0;
    while (begin < commands.size() && status.ok()) {
      size_t end = begin;
      while (end < commands.size() && commands[end].kind != CpuCommandBuffer::Kind::kBarrier) ++end;
      if (end > begin) {
        status = RunGroup(team, command_buffer, bindings, commands.subspan(begin, end - begin), count++, split_all,
                          tracer, deadline);
      }
      begin = end + 1;
    }
    groups_.store(count, std::memory_order_relaxed);
    return status;
  }

  // The units of work of a command: its workgroups, or its transfer's chunks.
  static uint64_t Units(const CpuCommandBuffer::Command& command) {
    if (command.kind == CpuCommandBuffer::Kind::kDispatch) return CpuCommandBuffer::WorkgroupTotal(command.dispatch);
    const uint64_t length = CpuCommandBuffer::TransferLength(command);
    return length < kParallelTransferBytes ? 1 : (length + kTransferChunkBytes - 1) / kTransferChunkBytes;
  }

  // Runs units [first, last) of `command`.
  static Status RunUnits(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Bindings& bindings,
                         const CpuCommandBuffer::Command& command, uint64_t first, uint64_t last,
                         std::chrono::steady_clock::time_point deadline) {
    if (command.kind == CpuCommandBuffer::Kind::kDispatch)
      return command_buffer.RunWorkgroups(command.dispatch, bindings, first, last, deadline);
    const uint64_t length = CpuCommandBuffer::TransferLength(command);
    if (length < kParallelTransferBytes) {
      command_buffer.RunTransfer(command, 0, length);
      return OkStatus();
    }
    // Chunks are multiples of 4 bytes, so every chunk of a fill starts on a
    // whole pattern.
    for (uint64_t chunk = first; chunk < last; ++chunk) {
      const uint64_t begin = chunk * kTransferChunkBytes;
      command_buffer.RunTransfer(command, begin, std::min(length, begin + kTransferChunkBytes));
    }
    return OkStatus();
  }

  // Whether a group of `units` units whose leading dispatch has `timings`
  // (per unit) runs on this thread alone rather than split over the team.
  // Splitting a small dispatch can cost more than it saves: the fork and
  // join, and the other core reading the inputs from this core's cache and
  // writing outputs this core then reads (ViT at batch 1, 85 dispatches of
  // 1.5 us on average: 0.13 ms a call on one thread, 0.19 on two). Which way
  // is faster is not visible in the dispatch: the sample MLP's layers at
  // batch 1 take as little, yet split they read their weights from two
  // cores' L2 caches (3 times as fast). So it is measured: a dispatch runs
  // split first, kWarmupSamples times, then, if that took less than
  // kAloneCandidateNanos, alone as often, and from then on the way whose
  // running average is lower; the other way again in one group of
  // kExploreEvery (`count` is the group's number), or of 16 times as many
  // when it was over twice as slow, so that a clear loser costs little.
  // `*explore` says whether this group tries the other way.
  static bool RunsAlone(const WayTimings& timings, uint64_t units, uint64_t count, bool* explore) {
    *explore = false;
    const WayTimings::Timing split = timings.Get(/*alone=*/false);
    if (split.samples < kWarmupSamples || split.nanos * units > kAloneCandidateNanos) return false;
    const WayTimings::Timing alone = timings.Get(/*alone=*/true);
    if (alone.samples < kWarmupSamples) return true;
    const uint32_t faster = std::min(alone.nanos, split.nanos), slower = std::max(alone.nanos, split.nanos);
    // A clear loser is tried 16 times as rarely once its average has seen
    // kSettledSamples runs: the first few are of cold caches and sleeping
    // helpers (the sample MLP at batch 1 on 2 threads: its split measured
    // at 2 to 3 times alone from three warm-up runs, where split runs took
    // half the time of alone ones once tried again).
    const uint32_t loser_samples = alone.nanos < split.nanos ? split.samples : alone.samples;
    const bool clear = slower > uint64_t{2} * faster && loser_samples >= kSettledSamples;
    *explore = count % (clear ? 16 * kExploreEvery : kExploreEvery) == 0;
    return (alone.nanos < split.nanos) != *explore;
  }

  // The commands between two barriers (one alone, or several that may run
  // at once: the compiler records no barrier between dispatches that touch
  // no common bytes, such as a Winograd convolution's 16 input transforms):
  // their units, laid end to end, are split over the team, so that
  // the group costs one fork and join where each command alone would cost
  // its own, and a thread that runs several small commands runs each whole.
  // A command that one piece of the split ran whole is reported as the
  // command by the thread that ran it; the pieces of one cut between pieces
  // as `workgroups`, and the command as a whole, after the group, over the
  // group's time.
  static Status RunGroup(Team& team, const CpuCommandBuffer& command_buffer,
                         const CpuCommandBuffer::Bindings& bindings, std::span<const CpuCommandBuffer::Command> group, uint64_t count,
                         bool split_all, Tracer* tracer,
                         std::chrono::steady_clock::time_point deadline) {
    const uint64_t group_begin = tracer ? Tracer::Now() : 0;
    // Where each command's units start, on the stack for most groups.
    uint64_t few[9];
    std::vector<uint64_t> many(group.size() < 9 ? 0 : group.size() + 1);
    uint64_t* starts = group.size() < 9 ? few : many.data();
    uint64_t* const starts_end = starts + group.size() + 1;
    starts[0] = 0;
    for (size_t i = 0; i < group.size(); ++i) starts[i + 1] = starts[i] + Units(group[i]);
    // Per command, whether one piece ran it whole (each written by one thread).
    std::vector<uint8_t> whole(ActiveTracer(tracer) ? group.size() : 0, 0);
    FirstError error;
    auto run = [&](uint64_t first, uint64_t last) {
      size_t i = static_cast<size_t>(std::upper_bound(starts, starts_end, first) - starts) - 1;
      for (; i < group.size() && starts[i] < last && !error.failed(); ++i) {
        const uint64_t from = std::max(first, starts[i]) - starts[i];
        const uint64_t to = std::min(last, starts[i + 1]) - starts[i];
        const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
        Status status = RunUnits(command_buffer, bindings, group[i], from, to, deadline);
        if (!status.ok()) {
          error.Record(std::move(status));
        } else if (ActiveTracer(tracer)) {
          if (from == 0 && to == starts[i + 1] - starts[i]) {
            whole[i] = 1;
            CpuCommandBuffer::TraceCommand(tracer, group[i], trace_begin);
          } else if (group[i].kind == CpuCommandBuffer::Kind::kDispatch) {
            CpuCommandBuffer::TraceWorkgroups(tracer, group[i].dispatch, from, to, trace_begin);
          }
        }
      }
    };
    // A group led by a dispatch (most are one dispatch; the averages are
    // the leading entry point's, per unit of the whole group) runs alone or
    // split as RunsAlone says, and times itself in one group of
    // kMeasureEvery, when exploring, or while the way it takes is not yet
    // measured (16 ns a clock read).
    const CpuCommandBuffer::DispatchCommand* lead =
        group[0].kind == CpuCommandBuffer::Kind::kDispatch ? &group[0].dispatch : nullptr;
    const uint64_t units = starts_end[-1];
    // (A group of one unit runs on this thread whichever way; it is not timed.)
    bool explore = false;
    WayTimings* timings = lead ? &lead->executable->GroupTimings(lead->entry_point) : nullptr;
    const bool alone = timings && (units == 1 || (!split_all && RunsAlone(*timings, units, count, &explore)));
    const bool timed = timings && units > 1 &&
                       (split_all || count % kMeasureEvery == 0 || explore || timings->Get(alone).samples < kWarmupSamples);
    const auto clock_begin = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    // A split that no helper took part in (they had yet to arrive: a
    // worker's wake-up is 15 to 70 us on some machines) ran alone plus the
    // split's costs: recorded as a split, it made a split that was twice
    // as fast as alone with the helpers there look slower (the sample MLP
    // at batch 1 on 2 threads, whose first splits met sleeping workers,
    // then ran alone for thousands of calls, at 1.5 times the time).
    // The wake-up is the command buffer's cost, which its way (ChooseWay)
    // weighs.
    bool as_split = true;
    if (alone) {
      run(0, units);
    } else {
      as_split = team.ParallelFor(uint64_t{0}, units, run);
    }
    if (error.failed()) return error.Take();
    if (timed && as_split) {
      const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - clock_begin);
      timings->Record(alone, static_cast<uint64_t>(nanos.count()) / units);
    }
    for (size_t i = 0; i < whole.size(); ++i) {
      if (!whole[i]) CpuCommandBuffer::TraceCommand(tracer, group[i], group_begin);
    }
    return OkStatus();
  }

  static constexpr uint64_t kMeasureEvery = 4;
  static constexpr size_t kStreamMinCommands = 32;
  static constexpr uint64_t kExploreEvery = 64;
  static constexpr uint64_t kAloneCandidateNanos = 50000;
  static constexpr uint32_t kWarmupSamples = 3;
  static constexpr uint32_t kSettledSamples = 16;

  // How a command buffer runs: in order on this thread or as its groups
  // choose, and where to record its time (null: not timed).
  struct Choice {
    bool in_order = false;
    BurstChooser* chooser = nullptr;
    // Every group splits (BurstChooser::Turn::split_all).
    bool split_all = false;
  };

  // Command buffers are told apart by their shape: the executable and entry
  // point of their first dispatch and their count of commands, which the
  // command buffers one program function records on every call share. A
  // shape has one slot of kShapeSlots by its hash; another shape hashing to
  // the slot takes it over and starts anew. Each shape's way is chosen by
  // bursts of both ways (BurstChooser): the shape's first run pays for first
  // touches (weights read from the module's pages, the heap growing), a split
  // after runs in order for the helper's wake-up, neither of which the next
  // runs pay. (Timed run by run, the sample MLP at batch 1 stayed in order in
  // 3 of 6 processes, at up to 4 times the time it takes split: its first
  // call took 2 to 3 times its later ones.)
  static constexpr size_t kShapeSlots = 64;
  struct Shape {
    std::atomic<uint64_t> key{0};
    BurstChooser chooser;
    void Reset() { chooser.Reset(); }
  };

  // A streamed command buffer tells its recording site (Decide) its shape's
  // chooser and its command count.
  Choice ChooseWay(const CpuCommandBuffer& command_buffer) {
    std::span<const CpuCommandBuffer::Command> commands = command_buffer.commands();
    const auto first = std::find_if(commands.begin(), commands.end(), [](const CpuCommandBuffer::Command& command) {
      return command.kind == CpuCommandBuffer::Kind::kDispatch;
    });
    if (first == commands.end()) return {};
    const uint64_t site_key = DispatchKey(first->dispatch.executable, first->dispatch.entry_point);
    BurstChooser& chooser = SlotOf(shapes_.get(), (site_key ^ commands.size()) * 0x9e3779b97f4a7c15u).chooser;
    if (command_buffer.has_streamer()) {
      Site& site = SlotOf(sites_.get(), site_key);
      site.commands.store(commands.size(), std::memory_order_relaxed);
      site.shape.store(&chooser, std::memory_order_release);
    }
    const BurstChooser::Turn turn = chooser.Next();
    return Choice{turn.in_order, turn.timed ? &chooser : nullptr, turn.split_all};
  }

  // A recording site of streamed command buffers (Decide), by their first
  // dispatch: the chooser of their shape and their command count when they
  // last ran as recorded (ChooseWay).
  struct Site {
    std::atomic<uint64_t> key{0};
    std::atomic<const BurstChooser*> shape{nullptr};
    std::atomic<size_t> commands{0};
    void Reset() {
      shape.store(nullptr, std::memory_order_relaxed);
      commands.store(0, std::memory_order_relaxed);
    }
  };

  static uint64_t DispatchKey(const CpuExecutable* executable, uint32_t entry_point) {
    return (reinterpret_cast<uintptr_t>(executable) ^ entry_point) * 0x9e3779b97f4a7c15u;
  }

  // The slot of `key` in `slots` (kShapeSlots of them, Shape or Site): by
  // its hash; another key hashing to the slot takes it over, reset.
  template <typename Slot>
  static Slot& SlotOf(Slot* slots, uint64_t key) {
    key |= 1;  // never 0, the empty slot's key
    Slot& slot = slots[(key >> 32) % kShapeSlots];
    if (slot.key.load(std::memory_order_relaxed) != key) {
      slot.Reset();
      slot.key.store(key, std::memory_order_relaxed);
    }
    return slot;
  }

  const uint32_t threads_;
  const Streaming streaming_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::atomic<uint64_t> groups_{0};
  std::unique_ptr<Shape[]> shapes_ = std::make_unique<Shape[]>(kShapeSlots);
  // The streaming sites, by the hash of their first dispatch.
  std::unique_ptr<Site[]> sites_ = std::make_unique<Site[]>(kShapeSlots);
  std::atomic<bool> shut_down_{false};
  // Declared after the arena, which it uses.
  std::unique_ptr<Helpers> helpers_;
};

}  // namespace

Status RegisterTaskDriver(hal::DriverRegistry& registry) {
  return registry.Register(
      {"cpu-task", "CPU, submissions run asynchronously on oneTBB worker threads (options: threads=N, max_allocation=BYTES, stream=auto|always|never)",
       [](const hal::DeviceSpec& spec) -> StatusOr<Ref<hal::Device>> {
         STRATA_RETURN_IF_ERROR(spec.CheckKnownOptions({"threads", "max_allocation", "stream"}));
         STRATA_ASSIGN_OR_RETURN(uint64_t max_allocation, CpuMaxAllocation(spec));
         const int64_t hardware = std::max(1u, std::thread::hardware_concurrency());
         STRATA_ASSIGN_OR_RETURN(int64_t threads, spec.GetInt("threads", hardware, 1, 1024));
         hal::DeviceInfo info = CpuDeviceInfo(
             spec, StrCat("CPU, ", threads, " worker thread", threads == 1 ? "" : "s", " (oneTBB)"),
             static_cast<uint32_t>(threads));
         STRATA_ASSIGN_OR_RETURN(std::string_view stream, spec.GetChoice("stream", "auto", {"auto", "always", "never"}));
         auto queue = std::make_shared<TaskQueue>(info.name, static_cast<uint32_t>(threads),
                                                  stream == "always"   ? Streaming::kAlways
                                                  : stream == "never" ? Streaming::kNever
                                                                      : Streaming::kChosen);
         return Ref<hal::Device>(MakeRef<CpuDevice>(std::move(info), std::move(queue), max_allocation));
       }});
}

}  // namespace strata::cpu
