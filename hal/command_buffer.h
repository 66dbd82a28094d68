// CommandBuffer: a recorded sequence of device work, submitted to a queue.
//
// Commands: dispatch (an executable's entry point over a 3-D grid of
// workgroups, with push constants and buffer bindings), fill (a 1-, 2- or
// 4-byte pattern), copy, update (host bytes captured at record time) and
// execution barriers. Commands between two barriers may run concurrently and
// in any order (the task driver does run them concurrently); a barrier makes
// every later command wait for every earlier one to finish, as a Vulkan
// pipeline barrier with full execution and memory dependencies does.
//
// Every command is validated when it is recorded, against the buffer's range,
// usage and access, the device's alignment and workgroup limits and the
// executable's entry point (binding and constant counts), and a bad command
// fails with a message naming the argument and the expected and actual values.
// A failed command is not recorded; the command buffer stays usable.
// Execution therefore never meets a malformed command.
//
// Indirect command buffers (Device::CreateIndirectCommandBuffer): a dispatch
// binding may name a slot of a binding table instead of a buffer
// (BufferBinding::Slot), and each submission gives the table (one entry per
// slot: a buffer range), as IREE's indirect command buffers do. A program
// records one once and submits it on every call with that call's buffers,
// instead of recording the same commands again. What cannot be checked when
// recording (the buffer's usage and access, the range) is checked against
// the table when it is submitted (CheckBindingTable). Fills, copies and
// updates name buffers.
//
// Life cycle: Begin (from any state; drops what was recorded), record, End;
// then submit as often as wanted, also concurrently. Begin fails while a
// submission of the command buffer is still pending.
//
// Ownership: a RefObject that retains every executable and buffer it records
// until it is re-begun or destroyed, so callers may drop theirs right after
// recording. Queues retain the command buffers they run.
//
// Thread safety: recording (Begin, the commands, End) is not thread-safe: one
// thread records. A command buffer that has ended is immutable and may be
// submitted from several threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "hal/buffer.h"
#include "hal/executable.h"
#include "hal/resource.h"
#include "vm/base/status.h"

namespace strata::hal {

class CommandLog;

struct WorkgroupCount {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;
};

// What a device allows in commands; part of DeviceInfo.
struct DeviceLimits {
  // Dispatch binding offsets must be multiples of this (a power of two).
  uint64_t min_binding_alignment = 16;
  // Per dimension.
  uint32_t max_workgroup_count[3] = {65535, 65535, 65535};
};

class CommandBuffer : public Resource {
 public:
  static const RefTypeInfo kType;  // "hal.command_buffer"
  // The most bytes one Update may carry (Vulkan's limit for vkCmdUpdateBuffer;
  // larger host data belongs in a buffer and a copy).
  static constexpr uint64_t kMaxUpdateSize = 65536;

  enum class State : uint8_t { kInitial, kRecording, kExecutable };
  State state() const { return state_; }

  Status Begin();
  Status End();

  // Dispatches `entry_point` of `executable` over `workgroups` (a count of 0 in
  // any dimension records nothing). `constants` and `bindings` must match the
  // entry point's counts; binding lengths may be Buffer::kWholeBuffer.
  Status Dispatch(Executable* executable, uint32_t entry_point, WorkgroupCount workgroups,
                  std::span<const uint32_t> constants, std::span<const BufferBinding> bindings);
  // Fills [offset, offset + length) with the low `pattern_length` (1, 2 or 4)
  // bytes of `pattern`, repeated; offset and length must be multiples of
  // pattern_length.
  Status Fill(Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern, uint32_t pattern_length);
  // Copies `length` bytes; the ranges must not overlap.
  Status Copy(Buffer* source, uint64_t source_offset, Buffer* target, uint64_t target_offset, uint64_t length);
  // Writes `source` (copied now, at most kMaxUpdateSize bytes) at
  // target_offset; offset and size must be multiples of 4.
  Status Update(std::span<const uint8_t> source, Buffer* target, uint64_t target_offset);
  Status Barrier();

  // Whether the command buffer was created by
  // Device::CreateStreamedCommandBuffer: its submissions may not wait.
  bool streamed() const { return streamed_; }
  // For devices' CreateStreamedCommandBuffer.
  void MarkStreamed() { streamed_ = true; }

  // Dispatches recorded since Begin (those of zero workgroups record nothing
  // and are not counted); the device adds them up per submission.
  uint32_t dispatch_count() const { return dispatch_count_; }

