// CpuCommandBuffer: the CPU drivers' command buffer.
//
// Recording resolves everything it can up front: buffers to host pointers,
// entry points to kernel function pointers, update data copied into the
// command buffer. Executing a command is then a loop of kernel calls or a
// memset/memcpy, with no lookups, no allocation and no locks. Commands and
// their bindings and constants live in flat arrays that keep their capacity
// across Begin, so re-recording a command buffer of the same shape does not
// allocate either.
//
// Both CPU drivers run the same recorded commands: cpu-sync one after the
// other on the calling thread, cpu-task spreading workgroups (and the commands
// between two barriers) over worker threads. The execution helpers here are
// what both call.
//
// Alternating order: every second run of a command buffer takes each
// dispatch's workgroups (each chunk of them a thread runs, where cpu-task
// splits a dispatch) in descending order. A model whose weights a little
// exceed the core's L2 cache streams them all from memory on every call
// when each call reads them in the same order: the least recently used
// lines are always the ones needed next. Read backwards, a call starts with
// what the call before read last, still in the cache (the sample MLP at
// batch 1, 2.7 MB of weights, 2 MiB of L2: 0.88 of the time on one thread;
// docs/hal.md). Workgroups may run in any order (kernel_abi.h), so results
// do not change. Kernels that prefetch what the next workgroup reads say so
// in their metadata (hal::EntryPointInfo::ascending_workgroups) and always
// run ascending.
//
// Ownership and thread safety: see hal/command_buffer.h.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "drivers/cpu/cpu_executable.h"
#include "drivers/cpu/kernel_abi.h"
#include "hal/command_buffer.h"
#include "vm/base/trace.h"

namespace strata::cpu {

class CpuCommandBuffer final : public hal::CommandBuffer {
 public:
  enum class Kind : uint8_t { kDispatch, kFill, kCopy, kUpdate, kBarrier };

  struct DispatchCommand {
    strata_cpu_kernel_fn_t kernel;
    const CpuExecutable* executable;  // for error messages; retained
    uint32_t entry_point;
    uint32_t workgroup_count[3];
    uint32_t binding_count;
    uint32_t constant_count;
    uint32_t first_binding;   // index into the binding arrays
    uint32_t first_constant;  // index into the constant array
  };
  struct FillCommand {
    uint8_t* target;
    uint64_t length;
    uint32_t pattern;
    uint32_t pattern_length;
  };
  struct CopyCommand {
    const uint8_t* source;
    uint8_t* target;
    uint64_t length;
  };
  struct UpdateCommand {
    uint8_t* target;
    uint64_t length;
    uint64_t data_offset;  // into the update data
  };
  struct Command {
    Kind kind;
    union {
      DispatchCommand dispatch;
      FillCommand fill;
      CopyCommand copy;
      UpdateCommand update;
    };
  };

  // Streaming (hal::Device::CreateStreamedCommandBuffer): a queue that can
  // run a command buffer's commands on a helper thread while the rest are
  // being recorded. At the first dispatch of a streamed command buffer it
  // decides whether this one does (by that dispatch: a program's command
  // buffers of one recording site begin alike).
  class Streamer {
   public:
    virtual bool Decide(const CpuExecutable* executable, uint32_t entry_point) = 0;
    // Runs `task` on a helper thread.
    virtual void Launch(std::function<void()> task) = 0;
    // Whether the queue shuts down: a helper waiting for more commands
    // leaves (a recording that will not be submitted there).
    virtual bool Stopping() const = 0;

   protected:
    ~Streamer() = default;
  };

  // `streamer` is given to streamed command buffers of queues that can run
  // them so; null otherwise.
  CpuCommandBuffer(const hal::DeviceLimits& limits, std::shared_ptr<Streamer> streamer = nullptr);
  ~CpuCommandBuffer() override;

  std::span<const Command> commands() const { return commands_; }

  bool has_streamer() const { return streamer_ != nullptr; }

  // The host pointers and lengths of the dispatches' bindings in one run
  // (DispatchCommand::first_binding indexes them): the command buffer's
  // own, or, for an indirect command buffer's submission, copies with the
  // slot bindings' ranges of its binding table in place (Bind).
  // `descending`: this run takes workgroups in descending order (see
  // above); NextRunDescending says which runs do.
  struct Bindings {
    void* const* pointers;
    const uint64_t* lengths;
    bool descending = false;
  };
  Bindings OwnBindings() const { return {binding_pointers_.data(), binding_lengths_.data()}; }
  // Whether the next run of this command buffer goes in descending order:
  // every second one, counted per command buffer (runs on several threads
  // at once each take their turn).
  bool NextRunDescending() const { return (runs_.fetch_add(1, std::memory_order_relaxed) & 1) != 0; }
  // Where Bind writes (kept by the caller across runs, so that a run in
  // steady state does not allocate).
  struct BoundStorage {
    std::vector<void*> pointers;
    std::vector<uint64_t> lengths;
    std::vector<uint8_t*> slot_bases;
  };
  // The bindings of a run with `table` (checked by
  // hal::CommandBuffer::CheckBindingTable); the own ones when nothing binds
  // a slot.
  Bindings Bind(std::span<const hal::BufferBinding> table, BoundStorage* storage) const;
  // At a submission: whether commands of this recording ran while it was
  // recorded and have not been collected yet. If so, CollectStream waits
  // until that stops (the helper runs what was recorded, unless it had
  // not started, and then leaves), sets *ran to the commands it ran, in
  // order from the first, and returns its first failure; the submission
  // runs the rest. Later submissions of the recording run it all again.
  bool HasStream() const;
  Status CollectStream(std::chrono::steady_clock::time_point deadline, size_t* ran) const;

