// StreamCommandBuffer: HAL commands recorded as a list of stream operations
// and replayed on the device's stream at each submission (the calls named
// are CUDA's; HIP's are alike).
//
// Recording validates each command (the HAL base class, plus: every buffer
// and executable belongs to this command buffer's device) and lowers it at
// once to operations on device addresses:
//
//   dispatch  cuLaunchKernel of the entry point's function, grid = the
//             workgroup count, block = the entry point's workgroup size,
//             no dynamic shared memory, with the parameters of the ABI
//             (stream_executable.h) built when recorded;
//   fill      cuMemsetD8Async for a 1-byte pattern; for 2- and 4-byte ones,
//             cuMemsetD32Async over the 4-byte-aligned middle with the
//             pattern as it falls there, and the up to 3 bytes before and
//             after copied from upload data (hal/gpu_commands.h);
//   copy      cuMemcpyAsync (unified addressing: any memory to any memory);
//   update    cuMemcpyAsync from upload data;
//   barrier   nothing: one stream runs its operations in order, which orders
//             more than a barrier asks.
//
// Upload data and the check-status words of dispatches with checks live in
// one pinned host buffer allocated at End (kernels write the words through
// its device address; the host reads them after the stream completes).
//
// Checks: as on Vulkan, a command buffer is split into *segments* after every
// barrier that follows a dispatch with checks; the queue thread
// synchronizes after each segment, reads its check words and stops the
// submission before anything after the barrier runs, as on the CPU drivers.
// The first segment zeroes every check word (cuMemsetD32Async) first.
//
// Graphs: from its second execution on, each segment of a command buffer
// runs as a graph captured from its operations (cuStreamBeginCapture,
// cuGraphInstantiate, cuGraphLaunch), which costs the host one launch
// instead of one per operation; a segment that cannot be captured keeps
// running operation by operation. The option graphs=0 of the device turns
// this off.
//
// Indirect command buffers (hal/command_buffer.h): a dispatch binding that
// names a slot records a placeholder for its pointer (and, for a whole
// entry, its length) parameter; each submission resolves them against its
// table, checks each address against the binding alignment, and writes the
// parameters. A segment keeps a graph per binding of its slots (the last
// kGraphsPerSegment bound): one it has run with these addresses before runs
// as their graph, captured at that second execution, while new addresses
// run operation by operation. A program that submits its recording with the
// same buffers on every call (the device allocator hands blocks of the same
// size back) so runs it as graphs from its second call on; tables that
// change at every call cost what a command buffer recorded per call would,
// less the recording.
//
// Ownership and thread safety: see hal/command_buffer.h. Execute and Launch
// run on the device's queue thread only, one submission at a time; the
// graphs they make and the parameters of slot bindings are the only state
// they change. FinishLaunch (the queue's await thread) reads the check words
// of a launch, which no other launch of the command buffer shares.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "drivers/stream/stream_buffer.h"
#include "drivers/stream/stream_context.h"
#include "drivers/stream/stream_executable.h"
#include "hal/command_buffer.h"
#include "hal/gpu_commands.h"
#include "vm/base/trace.h"

namespace strata::stream {

class StreamCommandBuffer final : public hal::CommandBuffer {
 public:
  StreamCommandBuffer(std::shared_ptr<StreamContext> context, Ref<StreamAllocator> allocator,
                    const hal::DeviceLimits& limits, bool graphs);

  const StreamContext* context() const { return context_.get(); }

  // Runs the segments in order on the context's stream, with the slots of
  // `binding_table` bound (indirect command buffers; the table fits, as
  // Device::QueueExecute checked), each followed by a
  // stream synchronization and a look at its check words; stops at the first
  // failed check (with the check's message) or error (a kernel fault fails
  // this and every later submission of the device), or once `deadline` has
  // passed (work the device is running then finishes first: a GPU cannot be
  // stopped mid-kernel). Reports every command to `tracer` when it is not
  // null, with its segment's span.
  Status Execute(std::span<const hal::BufferBinding> binding_table, Tracer* tracer,
                 std::chrono::steady_clock::time_point deadline) const;

  // Pipelined queues (stream_device.h). Launchable: the command buffer is
  // one segment at most (its check words are read once, after it) and not
  // launched already. Launch enqueues it with `binding_table` bound, as
  // Execute would, without waiting (an error leaves nothing running of
  // it); FinishLaunch, once the stream has run it (`waited`: how waiting for
  // it ended, `sticky` as for Synchronize), reads its check words and lets
  // it be launched again.
  bool Launchable() const;
  Status Launch(std::span<const hal::BufferBinding> binding_table) const;
  Status FinishLaunch(const Status& waited, bool sticky) const;

  // Segments recorded by End, and how many run as graphs now (for tests).
  size_t segment_count() const { return segments_.size(); }
  size_t graph_count() const;

