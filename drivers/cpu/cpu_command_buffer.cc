#include "drivers/cpu/cpu_command_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "drivers/cpu/cpu_buffer.h"
#include "drivers/cpu/cpu_device.h"
#include "drivers/cpu/spin.h"

namespace strata::cpu {

// The state the recording thread shares with the helper that runs a
// streamed command buffer's commands.
struct CpuCommandBuffer::Stream {
  // Commands [0, published) are recorded, their data in place.
  std::atomic<uint32_t> published{0};
  // No more will be (End), or the helper is to stop after its command.
  std::atomic<bool> ended{false};
  std::atomic<bool> stop{false};
  // kWaiting until the helper starts (kRunning), kDone once it left; kCancelled
  // when the recording thread took the stream back before it started.
  enum : int { kWaiting, kRunning, kDone, kCancelled };
  std::atomic<int> state{kWaiting};
  // The submission's deadline once it is known (steady_clock ticks).
  std::atomic<int64_t> deadline{std::chrono::steady_clock::time_point::max().time_since_epoch().count()};
  // Written by the helper before kDone.
  uint32_t ran = 0;
  Status status;
  // Whether a submission collected it (recording thread only).
  bool collected = false;
};

namespace {

// What a streamed command buffer reserves when it starts streaming, so that
// the helper can read the arrays in place while more is appended: a
// command buffer that outgrows them stops streaming, and its submission
// runs the rest (ViT at batch 1 records 151 commands and 510 bindings).
constexpr size_t kStreamCommands = 512;
constexpr size_t kStreamBindings = 4096;
constexpr size_t kStreamConstants = 2048;
constexpr size_t kStreamUpdateBytes = 4096;

}  // namespace

CpuCommandBuffer::CpuCommandBuffer(const hal::DeviceLimits& limits, std::shared_ptr<Streamer> streamer)
    : CommandBuffer(&kCpuFamily, limits), streamer_(std::move(streamer)) {}

CpuCommandBuffer::~CpuCommandBuffer() { StopStream(); }

void CpuCommandBuffer::AwaitHelper(Stream& s) {
  int waiting = Stream::kWaiting;
  if (s.state.compare_exchange_strong(waiting, Stream::kCancelled, std::memory_order_acq_rel)) return;
  SpinUntil([&] {
    const int state = s.state.load(std::memory_order_acquire);
    return state == Stream::kDone || state == Stream::kCancelled;
  });
}

bool CpuCommandBuffer::Streaming() const {
  // Only this thread sets stop.
  return stream_ && !stream_->stop.load(std::memory_order_relaxed);
}

void CpuCommandBuffer::StopStream() {
  if (!stream_) return;
  stream_->stop.store(true, std::memory_order_release);
  AwaitHelper(*stream_);
}

void CpuCommandBuffer::BeforeAppend(const CpuExecutable* dispatched, uint32_t entry_point, size_t bindings,
                                    size_t constants, size_t update_bytes) {
  // At the first dispatch (the base class counts one once DispatchImpl has
  // recorded it).
  if (dispatched && dispatch_count() == 0 && streamer_ && streamer_->Decide(dispatched, entry_point)) {
    // Reserved before the helper starts: from now on the arrays must not
    // move while it may read them.
    commands_.reserve(kStreamCommands);
    binding_pointers_.reserve(kStreamBindings);
    binding_lengths_.reserve(kStreamBindings);
    constants_.reserve(kStreamConstants);
    update_data_.reserve(kStreamUpdateBytes);
    stream_ = std::make_shared<Stream>();
    stream_->published.store(static_cast<uint32_t>(commands_.size()), std::memory_order_release);
    streamer_->Launch([this, stream = stream_] {
      // A helper that starts after the recording thread took the stream
      // back (the command buffer may be gone) leaves at once.
      int waiting = Stream::kWaiting;
      if (stream->state.compare_exchange_strong(waiting, Stream::kRunning, std::memory_order_acq_rel)) {
        RunStream(*stream);
      }
    });
  }
  if (Streaming() && (commands_.size() + 1 > commands_.capacity() ||
                     binding_pointers_.size() + bindings > binding_pointers_.capacity() ||
                     constants_.size() + constants > constants_.capacity() ||
                     update_data_.size() + update_bytes > update_data_.capacity())) {
    StopStream();
  }
}

void CpuCommandBuffer::Publish() {
  if (Streaming()) stream_->published.store(static_cast<uint32_t>(commands_.size()), std::memory_order_release);
}

void CpuCommandBuffer::RunStream(Stream& s) const {
  // The arrays' storage, fixed while streaming (BeforeAppend).
  const Command* const commands = commands_.data();
  uint32_t next = 0;
  for (int idle = 0; !s.stop.load(std::memory_order_acquire);) {
    if (next < s.published.load(std::memory_order_acquire)) {
      const Command& command = commands[next];
      if (command.kind == Kind::kDispatch) {
        const auto deadline = std::chrono::steady_clock::time_point(
            std::chrono::steady_clock::duration(s.deadline.load(std::memory_order_relaxed)));
        Status status = RunWorkgroups(command.dispatch, OwnBindings(), 0, WorkgroupTotal(command.dispatch), deadline);
        if (!status.ok()) [[unlikely]] {
          s.status = std::move(status);
          break;
        }
      } else if (command.kind != Kind::kBarrier) {
        RunTransfer(command, 0, TransferLength(command));
      }
      ++next;
      idle = 0;
      continue;
    }
    // Ended is set after the last command was published: seen, nothing
    // more will come.
    if (s.ended.load(std::memory_order_acquire) && next == s.published.load(std::memory_order_acquire)) break;
    if (streamer_->Stopping()) break;
    if (++idle >= 1024) std::this_thread::yield();
    else SpinPause();
  }
  s.ran = next;
  s.state.store(Stream::kDone, std::memory_order_release);
}

bool CpuCommandBuffer::HasStream() const { return stream_ && !stream_->collected; }

Status CpuCommandBuffer::CollectStream(std::chrono::steady_clock::time_point deadline, size_t* ran) const {
  Stream& s = *stream_;
  s.collected = true;
  s.deadline.store(deadline.time_since_epoch().count(), std::memory_order_relaxed);
  // (A helper that had not started never does: everything is then the
  // submission's, s.ran 0.)
  AwaitHelper(s);
  *ran = s.ran;
  return s.status;
}

Status CpuCommandBuffer::EndImpl() {
  if (stream_) stream_->ended.store(true, std::memory_order_release);
  return OkStatus();
}

void CpuCommandBuffer::ResetImpl() {
  runs_.store(0, std::memory_order_relaxed);
  StopStream();
  stream_.reset();
  commands_.clear();
  binding_pointers_.clear();
  binding_lengths_.clear();
  constants_.clear();
  update_data_.clear();
  slot_bindings_.clear();
}

CpuCommandBuffer::Bindings CpuCommandBuffer::Bind(std::span<const hal::BufferBinding> table,
                                                  BoundStorage* storage) const {
  if (slot_bindings_.empty()) return OwnBindings();
  storage->pointers.assign(binding_pointers_.begin(), binding_pointers_.end());
  storage->lengths.assign(binding_lengths_.begin(), binding_lengths_.end());
  storage->slot_bases.assign(table.size(), nullptr);
  for (const SlotBinding& binding : slot_bindings_) {
    const hal::BufferBinding& entry = table[binding.slot];
    uint8_t*& base = storage->slot_bases[binding.slot];
    if (!base) base = static_cast<uint8_t*>(HostPointer(entry.buffer, entry.offset));
    storage->pointers[binding.index] = base + binding.offset;
    storage->lengths[binding.index] =
        binding.length == hal::Buffer::kWholeBuffer ? EntryLength(entry) - binding.offset : binding.length;
  }
  return {storage->pointers.data(), storage->lengths.data()};
}

Status CpuCommandBuffer::DispatchImpl(hal::Executable* executable, uint32_t entry_point,
                                      hal::WorkgroupCount workgroups, std::span<const uint32_t> constants,
                                      std::span<const hal::BufferBinding> bindings) {
  auto* cpu_executable = static_cast<CpuExecutable*>(executable);
  BeforeAppend(cpu_executable, entry_point, bindings.size(), constants.size(), 0);
  RetainResource(cpu_executable);
  Command& command = commands_.emplace_back();
  command.kind = Kind::kDispatch;
  DispatchCommand& dispatch = command.dispatch;
  dispatch.kernel = cpu_executable->kernel(entry_point);
  dispatch.executable = cpu_executable;
  dispatch.entry_point = entry_point;
  dispatch.workgroup_count[0] = workgroups.x;
  dispatch.workgroup_count[1] = workgroups.y;
  dispatch.workgroup_count[2] = workgroups.z;
  dispatch.binding_count = static_cast<uint32_t>(bindings.size());
  dispatch.constant_count = static_cast<uint32_t>(constants.size());
  dispatch.first_binding = static_cast<uint32_t>(binding_pointers_.size());
  dispatch.first_constant = static_cast<uint32_t>(constants_.size());
  for (const hal::BufferBinding& binding : bindings) {
    if (binding.indirect()) {
      // Filled in per submission (Bind).
      slot_bindings_.push_back(
          {static_cast<uint32_t>(binding_pointers_.size()), binding.slot, binding.offset, binding.length});
      binding_pointers_.push_back(nullptr);
      binding_lengths_.push_back(0);
      continue;
    }
    RetainResource(binding.buffer);
    binding_pointers_.push_back(HostPointer(binding.buffer, binding.offset));
    binding_lengths_.push_back(binding.length);
  }
  constants_.insert(constants_.end(), constants.begin(), constants.end());
  Publish();
  return OkStatus();
}

Status CpuCommandBuffer::FillImpl(hal::Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                                  uint32_t pattern_length) {
  BeforeAppend(nullptr, 0, 0, 0, 0);
  RetainResource(target);
  Command& command = commands_.emplace_back();
  command.kind = Kind::kFill;
  command.fill = {HostPointer(target, offset), length, pattern, pattern_length};
  Publish();
  return OkStatus();
}

Status CpuCommandBuffer::CopyImpl(hal::Buffer* source, uint64_t source_offset, hal::Buffer* target,
                                  uint64_t target_offset, uint64_t length) {
  BeforeAppend(nullptr, 0, 0, 0, 0);
  RetainResource(source);
  RetainResource(target);
  Command& command = commands_.emplace_back();
  command.kind = Kind::kCopy;
  command.copy = {HostPointer(source, source_offset), HostPointer(target, target_offset), length};
  Publish();
  return OkStatus();
}

Status CpuCommandBuffer::UpdateImpl(std::span<const uint8_t> source, hal::Buffer* target, uint64_t target_offset) {
  BeforeAppend(nullptr, 0, 0, 0, source.size());
  RetainResource(target);
  Command& command = commands_.emplace_back();
  command.kind = Kind::kUpdate;
  command.update = {HostPointer(target, target_offset), source.size(), update_data_.size()};
  update_data_.insert(update_data_.end(), source.begin(), source.end());
  Publish();
  return OkStatus();
}

Status CpuCommandBuffer::BarrierImpl() {
  // Consecutive barriers order nothing more than one does.
  if (!commands_.empty() && commands_.back().kind == Kind::kBarrier) return OkStatus();
  BeforeAppend(nullptr, 0, 0, 0, 0);
  commands_.emplace_back().kind = Kind::kBarrier;
  Publish();
  return OkStatus();
}

Status CpuCommandBuffer::DispatchError(const DispatchCommand& dispatch, int result, uint32_t x, uint32_t y,
                                       uint32_t z) {
  const hal::EntryPointInfo& entry = dispatch.executable->entry_points()[dispatch.entry_point];
  const std::string where =
      STRATA_FOR_MESSAGE(StrCat("dispatch of '", entry.name, "' (executable '", dispatch.executable->name(), "')"));
  const int64_t check = int64_t{result} - STRATA_CPU_KERNEL_CHECK_BASE;
  if (check >= 0 && check < static_cast<int64_t>(entry.check_messages.size())) {
    // A check of the model itself (a bounds check on an index it computed
    // from an input, say): the input is what is wrong.
    return OutOfRangeError(where, " failed a check of the model: ", entry.check_messages[check], " (workgroup (",
                           x, ", ", y, ", ", z, "))");
  }
  if (result == 3 && entry.local_memory_bytes != 0) {
    return DataLossError(where, " failed: the kernel needs more local memory than the ", entry.local_memory_bytes,
                         " bytes its metadata declares (workgroup (", x, ", ", y, ", ", z, "))");
  }
  return AbortedError(where, " failed: workgroup (", x, ", ", y, ", ", z, ") returned ", result);
}

Status CpuCommandBuffer::DeadlineError(const DispatchCommand& dispatch, uint64_t workgroup,
                                       std::chrono::steady_clock::duration late) {
  const hal::EntryPointInfo& entry = dispatch.executable->entry_points()[dispatch.entry_point];
  const double late_ms = std::chrono::duration<double, std::milli>(late).count();
  return DeadlineExceededError("dispatch of '", entry.name, "' stopped ", late_ms,
                               " ms after the call's deadline, before workgroup ", workgroup, " of ",
                               WorkgroupTotal(dispatch));
}

namespace {

// The calling thread's local memory for kernels (kernel_abi.h), grown to the
// largest size asked for and kept until the thread ends, so that workgroups
// and dispatches that run on it one after another share one buffer.
StatusOr<void*> ThreadLocalMemory(uint64_t bytes, const hal::EntryPointInfo& entry) {
  struct Buffer {
    void* data = nullptr;
    uint64_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (buffer.size >= bytes) return buffer.data;
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  void* grown = std::aligned_alloc(64, static_cast<size_t>(rounded));
  if (!grown) {
    return ResourceExhaustedError("dispatch of '", entry.name, "': cannot allocate ", bytes,
                                  " bytes of local memory for the thread running it");
  }
  std::free(buffer.data);
  buffer.data = grown;
  buffer.size = rounded;
  return grown;
}

}  // namespace

Status CpuCommandBuffer::RunInOrder(const Bindings& bindings, Tracer* tracer,
                                    std::chrono::steady_clock::time_point deadline,
                                    size_t first) const {
  for (const Command& command : std::span<const Command>(commands_).subspan(std::min(first, commands_.size()))) {
    const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
    switch (command.kind) {
      case Kind::kDispatch:
        STRATA_RETURN_IF_ERROR(
            RunWorkgroups(command.dispatch, bindings, 0, WorkgroupTotal(command.dispatch), deadline));
        break;
      case Kind::kFill:
      case Kind::kCopy:
      case Kind::kUpdate:
        RunTransfer(command, 0, TransferLength(command));
        break;
      case Kind::kBarrier: continue;
    }
    if (ActiveTracer(tracer)) TraceCommand(tracer, command, trace_begin);
  }
  return OkStatus();
}

Status CpuCommandBuffer::RunWorkgroups(const DispatchCommand& dispatch, const Bindings& bindings, uint64_t begin,
                                       uint64_t end,
                                       std::chrono::steady_clock::time_point deadline) const {
  if (begin >= end) return OkStatus();
  const bool timed = deadline != std::chrono::steady_clock::time_point::max();
  strata_cpu_dispatch_v0_t state;
  const uint32_t count_x = dispatch.workgroup_count[0];
  const uint32_t count_y = dispatch.workgroup_count[1];
  state.workgroup_count[0] = count_x;
  state.workgroup_count[1] = count_y;
  state.workgroup_count[2] = dispatch.workgroup_count[2];
  state.binding_count = dispatch.binding_count;
  state.constant_count = dispatch.constant_count;
  state.bindings = bindings.pointers + dispatch.first_binding;
  state.binding_lengths = bindings.lengths + dispatch.first_binding;
  state.constants = constants_.data() + dispatch.first_constant;
  state.local_memory = nullptr;
  state.local_memory_size = 0;
  const hal::EntryPointInfo& entry = dispatch.executable->entry_points()[dispatch.entry_point];
  if (entry.local_memory_bytes != 0) {
    STRATA_ASSIGN_OR_RETURN(state.local_memory, ThreadLocalMemory(entry.local_memory_bytes, entry));
    state.local_memory_size = entry.local_memory_bytes;
  }
  // Decompose the first id once, then step x, carrying into y and z (or
  // borrowing from them, descending).
  const bool descending = bindings.descending && !entry.ascending_workgroups;
  const uint64_t first = descending ? end - 1 : begin;
  uint32_t x = static_cast<uint32_t>(first % count_x);
  uint32_t y = static_cast<uint32_t>(first / count_x % count_y);
  uint32_t z = static_cast<uint32_t>(first / count_x / count_y);
  for (uint64_t n = 0; n < end - begin; ++n) {
    state.workgroup_id[0] = x;
    state.workgroup_id[1] = y;
    state.workgroup_id[2] = z;
    if (timed) [[unlikely]] {
      const auto now = std::chrono::steady_clock::now();
      if (now > deadline) return DeadlineError(dispatch, descending ? end - 1 - n : begin + n, now - deadline);
    }
    int result = dispatch.kernel(&state);
    if (result != 0) [[unlikely]] return DispatchError(dispatch, result, x, y, z);
    if (descending) {
      if (x-- == 0) {
        x = count_x - 1;
        if (y-- == 0) {
          y = count_y - 1;
          --z;
        }
      }
    } else if (++x == count_x) {
      x = 0;
      if (++y == count_y) {
        y = 0;
        ++z;
      }
    }
  }
  return OkStatus();
}

uint64_t CpuCommandBuffer::TransferLength(const Command& command) {
  switch (command.kind) {
    case Kind::kFill: return command.fill.length;
    case Kind::kCopy: return command.copy.length;
    case Kind::kUpdate: return command.update.length;
    case Kind::kDispatch:
    case Kind::kBarrier: break;
  }
  return 0;
}

void CpuCommandBuffer::TraceCommand(Tracer* tracer, const Command& command, uint64_t begin) {
  if (command.kind == Kind::kDispatch) {
    const DispatchCommand& dispatch = command.dispatch;
    const std::string workgroups =
        StrCat(dispatch.workgroup_count[0], "x", dispatch.workgroup_count[1], "x", dispatch.workgroup_count[2]);
    const TraceArg args[] = {{"executable", dispatch.executable->name()},
                                 {"entry_point", int64_t{dispatch.entry_point}},
                                 {"workgroup_count", workgroups}};
    tracer->Record({"dispatch", dispatch.executable->entry_points()[dispatch.entry_point].name, begin,
                    Tracer::Now(), args});
    return;
  }
  const char* name = command.kind == Kind::kFill ? "fill" : command.kind == Kind::kCopy ? "copy" : "update";
  const TraceArg args[] = {{"length", static_cast<int64_t>(TransferLength(command))}};
  tracer->Record({"transfer", name, begin, Tracer::Now(), args});
}

void CpuCommandBuffer::TraceWorkgroups(Tracer* tracer, const DispatchCommand& dispatch, uint64_t first,
                                       uint64_t last, uint64_t begin) {
  const TraceArg args[] = {{"first", static_cast<int64_t>(first)}, {"last", static_cast<int64_t>(last)}};
  tracer->Record({"workgroups", dispatch.executable->entry_points()[dispatch.entry_point].name, begin,
                  Tracer::Now(), args});
}

void CpuCommandBuffer::RunTransfer(const Command& command, uint64_t begin, uint64_t end) const {
  const size_t length = static_cast<size_t>(end - begin);
  switch (command.kind) {
    case Kind::kFill: {
      const FillCommand& fill = command.fill;
      uint8_t* target = fill.target + begin;
      if (fill.pattern_length == 1) {
        std::memset(target, static_cast<int>(fill.pattern), length);
      } else if (fill.pattern_length == 2) {
        const uint16_t pattern = static_cast<uint16_t>(fill.pattern);
        for (size_t i = 0; i < length; i += 2) std::memcpy(target + i, &pattern, 2);
      } else {
        for (size_t i = 0; i < length; i += 4) std::memcpy(target + i, &fill.pattern, 4);
      }
      break;
    }
    case Kind::kCopy:
      std::memcpy(command.copy.target + begin, command.copy.source + begin, length);
      break;
    case Kind::kUpdate:
      std::memcpy(command.update.target + begin, update_data_.data() + command.update.data_offset + begin, length);
      break;
    case Kind::kDispatch:
    case Kind::kBarrier: break;
  }
}

}  // namespace strata::cpu
