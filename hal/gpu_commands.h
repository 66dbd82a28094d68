// What the GPU drivers (Vulkan, CUDA) share when they lower HAL commands to
// device operations:
//
// - GpuRecording: the record a GPU command buffer keeps, whatever its device
//   operations are: HAL commands (for tracing and checks), each lowered to
//   device operations, the upload data those copy from, the check-status
//   slots of dispatches with checks, and the segments the queue runs one at
//   a time (below).
// - Check-status words: a kernel with checks (EntryPointInfo::check_messages)
//   writes i + 1 into a 32-bit word the driver zeroed when its check i fails.
//   DispatchCheckStatus turns the word read back after the work into the
//   submission's outcome, the same on every GPU driver and in the words of
//   the CPU drivers' failed checks.
// - Fills: device fill operations write whole 32-bit words at 4-byte-aligned
//   addresses, while the HAL fills any range that is a multiple of its 1-, 2-
//   or 4-byte pattern, at any offset a subspan produces. SplitFill cuts such
//   a fill into up to 3 leading bytes, a 4-byte-aligned middle of whole words
//   (with the pattern rotated as it falls there) and up to 3 trailing bytes.
// - Tracing: TraceCommand reports a recorded command as the CPU drivers do.
//
// The functions are pure (thread-safe); a GpuRecording is recorded by one
// thread and read by the queue's (hal/command_buffer.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hal/executable.h"
#include "vm/base/status.h"
#include "vm/base/trace.h"

namespace strata::hal {

// OK for a zero word. A word naming one of the entry point's checks is
// OUT_OF_RANGE with that check's message (a check of the model: its input is
// what is wrong); any other word is ABORTED, "the kernel returned N".
Status DispatchCheckStatus(uint32_t word, const Executable& executable, uint32_t entry_point);

// A fill of `length` bytes starting at device address `address`.
struct FillSplit {
  uint64_t head = 0;    // bytes before the first 4-byte-aligned address (0 to 3)
  uint64_t middle = 0;  // bytes of whole aligned words that follow (a multiple of 4)
  uint64_t tail = 0;    // bytes after those (0 to 3)
  uint32_t word = 0;    // the middle's words, as the pattern falls there (little-endian)
  uint8_t head_bytes[3] = {};
  uint8_t tail_bytes[3] = {};
};
// Splits a fill of `pattern`'s low `pattern_length` bytes (1, 2 or 4, byte i
// of the fill being byte i % pattern_length of the little-endian pattern).
FillSplit SplitFill(uint64_t address, uint64_t length, uint32_t pattern, uint32_t pattern_length);

// Lowers a split fill in address order: `edge(begin, bytes, count)` for the
// leading and trailing bytes (begin counted from the fill's start),
// `words(begin, length, word)` for the aligned middle; pieces of no bytes are
// left out.
template <typename Edge, typename Words>
void LowerFill(const FillSplit& split, Edge edge, Words words) {
  if (split.head) edge(uint64_t{0}, split.head_bytes, split.head);
  if (split.middle) words(split.head, split.middle, split.word);
  if (split.tail) edge(split.head + split.middle, split.tail_bytes, split.tail);
}

// The kinds of HAL command a GPU command buffer records (barriers are not
// commands: they order the others).
enum class GpuCommandKind : uint8_t { kDispatch, kFill, kCopy, kUpdate };

// `Command` is the driver's record of one HAL command, with at least `kind`
// (GpuCommandKind), `first_op` and `end_op` (its operations), `check_slot`
// (-1, or its check-status slot), `executable` (a pointer to the driver's
// executable), `entry_point`, `workgroups[3]` and `length` (transfers); `Op`
// is one device operation, with `command` (the index of its command).
template <typename Command, typename Op>
class GpuRecording {
 public:
  // Operations [first_op, end_op), which hold commands [first_command,
  // end_command): the queue runs a segment, waits for it and reads its check
  // words before the next, so that a failed check stops the submission
  // before anything after the barrier that ended the segment runs, as on
  // the CPU drivers.
  struct Segment {
    uint32_t first_op = 0, end_op = 0;
    uint32_t first_command = 0, end_command = 0;
  };

  const std::vector<Command>& commands() const { return commands_; }
  const std::vector<Op>& ops() const { return ops_; }
  // Host bytes that operations copy from, each piece 4-byte aligned.
  const std::vector<uint8_t>& upload() const { return upload_; }
  uint32_t check_slots() const { return check_slots_; }