  // Runs commands [first, end) on the calling thread, one after another
  // (which already orders everything a barrier asks for), reporting each to
  // `tracer` when it is not null; a dispatch stops between workgroups once
  // `deadline` passes.
  Status RunInOrder(const Bindings& bindings, Tracer* tracer, std::chrono::steady_clock::time_point deadline,
                    size_t first = 0) const;
  // Runs the workgroups with linear ids [begin, end) of a dispatch (x fastest,
  // then y, then z; from end - 1 down when `bindings.descending` and the
  // entry point allows it). Fails with the first workgroup that returns nonzero,
  // and with DEADLINE_EXCEEDED before a workgroup that would start after
  // `deadline` (the message says how late the stop came).
  Status RunWorkgroups(const DispatchCommand& dispatch, const Bindings& bindings, uint64_t begin, uint64_t end,
                       std::chrono::steady_clock::time_point deadline) const;
  // The error for a dispatch stopped before `workgroup`, `late` after the deadline.
  static Status DeadlineError(const DispatchCommand& dispatch, uint64_t workgroup,
                              std::chrono::steady_clock::duration late);
  // The error for a workgroup that returned `result` (kernel_abi.h names the codes).
  static Status DispatchError(const DispatchCommand& dispatch, int result, uint32_t x, uint32_t y, uint32_t z);
  // Runs bytes [begin, end) of a fill, copy or update (ranges that start on a
  // multiple of the fill's pattern length).
  void RunTransfer(const Command& command, uint64_t begin, uint64_t end) const;
  static uint64_t WorkgroupTotal(const DispatchCommand& dispatch) {
    return uint64_t{dispatch.workgroup_count[0]} * dispatch.workgroup_count[1] * dispatch.workgroup_count[2];
  }
  static uint64_t TransferLength(const Command& command);

  // Reports `command`, which the calling thread ran from `begin` (a
  // Tracer::Now() value) until now: a dispatch under its entry point's
  // name, with its executable, entry point ordinal and workgroup count; a
  // fill, copy or update with its length.
  static void TraceCommand(Tracer* tracer, const Command& command, uint64_t begin);
  // Reports the workgroups [first, last) of a dispatch that the calling
  // thread ran from `begin` until now (its share of a dispatch that cpu-task
  // spread over its workers).
  static void TraceWorkgroups(Tracer* tracer, const DispatchCommand& dispatch, uint64_t first, uint64_t last,
                              uint64_t begin);

 protected:
  void ResetImpl() override;
  Status DispatchImpl(hal::Executable* executable, uint32_t entry_point, hal::WorkgroupCount workgroups,
                      std::span<const uint32_t> constants, std::span<const hal::BufferBinding> bindings) override;
  Status FillImpl(hal::Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                  uint32_t pattern_length) override;
  Status CopyImpl(hal::Buffer* source, uint64_t source_offset, hal::Buffer* target, uint64_t target_offset,
                  uint64_t length) override;
  Status UpdateImpl(std::span<const uint8_t> source, hal::Buffer* target, uint64_t target_offset) override;
  Status BarrierImpl() override;
  Status EndImpl() override;

 private:
  struct Stream;
  // Waits until the helper of `stream` has left, or, when it has not
  // started, makes sure it never does; stream.ran is then final.
  static void AwaitHelper(Stream& stream);
  // Before appending a command with `bindings` bindings, `constants`
  // constants and `update_bytes` bytes of update data: starts streaming at
  // the first dispatch when the streamer says so, or stops it when the
  // arrays would have to grow (the helper reads them in place).
  void BeforeAppend(const CpuExecutable* dispatched, uint32_t entry_point, size_t bindings, size_t constants,
                    size_t update_bytes);
  // After appending: hands the command to the helper.
  void Publish();
  // Stops the helper (after the command it is running) and waits for it.
  void StopStream();
  // The helper's loop: runs the published commands in order until the
  // recording ends or it is stopped.
  void RunStream(Stream& stream) const;

  // Whether the helper is fed the commands recorded: a stream started and
  // not stopped.
  bool Streaming() const;

  const std::shared_ptr<Streamer> streamer_;
  std::shared_ptr<Stream> stream_;
  std::vector<Command> commands_;
  std::vector<void*> binding_pointers_;
  std::vector<uint64_t> binding_lengths_;
  std::vector<uint32_t> constants_;
  std::vector<uint8_t> update_data_;
  // The bindings that name a slot: their index in the binding arrays, the
  // slot, and their range in the slot's entry.
  struct SlotBinding {
    uint32_t index;
    uint32_t slot;
    uint64_t offset;
    uint64_t length;  // hal::Buffer::kWholeBuffer: the rest of the entry
  };
  std::vector<SlotBinding> slot_bindings_;
  // Runs begun (NextRunDescending).
  mutable std::atomic<uint32_t> runs_{0};
};

}  // namespace strata::cpu