  // Whether the command buffer was created by
  // Device::CreateIndirectCommandBuffer: its dispatches may bind slots.
  bool indirect() const { return indirect_; }
  // For devices' CreateIndirectCommandBuffer.
  void MarkIndirect() { indirect_ = true; }
  // The most slots a binding table may have.
  static constexpr uint32_t kMaxBindingSlots = 4096;
  // The slots recorded since Begin: one past the highest named (0: none).
  uint32_t slot_count() const { return static_cast<uint32_t>(slots_.size()); }
  // Checks the binding table of a submission (of its command buffer
  // `index`) against the slots recorded: at least slot_count() entries,
  // each used one a range of a buffer of this device with dispatch storage
  // usage, the access its bindings need, an aligned offset, and room for
  // every binding's range in it (the entries of unused slots may be null).
  Status CheckBindingTable(size_t index, std::span<const BufferBinding> table) const;
  // The command buffer as a CommandLog (hal/command_log.h), or null.
  virtual const CommandLog* AsLog() const { return nullptr; }
  // The bytes of a table entry (CheckBindingTable accepted), its
  // kWholeBuffer resolved.
  static uint64_t EntryLength(const BufferBinding& entry) {
    return entry.length == Buffer::kWholeBuffer ? entry.buffer->byte_length() - entry.offset : entry.length;
  }
  // The buffer range a slot binding names in a table CheckBindingTable
  // accepted.
  static BufferBinding ResolveSlot(const BufferBinding& binding, std::span<const BufferBinding> table) {
    const BufferBinding& entry = table[binding.slot];
    return {entry.buffer, entry.offset + binding.offset,
            binding.length == Buffer::kWholeBuffer ? EntryLength(entry) - binding.offset : binding.length};
  }

  // For queue implementations: a submission holds the command buffer pending
  // from submit until its work is done; Begin is refused meanwhile.
  Status CheckSubmittable() const;
  void AddPendingSubmission() { pending_submissions_.fetch_add(1, std::memory_order_relaxed); }
  void RemovePendingSubmission() { pending_submissions_.fetch_sub(1, std::memory_order_release); }

 protected:
  CommandBuffer(const DriverFamily* family, const DeviceLimits& limits)
      : Resource(&kType, family), limits_(limits) {}
  // Releases what RetainResource kept.
  ~CommandBuffer() override;

  // Keeps `resource` alive until the next Begin or the command buffer's
  // destruction (drivers call it for every executable and buffer a command
  // uses); skips the atomic increment for a resource retained by one of the
  // last few commands (a dispatch sequence binds the same buffers over and
  // over).
  void RetainResource(RefObject* resource);

  // Driver hooks, called with validated arguments (binding lengths resolved).
  virtual void ResetImpl() = 0;
  virtual Status DispatchImpl(Executable* executable, uint32_t entry_point, WorkgroupCount workgroups,
                              std::span<const uint32_t> constants, std::span<const BufferBinding> bindings) = 0;
  virtual Status FillImpl(Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                          uint32_t pattern_length) = 0;
  virtual Status CopyImpl(Buffer* source, uint64_t source_offset, Buffer* target, uint64_t target_offset,
                          uint64_t length) = 0;
  virtual Status UpdateImpl(std::span<const uint8_t> source, Buffer* target, uint64_t target_offset) = 0;
  virtual Status BarrierImpl() = 0;
  // Called by End once recording is complete (GPU drivers finish their
  // device command buffers here); a failure leaves the command buffer
  // recording. Nothing to do by default.
  virtual Status EndImpl() { return OkStatus(); }

 private:
  Status CheckRecording(const char* what) const;
  Status CheckResource(const char* what, const Resource* resource) const;

  void ReleaseRetained();

  DeviceLimits limits_;
  std::vector<RefObject*> retained_;
  // What the bindings recorded so far need of each slot's entry: room for
  // bytes [0, end), `access`; and the binding that asks the most, for
  // messages.
  struct SlotNeeds {
    bool used = false;
    uint64_t end = 0;
    MemoryAccesses access = 0;
    uint32_t dispatch = 0, binding = 0;
  };
  std::vector<SlotNeeds> slots_;
  State state_ = State::kInitial;
  bool streamed_ = false;
  bool indirect_ = false;
  uint32_t dispatch_count_ = 0;
  std::atomic<uint32_t> pending_submissions_{0};
};

}  // namespace strata::hal
