#include "hal/command_buffer.h"

#include <algorithm>

namespace strata::hal {

const RefTypeInfo CommandBuffer::kType = {"hal.command_buffer"};

static const char* StateName(CommandBuffer::State state) {
  switch (state) {
    case CommandBuffer::State::kInitial: return "initial (never begun)";
    case CommandBuffer::State::kRecording: return "recording";
    case CommandBuffer::State::kExecutable: return "executable (ended)";
  }
  return "?";
}

CommandBuffer::~CommandBuffer() { ReleaseRetained(); }

void CommandBuffer::RetainResource(RefObject* resource) {
  constexpr size_t kRecent = 8;
  const size_t recent = std::min(retained_.size(), kRecent);
  for (size_t i = retained_.size() - recent; i < retained_.size(); ++i) {
    if (retained_[i] == resource) return;
  }
  resource->Retain();
  retained_.push_back(resource);
}

void CommandBuffer::ReleaseRetained() {
  for (RefObject* resource : retained_) resource->Release();
  retained_.clear();
}

Status CommandBuffer::CheckRecording(const char* what) const {
  if (state_ != State::kRecording) {
    return FailedPreconditionError(what, ": the command buffer is not recording (state: ", StateName(state_),
                                   "); call begin first");
  }
  return OkStatus();
}

Status CommandBuffer::CheckResource(const char* what, const Resource* resource) const {
  if (!resource) return InvalidArgumentError(what, " is null");
  if (resource->family() != family()) {
    return InvalidArgumentError(what, " was created by a '", resource->family()->name,
                                "' device; this command buffer belongs to a '", family()->name, "' device");
  }
  return OkStatus();
}

Status CommandBuffer::Begin() {
  uint32_t pending = pending_submissions_.load(std::memory_order_acquire);
  if (pending) {
    return FailedPreconditionError("command buffer begin: still in use by ", pending,
                                   " pending submission", pending == 1 ? "" : "s",
                                   "; wait for them before re-recording");
  }
  ResetImpl();
  ReleaseRetained();
  state_ = State::kRecording;
  dispatch_count_ = 0;
  slots_.clear();
  return OkStatus();
}

Status CommandBuffer::End() {
  STRATA_RETURN_IF_ERROR(CheckRecording("command buffer end"));
  STRATA_RETURN_IF_ERROR(EndImpl());
  state_ = State::kExecutable;
  return OkStatus();
}

Status CommandBuffer::CheckSubmittable() const {
  if (state_ != State::kExecutable) {
    return FailedPreconditionError("submit: the command buffer must be ended before it is submitted (state: ",
                                   StateName(state_), ")");
  }
  return OkStatus();
}

// Builds the "dispatch of 'entry' of executable 'name'" prefix only on the
// error path, so the hot path formats nothing.
static std::string DispatchContext(const Executable* executable, uint32_t entry_point) {
  return StrCat("dispatch of '", executable->entry_points()[entry_point].name, "' (entry point ", entry_point,
                " of executable '", executable->name(), "')");
}

Status CommandBuffer::Dispatch(Executable* executable, uint32_t entry_point, WorkgroupCount workgroups,
                               std::span<const uint32_t> constants, std::span<const BufferBinding> bindings) {
  STRATA_RETURN_IF_ERROR(CheckRecording("dispatch"));
  STRATA_RETURN_IF_ERROR(CheckResource("dispatch: the executable", executable));
  if (entry_point >= executable->entry_points().size()) {
    return OutOfRangeError("dispatch: entry point ", entry_point, " is out of range; executable '",
                           executable->name(), "' has ", executable->entry_points().size(), " entry points");
  }
  const EntryPointInfo& info = executable->entry_points()[entry_point];
  const uint32_t counts[3] = {workgroups.x, workgroups.y, workgroups.z};
  for (int d = 0; d < 3; ++d) {
    if (counts[d] > limits_.max_workgroup_count[d]) {
      return OutOfRangeError(DispatchContext(executable, entry_point), ": workgroup count ", "xyz"[d], " = ",
                             counts[d], " exceeds the device's maximum of ", limits_.max_workgroup_count[d]);
    }
  }
  if (constants.size() != info.constant_count) {
    return InvalidArgumentError(DispatchContext(executable, entry_point), ": expected ", info.constant_count,
                                " push constants, got ", constants.size());
  }
  if (bindings.size() != info.binding_count) {
    return InvalidArgumentError(DispatchContext(executable, entry_point), ": expected ", info.binding_count,
                                " bindings, got ", bindings.size());
  }
  BufferBinding resolved[Executable::kMaxBindings];
  bool any_slot = false;
  for (size_t i = 0; i < bindings.size(); ++i) {
    const BufferBinding& binding = bindings[i];
    if (binding.indirect()) {
      if (!indirect_) {
        return InvalidArgumentError(DispatchContext(executable, entry_point), ": binding ", i,
                                    " names binding table slot ", binding.slot,
                                    ", but the command buffer is not indirect (Device::CreateIndirectCommandBuffer)");
      }
      if (binding.buffer) {
        return InvalidArgumentError(DispatchContext(executable, entry_point), ": binding ", i,
                                    " names both a buffer and binding table slot ", binding.slot);
      }
      if (binding.slot >= kMaxBindingSlots) {
        return OutOfRangeError(DispatchContext(executable, entry_point), ": binding ", i, " names slot ",
                               binding.slot, "; a binding table has at most ", kMaxBindingSlots, " slots");
      }
      if (binding.offset & (limits_.min_binding_alignment - 1)) {
        return InvalidArgumentError(DispatchContext(executable, entry_point), ": binding ", i, " offset ",
                                    binding.offset, " is not a multiple of the device's binding alignment ",
                                    limits_.min_binding_alignment);
      }
      if (binding.length != Buffer::kWholeBuffer && binding.offset > UINT64_MAX - binding.length) {
        return OutOfRangeError(DispatchContext(executable, entry_point), ": binding ", i, " range at offset ",
                               binding.offset, " of ", binding.length, " bytes overflows");
      }
      resolved[i] = binding;
      any_slot = true;
      continue;
    }
    if (!binding.buffer || binding.buffer->family() != family()) {
      return CheckResource(
          STRATA_FOR_MESSAGE(StrCat(DispatchContext(executable, entry_point), ": binding ", i, " buffer").c_str()),
          binding.buffer);
    }
    if (binding.offset & (limits_.min_binding_alignment - 1)) {
      return InvalidArgumentError(DispatchContext(executable, entry_point), ": binding ", i, " offset ",
                                  binding.offset, " is not a multiple of the device's binding alignment ",
                                  limits_.min_binding_alignment);
    }
    const MemoryAccesses needed = ((info.read_only_bindings >> i) & 1) ? kAccessRead : kAccessReadWrite;
    if (!(binding.buffer->usage() & kUsageDispatchStorage) ||
        (binding.buffer->allowed_access() & needed) != needed) {
      const std::string what = STRATA_FOR_MESSAGE(StrCat(DispatchContext(executable, entry_point), ": binding ", i));
      STRATA_RETURN_IF_ERROR(binding.buffer->CheckUsage(what.c_str(), kUsageDispatchStorage));
      STRATA_RETURN_IF_ERROR(binding.buffer->CheckAccess(what.c_str(), needed));
    }
    auto length = binding.buffer->ResolveRange("", binding.offset, binding.length);
    if (!length.ok()) {
      return OutOfRangeError(DispatchContext(executable, entry_point), ": binding ", i,
                             length.status().message());
    }
    resolved[i] = {binding.buffer, binding.offset, *length};
  }
  // The loader guarantees a binding to hold the scratch, and the count was
  // checked above; a slot's entry is checked at submission.
  const BufferBinding& scratch = resolved[bindings.size() - 1];
  if (info.scratch_bytes != 0 && !scratch.indirect() && scratch.length < info.scratch_bytes) {
    return OutOfRangeError(DispatchContext(executable, entry_point), ": the scratch binding (", bindings.size() - 1,
                           ") holds ", scratch.length, " bytes, the kernel needs ", info.scratch_bytes);
  }
  if (counts[0] == 0 || counts[1] == 0 || counts[2] == 0) return OkStatus();
  if (any_slot) {
    for (size_t i = 0; i < bindings.size(); ++i) {
      const BufferBinding& binding = resolved[i];
      if (!binding.indirect()) continue;
      if (slots_.size() <= binding.slot) slots_.resize(binding.slot + 1);
      SlotNeeds& needs = slots_[binding.slot];
      const uint64_t least = info.scratch_bytes != 0 && i + 1 == bindings.size() ? info.scratch_bytes : 0;
      const uint64_t end =
          binding.offset + (binding.length == Buffer::kWholeBuffer ? least : std::max(least, binding.length));
      needs.access |= ((info.read_only_bindings >> i) & 1) ? kAccessRead : kAccessReadWrite;
      if (!needs.used || end > needs.end) {
        needs.end = end;
        needs.dispatch = dispatch_count_;
        needs.binding = static_cast<uint32_t>(i);
      }
      needs.used = true;
    }
  }
  STRATA_RETURN_IF_ERROR(DispatchImpl(executable, entry_point, workgroups, constants, {resolved, bindings.size()}));
  ++dispatch_count_;
  return OkStatus();
}

Status CommandBuffer::CheckBindingTable(size_t index, std::span<const BufferBinding> table) const {
  const auto what = [index] { return StrCat("submit: command buffer ", index); };
  if (table.size() < slots_.size()) {
    return InvalidArgumentError(what(), ": the binding table has ", table.size(), " entr",
                                table.size() == 1 ? "y" : "ies", "; the command buffer's dispatches bind slots up to ",
                                slots_.size() - 1, ", so it needs at least ", slots_.size());
  }
  for (size_t slot = 0; slot < slots_.size(); ++slot) {
    const SlotNeeds& needs = slots_[slot];
    if (!needs.used) continue;
    const BufferBinding& entry = table[slot];
    if (entry.indirect()) {
      return InvalidArgumentError(what(), ": binding table slot ", slot, " names slot ", entry.slot,
                                  "; a table entry names a buffer");
    }
    const auto prefix = [&] { return StrCat(what(), ": binding table slot ", slot); };
    if (!entry.buffer || entry.buffer->family() != family()) {
      return CheckResource(STRATA_FOR_MESSAGE(StrCat(prefix(), " buffer").c_str()), entry.buffer);
    }
    if (entry.offset & (limits_.min_binding_alignment - 1)) {
      return InvalidArgumentError(prefix(), " offset ", entry.offset,
                                  " is not a multiple of the device's binding alignment ",
                                  limits_.min_binding_alignment);
    }
    if (!(entry.buffer->usage() & kUsageDispatchStorage) ||
        (entry.buffer->allowed_access() & needs.access) != needs.access) {
      const std::string text = STRATA_FOR_MESSAGE(prefix());
      STRATA_RETURN_IF_ERROR(entry.buffer->CheckUsage(text.c_str(), kUsageDispatchStorage));
      STRATA_RETURN_IF_ERROR(entry.buffer->CheckAccess(text.c_str(), needs.access));
    }
    auto length = entry.buffer->ResolveRange("", entry.offset, entry.length);
    if (!length.ok()) return OutOfRangeError(prefix(), length.status().message());
    if (*length < needs.end) {
      return OutOfRangeError(prefix(), " holds ", *length, " bytes; binding ", needs.binding, " of dispatch ",
                             needs.dispatch, " needs ", needs.end, " bytes of it");
    }
  }
  return OkStatus();
}

Status CommandBuffer::Fill(Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                           uint32_t pattern_length) {
  STRATA_RETURN_IF_ERROR(CheckRecording("fill"));
  STRATA_RETURN_IF_ERROR(CheckResource("fill: the target buffer", target));
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4) {
    return InvalidArgumentError("fill: pattern length must be 1, 2 or 4 bytes, got ", pattern_length);
  }
  if (pattern_length < 4 && (pattern >> (8 * pattern_length)) != 0) {
    return InvalidArgumentError("fill: pattern 0x", Hex(pattern), " does not fit in ",
                                pattern_length, " byte", pattern_length == 1 ? "" : "s");
  }
  STRATA_RETURN_IF_ERROR(target->CheckUsage("fill target", kUsageTransferTarget));
  STRATA_RETURN_IF_ERROR(target->CheckAccess("fill target", kAccessWrite));
  STRATA_ASSIGN_OR_RETURN(uint64_t resolved, target->ResolveRange("fill target", offset, length));
  if (offset % pattern_length || resolved % pattern_length) {
    return InvalidArgumentError("fill: offset ", offset, " and length ", resolved,
                                " must be multiples of the pattern length ", pattern_length);
  }
  if (resolved == 0) return OkStatus();
  return FillImpl(target, offset, resolved, pattern, pattern_length);
}