  // Appends a command (its operations follow with AddOp) and returns it.
  Command& AddCommand(GpuCommandKind kind) {
    Command& command = commands_.emplace_back();
    command.kind = kind;
    command.first_op = command.end_op = static_cast<uint32_t>(ops_.size());
    return command;
  }
  // Appends an operation of the last command.
  void AddOp(Op op) {
    op.command = static_cast<uint32_t>(commands_.size() - 1);
    ops_.push_back(op);
    commands_.back().end_op = static_cast<uint32_t>(ops_.size());
  }
  // Appends an operation of no command (a barrier).
  void AddOrderingOp(Op op) { ops_.push_back(op); }
  // Appends bytes to the upload data; returns their offset there.
  uint64_t AddUpload(std::span<const uint8_t> bytes) {
    const uint64_t offset = upload_.size();
    upload_.insert(upload_.end(), bytes.begin(), bytes.end());
    upload_.resize((upload_.size() + 3) / 4 * 4);
    return offset;
  }
  // The check-status slot of a dispatch with checks.
  int32_t AddCheckSlot() {
    pending_checks_ = true;
    return static_cast<int32_t>(check_slots_++);
  }
  // At a barrier: ends a segment when a dispatch with checks came since the
  // last end (true); else the driver orders what follows (false).
  bool EndSegmentAtBarrier() {
    if (!pending_checks_) return false;
    ends_.emplace_back(static_cast<uint32_t>(ops_.size()), static_cast<uint32_t>(commands_.size()));
    pending_checks_ = false;
    return true;
  }
  // The segments of everything recorded, empty ones left out.
  std::vector<Segment> Segments() const {
    std::vector<Segment> segments;
    uint32_t first_op = 0, first_command = 0;
    auto add = [&](uint32_t end_op, uint32_t end_command) {
      if (end_command != first_command) segments.push_back({first_op, end_op, first_command, end_command});
      first_op = end_op;
      first_command = end_command;
    };
    for (const auto& [end_op, end_command] : ends_) add(end_op, end_command);
    add(static_cast<uint32_t>(ops_.size()), static_cast<uint32_t>(commands_.size()));
    return segments;
  }
  // The outcome of a segment's dispatches with checks, given the words the
  // device left (`read_word(slot)`).
  template <typename ReadWord>
  Status CheckWords(const Segment& segment, ReadWord read_word) const {
    for (uint32_t i = segment.first_command; i < segment.end_command; ++i) {
      const Command& command = commands_[i];
      if (command.check_slot < 0) continue;
      STRATA_RETURN_IF_ERROR(
          DispatchCheckStatus(read_word(static_cast<uint32_t>(command.check_slot)), *command.executable,
                              command.entry_point));
    }
    return OkStatus();
  }
  void Reset() {
    commands_.clear();
    ops_.clear();
    upload_.clear();
    check_slots_ = 0;
    pending_checks_ = false;
    ends_.clear();
  }

 private:
  std::vector<Command> commands_;
  std::vector<Op> ops_;
  std::vector<uint8_t> upload_;
  uint32_t check_slots_ = 0;
  bool pending_checks_ = false;  // a dispatch with checks since the last segment ended
  std::vector<std::pair<uint32_t, uint32_t>> ends_;  // (op, command) counts where segments end
};

// Reports `command` (a GpuRecording's) to `tracer` as the CPU drivers report
// theirs: a dispatch under its entry point's name with its executable, entry
// point ordinal and workgroup count; a fill, copy or update with its length.
template <typename Command>
void TraceCommand(Tracer* tracer, const Command& command, uint64_t begin, uint64_t end) {
  if (command.kind == GpuCommandKind::kDispatch) {
    const std::string workgroups = StrCat(command.workgroups[0], "x", command.workgroups[1], "x", command.workgroups[2]);
    const TraceArg args[] = {{"executable", command.executable->name()},
                             {"entry_point", int64_t{command.entry_point}},
                             {"workgroup_count", workgroups}};
    tracer->Record({"dispatch", command.executable->entry_points()[command.entry_point].name, begin, end, args});
    return;
  }
  const char* name = command.kind == GpuCommandKind::kFill   ? "fill"
                     : command.kind == GpuCommandKind::kCopy ? "copy"
                                                             : "update";
  const TraceArg args[] = {{"length", static_cast<int64_t>(command.length)}};
  tracer->Record({"transfer", name, begin, end, args});
}

}  // namespace strata::hal