 protected:
  ~StreamCommandBuffer() override;

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
  // One stream operation; a HAL command lowers to one to three of them.
  struct Op {
    enum class Kind : uint8_t { kLaunch, kMemsetD8, kMemsetD32, kCopy, kCopyUpload } kind;
    DevicePtr target = 0;
    uint64_t length = 0;         // bytes
    DevicePtr source = 0;      // kCopy
    uint64_t upload_offset = 0;  // kCopyUpload: into the upload data
    uint32_t value = 0;          // memsets: the byte or word
    uint32_t command = 0;        // its command
  };
  // One HAL command, for tracing and checks (hal::GpuRecording).
  struct Command {
    hal::GpuCommandKind kind;
    uint64_t length = 0;  // transfers
    const StreamExecutable* executable = nullptr;
    uint32_t entry_point = 0;
    uint32_t workgroups[3] = {0, 0, 0};
    uint32_t first_parameter = 0;  // into parameters_ and parameter_pointers_
    int32_t check_slot = -1;       // dispatches with checks: their word
    uint32_t first_op = 0, end_op = 0;
  };
  using Recording = hal::GpuRecording<Command, Op>;
  using Segment = Recording::Segment;
  // What Execute learns about a segment: whether it can be captured and,
  // per binding of its slots (the values of their parameters: a key, empty
  // where it binds none), how often it ran so and its graph.
  struct SegmentGraph {
    std::vector<uint64_t> key;
    uint32_t executions = 0;
    GraphHandle graph = nullptr;
  };
  struct SegmentState {
    bool capturable = true;
    std::vector<uint32_t> slots;       // its slot bindings, into slot_parameters_
    std::vector<SegmentGraph> graphs;  // the least recently bound first; the current one last
  };
  // The bindings of its slots a segment keeps graphs for (a program's
  // buffers may come back from the allocator in a different order on
  // alternate calls).
  static constexpr size_t kGraphsPerSegment = 4;

  // A dispatch binding that names a slot: the parameters it fills per
  // submission, and what it was recorded with.
  struct SlotParameter {
    uint32_t pointer = 0;         // into parameters_
    uint32_t length = 0;          // into parameters_
    uint32_t command = 0, binding = 0;
    hal::BufferBinding recorded;  // slot, offset, length (kWholeBuffer: the entry's rest)
  };

  Status CheckBuffer(const char* what, const hal::Buffer* buffer) const;
  // The binding's device address, or an error naming the dispatch and
  // binding when it breaks the binding alignment.
  StatusOr<DevicePtr> BindingAddress(const hal::Executable& executable, uint32_t entry_point, size_t index,
                                     const hal::BufferBinding& binding) const;
  // Writes the parameters of `table`'s slots and makes each segment's
  // graph of those parameters its current one (a new one, never executed,
  // when it has none for them; the least recently bound dropped past
  // kGraphsPerSegment).
  Status BindTable(std::span<const hal::BufferBinding> table) const;
  // Enqueues the segment's operations on the stream.
  Status Enqueue(const Segment& segment, bool first) const;
  // What Execute and Launch do first: the device usable and current, the
  // table's slots bound.
  Status Prepare(std::span<const hal::BufferBinding> binding_table) const;
  // Runs segment `index` on the stream, as its graph where it has one or
  // may capture one, else operation by operation; counts the execution.
  Status RunSegment(size_t index) const;
  // Runs the segment as a graph, capturing it first; false (with nothing
  // enqueued) when it cannot be captured.
  StatusOr<bool> LaunchGraph(size_t index, bool first) const;
  // The segment's failed check, if any, from the words it wrote.
  Status CheckWords(const Segment& segment) const;
  // The error of a failed synchronization, naming the segment's dispatches.
  Status SegmentError(Status status, const Segment& segment) const;
  void DestroyGraphs();

  std::shared_ptr<StreamContext> context_;
  Ref<StreamAllocator> allocator_;
  const bool graphs_;

  Recording recording_;
  // Every dispatch's kernel parameters, each in a 64-bit slot (a 32-bit
  // constant in its low bytes), and a pointer to each slot for the
  // launch, made at End once the slots no longer move.
  // (Those of slot bindings are written per submission, by BindTable.)
  mutable std::vector<uint64_t> parameters_;
  std::vector<void*> parameter_pointers_;
  std::vector<SlotParameter> slot_parameters_;

  Ref<StreamBuffer> host_buffer_;  // check words, then upload data
  uint64_t upload_base_ = 0;     // where the upload data starts in it
  std::vector<Segment> segments_;
  mutable std::vector<SegmentState> segment_states_;
  // Launched and not yet finished (pipelined queues).
  mutable std::atomic<bool> launched_{false};
};

}  // namespace strata::stream