Status CommandBuffer::Copy(Buffer* source, uint64_t source_offset, Buffer* target, uint64_t target_offset,
                           uint64_t length) {
  STRATA_RETURN_IF_ERROR(CheckRecording("copy"));
  STRATA_RETURN_IF_ERROR(CheckResource("copy: the source buffer", source));
  STRATA_RETURN_IF_ERROR(CheckResource("copy: the target buffer", target));
  STRATA_RETURN_IF_ERROR(source->CheckUsage("copy source", kUsageTransferSource));
  STRATA_RETURN_IF_ERROR(source->CheckAccess("copy source", kAccessRead));
  STRATA_RETURN_IF_ERROR(target->CheckUsage("copy target", kUsageTransferTarget));
  STRATA_RETURN_IF_ERROR(target->CheckAccess("copy target", kAccessWrite));
  if (length == Buffer::kWholeBuffer) {
    return InvalidArgumentError("copy: the length must be given explicitly");
  }
  STRATA_RETURN_IF_ERROR(source->ResolveRange("copy source", source_offset, length).status());
  STRATA_RETURN_IF_ERROR(target->ResolveRange("copy target", target_offset, length).status());
  if (source->allocated_buffer() == target->allocated_buffer()) {
    uint64_t a = source->byte_offset() + source_offset;
    uint64_t b = target->byte_offset() + target_offset;
    if (a < b + length && b < a + length && length) {
      return InvalidArgumentError("copy: source bytes [", a, ", ", a + length, ") and target bytes [", b, ", ",
                                  b + length, ") of the same allocation overlap");
    }
  }
  if (length == 0) return OkStatus();
  return CopyImpl(source, source_offset, target, target_offset, length);
}

