#include "drivers/cpu/cpu_command_buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "drivers/cpu/cpu_buffer.h"
#include "drivers/cpu/cpu_device.h"

namespace strata::cpu {

CpuCommandBuffer::CpuCommandBuffer(const hal::DeviceLimits& limits) : CommandBuffer(&kCpuFamily, limits) {}

void CpuCommandBuffer::ResetImpl() {
  commands_.clear();
  binding_pointers_.clear();
  binding_lengths_.clear();
  constants_.clear();
  update_data_.clear();
}

Status CpuCommandBuffer::DispatchImpl(hal::Executable* executable, uint32_t entry_point,
                                      hal::WorkgroupCount workgroups, std::span<const uint32_t> constants,
                                      std::span<const hal::BufferBinding> bindings) {
  auto* cpu_executable = static_cast<CpuExecutable*>(executable);
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
    RetainResource(binding.buffer);
    binding_pointers_.push_back(HostPointer(binding.buffer, binding.offset));
    binding_lengths_.push_back(binding.length);
  }
  constants_.insert(constants_.end(), constants.begin(), constants.end());
  return OkStatus();
}

Status CpuCommandBuffer::FillImpl(hal::Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                                  uint32_t pattern_length) {
  RetainResource(target);
  Command& command = commands_.emplace_back();
  command.kind = Kind::kFill;
  command.fill = {HostPointer(target, offset), length, pattern, pattern_length};
  return OkStatus();
}

Status CpuCommandBuffer::CopyImpl(hal::Buffer* source, uint64_t source_offset, hal::Buffer* target,
                                  uint64_t target_offset, uint64_t length) {
  RetainResource(source);
  RetainResource(target);
  Command& command = commands_.emplace_back();
  command.kind = Kind::kCopy;
  command.copy = {HostPointer(source, source_offset), HostPointer(target, target_offset), length};
  return OkStatus();
}

Status CpuCommandBuffer::UpdateImpl(std::span<const uint8_t> source, hal::Buffer* target, uint64_t target_offset) {
  RetainResource(target);
  Command& command = commands_.emplace_back();
  command.kind = Kind::kUpdate;
  command.update = {HostPointer(target, target_offset), source.size(), update_data_.size()};
  update_data_.insert(update_data_.end(), source.begin(), source.end());
  return OkStatus();
}

Status CpuCommandBuffer::BarrierImpl() {
  // Consecutive barriers order nothing more than one does.
  if (!commands_.empty() && commands_.back().kind == Kind::kBarrier) return OkStatus();
  commands_.emplace_back().kind = Kind::kBarrier;
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

Status CpuCommandBuffer::RunInOrder(Tracer* tracer, std::chrono::steady_clock::time_point deadline) const {
  for (const Command& command : commands_) {
    const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
    switch (command.kind) {
      case Kind::kDispatch:
        STRATA_RETURN_IF_ERROR(RunWorkgroups(command.dispatch, 0, WorkgroupTotal(command.dispatch), deadline));
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

Status CpuCommandBuffer::RunWorkgroups(const DispatchCommand& dispatch, uint64_t begin, uint64_t end,
                                       std::chrono::steady_clock::time_point deadline) const {
  const bool timed = deadline != std::chrono::steady_clock::time_point::max();
  strata_cpu_dispatch_v0_t state;
  const uint32_t count_x = dispatch.workgroup_count[0];
  const uint32_t count_y = dispatch.workgroup_count[1];
  state.workgroup_count[0] = count_x;
  state.workgroup_count[1] = count_y;
  state.workgroup_count[2] = dispatch.workgroup_count[2];
  state.binding_count = dispatch.binding_count;
  state.constant_count = dispatch.constant_count;
  state.bindings = binding_pointers_.data() + dispatch.first_binding;
  state.binding_lengths = binding_lengths_.data() + dispatch.first_binding;
  state.constants = constants_.data() + dispatch.first_constant;
  state.local_memory = nullptr;
  state.local_memory_size = 0;
  const hal::EntryPointInfo& entry = dispatch.executable->entry_points()[dispatch.entry_point];
  if (entry.local_memory_bytes != 0) {
    STRATA_ASSIGN_OR_RETURN(state.local_memory, ThreadLocalMemory(entry.local_memory_bytes, entry));
    state.local_memory_size = entry.local_memory_bytes;
  }
  // Decompose the first id once, then step x, carrying into y and z.
  uint32_t x = static_cast<uint32_t>(begin % count_x);
  uint32_t y = static_cast<uint32_t>(begin / count_x % count_y);
  uint32_t z = static_cast<uint32_t>(begin / count_x / count_y);
  for (uint64_t i = begin; i < end; ++i) {
    state.workgroup_id[0] = x;
    state.workgroup_id[1] = y;
    state.workgroup_id[2] = z;
    if (timed) [[unlikely]] {
      const auto now = std::chrono::steady_clock::now();
      if (now > deadline) return DeadlineError(dispatch, i, now - deadline);
    }
    int result = dispatch.kernel(&state);
    if (result != 0) [[unlikely]] return DispatchError(dispatch, result, x, y, z);
    if (++x == count_x) {
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