Status CommandBuffer::Update(std::span<const uint8_t> source, Buffer* target, uint64_t target_offset) {
  STRATA_RETURN_IF_ERROR(CheckRecording("update"));
  STRATA_RETURN_IF_ERROR(CheckResource("update: the target buffer", target));
  if (source.size() > kMaxUpdateSize) {
    return InvalidArgumentError("update: ", source.size(), " bytes exceed the limit of ", kMaxUpdateSize,
                                " per update; put larger data in a buffer and copy it");
  }
  if (target_offset % 4 || source.size() % 4) {
    return InvalidArgumentError("update: target offset ", target_offset, " and size ", source.size(),
                                " must be multiples of 4");
  }
  STRATA_RETURN_IF_ERROR(target->CheckUsage("update target", kUsageTransferTarget));
  STRATA_RETURN_IF_ERROR(target->CheckAccess("update target", kAccessWrite));
  STRATA_RETURN_IF_ERROR(target->ResolveRange("update target", target_offset, source.size()).status());
  if (source.empty()) return OkStatus();
  return UpdateImpl(source, target, target_offset);
}

Status CommandBuffer::Barrier() {
  STRATA_RETURN_IF_ERROR(CheckRecording("barrier"));
  return BarrierImpl();
}

}  // namespace strata::hal
