#include "drivers/stream/stream_command_buffer.h"

#include <algorithm>
#include <cstring>

#include "hal/gpu_commands.h"

namespace strata::stream {

StreamCommandBuffer::StreamCommandBuffer(std::shared_ptr<StreamContext> context, Ref<StreamAllocator> allocator,
                                     const hal::DeviceLimits& limits, bool graphs)
    : CommandBuffer(context->family(), limits), context_(std::move(context)), allocator_(std::move(allocator)),
      graphs_(graphs) {}

StreamCommandBuffer::~StreamCommandBuffer() { DestroyGraphs(); }

void StreamCommandBuffer::DestroyGraphs() {
  const bool current = context_->MakeCurrent().ok();
  for (SegmentState& state : segment_states_) {
    for (SegmentGraph& graph : state.graphs) {
      if (graph.graph && current) context_->DestroyGraph(graph.graph);
    }
  }
  segment_states_.clear();
}

void StreamCommandBuffer::ResetImpl() {
  DestroyGraphs();
  recording_.Reset();
  parameters_.clear();
  parameter_pointers_.clear();
  slot_parameters_.clear();
  segments_.clear();
  host_buffer_ = nullptr;
  upload_base_ = 0;
}

Status StreamCommandBuffer::CheckBuffer(const char* what, const hal::Buffer* buffer) const {
  if (static_cast<const StreamBuffer*>(buffer->allocated_buffer())->context() != context_.get()) {
    return InvalidArgumentError(what, " belongs to another device than this command buffer");
  }
  return OkStatus();
}

Status StreamCommandBuffer::DispatchImpl(hal::Executable* executable, uint32_t entry_point,
                                       hal::WorkgroupCount workgroups, std::span<const uint32_t> constants,
                                       std::span<const hal::BufferBinding> bindings) {
  auto* stream_executable = static_cast<StreamExecutable*>(executable);
  const hal::EntryPointInfo& info = executable->entry_points()[entry_point];
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (bindings[i].indirect()) continue;  // bound per submission
    STRATA_RETURN_IF_ERROR(BindingAddress(*executable, entry_point, i, bindings[i]).status());
  }
  if (stream_executable->context() != context_.get()) {
    return InvalidArgumentError("dispatch of '", info.name, "' (executable '", executable->name(),
                                "'): the executable was prepared for another device");
  }
  RetainResource(stream_executable);
  Command& command = recording_.AddCommand(hal::GpuCommandKind::kDispatch);
  command.executable = stream_executable;
  command.entry_point = entry_point;
  command.workgroups[0] = workgroups.x;
  command.workgroups[1] = workgroups.y;
  command.workgroups[2] = workgroups.z;
  command.first_parameter = static_cast<uint32_t>(parameters_.size());
  // The ABI's parameters (stream_executable.h): binding pointers, the
  // check-status pointer (its address is known at End), constants, then the
  // binding lengths.
  const uint32_t command_index = static_cast<uint32_t>(recording_.commands().size() - 1);
  const size_t first_slot = slot_parameters_.size();
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (bindings[i].indirect()) {
      slot_parameters_.push_back({.pointer = static_cast<uint32_t>(parameters_.size()),
                                  .command = command_index,
                                  .binding = static_cast<uint32_t>(i),
                                  .recorded = bindings[i]});
      parameters_.push_back(0);
    } else {
      RetainResource(bindings[i].buffer);
      parameters_.push_back(DeviceAddress(bindings[i].buffer, bindings[i].offset));
    }
  }
  if (!info.check_messages.empty()) {
    command.check_slot = recording_.AddCheckSlot();
    parameters_.push_back(0);
  }
  parameters_.insert(parameters_.end(), constants.begin(), constants.end());
  const uint32_t lengths = static_cast<uint32_t>(parameters_.size());
  for (const hal::BufferBinding& binding : bindings) {
    // A slot's whole entry: its length is the table's, written per submission.
    parameters_.push_back(binding.length == hal::Buffer::kWholeBuffer ? 0 : binding.length);
  }
  for (size_t i = first_slot; i < slot_parameters_.size(); ++i) {
    slot_parameters_[i].length = lengths + slot_parameters_[i].binding;
  }
  recording_.AddOp({Op::Kind::kLaunch});
  return OkStatus();
}

StatusOr<DevicePtr> StreamCommandBuffer::BindingAddress(const hal::Executable& executable, uint32_t entry_point,
                                                        size_t index, const hal::BufferBinding& binding) const {
  auto where = [&] {
    return StrCat("dispatch of '", executable.entry_points()[entry_point].name, "' (executable '", executable.name(),
                  "'): binding ", index);
  };
  STRATA_RETURN_IF_ERROR(CheckBuffer(where().c_str(), binding.buffer));
  // Kernels may load a binding in vectors of the alignment the device
  // promises; a misaligned address would fault the whole context.
  const DevicePtr address = DeviceAddress(binding.buffer, binding.offset);
  if (address % kBindingAlignment) {
    return InvalidArgumentError(where(), " starts at device address 0x", Hex(address), " (a subspan at offset ",
                                binding.buffer->byte_offset(), " plus the binding offset ", binding.offset,
                                "), not a multiple of the device's binding alignment ", kBindingAlignment);
  }
  return address;
}

Status StreamCommandBuffer::BindTable(std::span<const hal::BufferBinding> table) const {
  // Every address checked first: a table refused changes nothing.
  for (const SlotParameter& slot : slot_parameters_) {
    const Command& command = recording_.commands()[slot.command];
    Status checked = BindingAddress(*command.executable, command.entry_point, slot.binding,
                                    hal::CommandBuffer::ResolveSlot(slot.recorded, table))
                         .status();
    if (!checked.ok()) return checked.Annotate("submit: binding table slot ", slot.recorded.slot, ", bound by the ");
  }
  for (const SlotParameter& slot : slot_parameters_) {
    const hal::BufferBinding bound = hal::CommandBuffer::ResolveSlot(slot.recorded, table);
    parameters_[slot.pointer] = DeviceAddress(bound.buffer, bound.offset);
    parameters_[slot.length] = bound.length;
  }
  // Each segment's graph of these parameters (its slots' pointer and length,
  // in order), compared in place: a submission allocates only for a binding
  // the segment has not seen among its last kGraphsPerSegment.
  for (SegmentState& state : segment_states_) {
    if (state.slots.empty()) continue;
    // Word k of the key: slot k / 2's pointer (even k) or length (odd k).
    const size_t words = 2 * state.slots.size();
    auto key_word = [&](size_t k) {
      const SlotParameter& slot = slot_parameters_[state.slots[k / 2]];
      return parameters_[k % 2 ? slot.length : slot.pointer];
    };
    auto bound_so = [&](const SegmentGraph& graph) {
      for (size_t k = 0; k < words; ++k) {
        if (graph.key[k] != key_word(k)) return false;
      }
      return true;
    };
    std::vector<SegmentGraph>& graphs = state.graphs;
    auto known = std::find_if(graphs.begin(), graphs.end(), bound_so);
    if (known != graphs.end()) {
      std::rotate(known, known + 1, graphs.end());
      continue;
    }
    if (graphs.size() == kGraphsPerSegment) {
      if (graphs.front().graph) context_->DestroyGraph(graphs.front().graph);
      graphs.erase(graphs.begin());
    }
    SegmentGraph& added = graphs.emplace_back();
    for (size_t k = 0; k < words; ++k) added.key.push_back(key_word(k));
  }
  return OkStatus();
}

Status StreamCommandBuffer::FillImpl(hal::Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                                   uint32_t pattern_length) {
  STRATA_RETURN_IF_ERROR(CheckBuffer("fill: the target buffer", target));
  RetainResource(target);
  const DevicePtr address = DeviceAddress(target, offset);
  recording_.AddCommand(hal::GpuCommandKind::kFill).length = length;
  if (pattern_length == 1) {
    Op op{Op::Kind::kMemsetD8};
    op.target = address;
    op.length = length;
    op.value = pattern;
    recording_.AddOp(op);
    return OkStatus();
  }
  // A 32-bit memset writes whole words at 4-byte-aligned addresses: it takes
  // the aligned middle; the bytes before and after come from upload data.
  const hal::FillSplit split = hal::SplitFill(address, length, pattern, pattern_length);
  auto edge = [&](uint64_t begin, const uint8_t* bytes, uint64_t count) {
    Op op{Op::Kind::kCopyUpload};
    op.target = address + begin;
    op.length = count;
    op.upload_offset = recording_.AddUpload({bytes, static_cast<size_t>(count)});
    recording_.AddOp(op);
  };
  hal::LowerFill(split, edge, [&](uint64_t begin, uint64_t middle, uint32_t word) {
    Op op{Op::Kind::kMemsetD32};
    op.target = address + begin;
    op.length = middle;
    op.value = word;
    recording_.AddOp(op);
  });
  return OkStatus();
}

Status StreamCommandBuffer::CopyImpl(hal::Buffer* source, uint64_t source_offset, hal::Buffer* target,
                                   uint64_t target_offset, uint64_t length) {
  STRATA_RETURN_IF_ERROR(CheckBuffer("copy: the source buffer", source));
  STRATA_RETURN_IF_ERROR(CheckBuffer("copy: the target buffer", target));
  RetainResource(source);
  RetainResource(target);
  recording_.AddCommand(hal::GpuCommandKind::kCopy).length = length;
  Op op{Op::Kind::kCopy};
  op.source = DeviceAddress(source, source_offset);
  op.target = DeviceAddress(target, target_offset);
  op.length = length;
  recording_.AddOp(op);
  return OkStatus();
}

Status StreamCommandBuffer::UpdateImpl(std::span<const uint8_t> source, hal::Buffer* target, uint64_t target_offset) {
  STRATA_RETURN_IF_ERROR(CheckBuffer("update: the target buffer", target));
  RetainResource(target);
  recording_.AddCommand(hal::GpuCommandKind::kUpdate).length = source.size();
  Op op{Op::Kind::kCopyUpload};
  op.target = DeviceAddress(target, target_offset);
  op.length = source.size();
  op.upload_offset = recording_.AddUpload(source);
  recording_.AddOp(op);
  return OkStatus();
}

Status StreamCommandBuffer::BarrierImpl() {
  // The stream runs everything in order; a barrier matters only where the
  // queue thread must read check words before what follows runs.
  recording_.EndSegmentAtBarrier();
  return OkStatus();
}

Status StreamCommandBuffer::EndImpl() {
  segments_.clear();
  DestroyGraphs();
  if (recording_.commands().empty()) return OkStatus();
  // Check words first, then the upload data, 16-byte aligned.
  const std::vector<uint8_t>& upload = recording_.upload();
  upload_base_ = AlignUp(uint64_t{recording_.check_slots()} * 4, 16);
  if (recording_.check_slots() || !upload.empty()) {
    STRATA_ASSIGN_OR_RETURN(host_buffer_, allocator_->AllocateInternal(upload_base_ + upload.size()));
    std::memcpy(host_buffer_->host_address() + upload_base_, upload.data(), upload.size());
  }
  // The check-status pointers, and a pointer to every parameter slot.
  for (const Command& command : recording_.commands()) {
    if (command.check_slot < 0) continue;
    const uint32_t bindings = command.executable->entry_points()[command.entry_point].binding_count;
    parameters_[command.first_parameter + bindings] = host_buffer_->device_address() + 4 * command.check_slot;
  }
  parameter_pointers_.resize(parameters_.size());
  for (size_t i = 0; i < parameters_.size(); ++i) parameter_pointers_[i] = &parameters_[i];
  segments_ = recording_.Segments();
  segment_states_.resize(segments_.size());
  // Each segment's slot bindings; one graph state for a segment that binds
  // none, those of the others made per binding by BindTable.
  for (uint32_t i = 0; i < slot_parameters_.size(); ++i) {
    const uint32_t command = slot_parameters_[i].command;
    const auto segment = std::find_if(segments_.begin(), segments_.end(),
                                      [&](const Segment& segment) { return command < segment.end_command; });
    segment_states_[segment - segments_.begin()].slots.push_back(i);
  }
  for (SegmentState& state : segment_states_) {
    if (state.slots.empty()) state.graphs.emplace_back();
  }
  return OkStatus();
}

size_t StreamCommandBuffer::graph_count() const {
  size_t count = 0;
  for (const SegmentState& state : segment_states_) {
    count += std::count_if(state.graphs.begin(), state.graphs.end(), [](const auto& graph) { return graph.graph; });
  }
  return count;
}

Status StreamCommandBuffer::Enqueue(const Segment& segment, bool first) const {
  const StreamContext& context = *context_;
  if (first && recording_.check_slots()) {
    STRATA_RETURN_IF_ERROR(context.MemsetD32(host_buffer_->device_address(), 0, recording_.check_slots())
                               .Annotate("submit: zeroing the check-status words: "));
  }
  const DevicePtr upload = host_buffer_ ? host_buffer_->device_address() + upload_base_ : 0;
  for (uint32_t i = segment.first_op; i < segment.end_op; ++i) {
    const Op& op = recording_.ops()[i];
    Status status;
    switch (op.kind) {
      case Op::Kind::kLaunch: {
        const Command& command = recording_.commands()[op.command];
        const hal::EntryPointInfo& info = command.executable->entry_points()[command.entry_point];
        status = context.Launch(command.executable->function(command.entry_point), command.workgroups,
                                info.workgroup_size, command.executable->dynamic_shared_bytes(command.entry_point),
                                const_cast<void**>(parameter_pointers_.data() + command.first_parameter));
        if (!status.ok()) {
          return status.Annotate("submit: launching '", info.name, "' (executable '", command.executable->name(),
                                 "') over ", command.workgroups[0], "x", command.workgroups[1], "x",
                                 command.workgroups[2], " blocks of ", info.workgroup_size[0], "x",
                                 info.workgroup_size[1], "x", info.workgroup_size[2], " threads: ");
        }
        continue;
      }
      case Op::Kind::kMemsetD8: status = context.MemsetD8(op.target, static_cast<uint8_t>(op.value), op.length); break;
      case Op::Kind::kMemsetD32: status = context.MemsetD32(op.target, op.value, op.length / 4); break;
      case Op::Kind::kCopy: status = context.Copy(op.target, op.source, op.length); break;
      case Op::Kind::kCopyUpload: status = context.Copy(op.target, upload + op.upload_offset, op.length); break;
    }
    if (!status.ok()) return status.Annotate("submit: ", op.length, " bytes to 0x", Hex(op.target), ": ");
  }
  return OkStatus();
}

StatusOr<bool> StreamCommandBuffer::LaunchGraph(size_t index, bool first) const {
  SegmentState& state = segment_states_[index];
  SegmentGraph& current = state.graphs.back();
  if (!current.graph) {
    if (!context_->BeginCapture()) {
      state.capturable = false;
      return false;
    }
    Status enqueued = Enqueue(segments_[index], first);
    current.graph = context_->EndCapture(enqueued.ok());
    if (!current.graph) {
      // Not capturable (an operation a graph cannot hold): run it as it is.
      state.capturable = false;
      return false;
    }
  }
  STRATA_RETURN_IF_ERROR(context_->LaunchGraph(current.graph).Annotate("submit: "));
  return true;
}

Status StreamCommandBuffer::Prepare(std::span<const hal::BufferBinding> binding_table) const {
  if (Status failure = context_->failure(); !failure.ok()) {
    return failure.Annotate("an earlier submission left the device unusable: ");
  }
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  return slot_parameters_.empty() ? OkStatus() : BindTable(binding_table);
}

Status StreamCommandBuffer::RunSegment(size_t index) const {
  SegmentState& state = segment_states_[index];
  SegmentGraph& current = state.graphs.back();
  bool launched = false;
  if (graphs_ && current.executions > 0 && state.capturable) {
    STRATA_ASSIGN_OR_RETURN(launched, LaunchGraph(index, index == 0));
  }
  if (!launched) STRATA_RETURN_IF_ERROR(Enqueue(segments_[index], index == 0));
  ++current.executions;
  return OkStatus();
}

Status StreamCommandBuffer::CheckWords(const Segment& segment) const {
  return recording_.CheckWords(segment, [&](uint32_t slot) {
    uint32_t word;
    std::memcpy(&word, host_buffer_->host_address() + 4 * slot, 4);
    return word;
  });
}

bool StreamCommandBuffer::Launchable() const {
  return segments_.size() <= 1 && !launched_.load(std::memory_order_acquire);
}

Status StreamCommandBuffer::Launch(std::span<const hal::BufferBinding> binding_table) const {
  launched_.store(true, std::memory_order_relaxed);
  auto failed = [&](Status status) {
    launched_.store(false, std::memory_order_release);
    return status;
  };
  if (Status ready = Prepare(binding_table); !ready.ok()) return failed(ready);
  if (segments_.empty()) return OkStatus();
  if (Status run = RunSegment(0); !run.ok()) {
    // What was enqueued before the failure runs on: let it finish.
    bool sticky = false;
    context_->Synchronize(&sticky).IgnoreError();
    return failed(run);
  }
  return OkStatus();
}

Status StreamCommandBuffer::FinishLaunch(const Status& waited, bool sticky) const {
  Status status;
  if (!segments_.empty()) {
    if (!waited.ok()) {
      status = SegmentError(waited, segments_[0]);
      if (sticky) context_->Fail(status);
    } else {
      status = CheckWords(segments_[0]);
    }
  } else {
    status = waited;
  }
  launched_.store(false, std::memory_order_release);
  return status;
}

Status StreamCommandBuffer::SegmentError(Status status, const Segment& segment) const {
  std::string dispatches;
  uint32_t count = 0;
  for (uint32_t i = segment.first_command; i < segment.end_command; ++i) {
    const Command& command = recording_.commands()[i];
    if (command.kind != hal::GpuCommandKind::kDispatch) continue;
    if (++count > 4) continue;
    dispatches += StrCat(count > 1 ? ", " : "", "'", command.executable->entry_points()[command.entry_point].name,
                         "' (executable '", command.executable->name(), "')");
  }
  if (count > 4) dispatches += StrCat(" and ", count - 4, " more");
  const std::string what =
      count == 0   ? StrCat("device '", context_->name(), "': running transfers")
      : count == 1 ? StrCat("device '", context_->name(), "': running the dispatch of ", dispatches)
                   : StrCat("device '", context_->name(), "': running the dispatches of ", dispatches,
                            " (one of them failed)");
  return status.Annotate(what, ": ");
}

Status StreamCommandBuffer::Execute(std::span<const hal::BufferBinding> binding_table, Tracer* tracer,
                                    std::chrono::steady_clock::time_point deadline) const {
  STRATA_RETURN_IF_ERROR(Prepare(binding_table));
  bool sticky = false;
  const bool timed = deadline != std::chrono::steady_clock::time_point::max();
  auto late_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - deadline).count();
  };
  for (size_t s = 0; s < segments_.size(); ++s) {
    const Segment& segment = segments_[s];
    if (timed && std::chrono::steady_clock::now() > deadline) {
      return DeadlineExceededError("the submission stopped ", late_ms(), " ms after the call's deadline, before part ",
                                   s + 1, " of ", segments_.size(), " of a command buffer");
    }
    const uint64_t submitted = tracer ? Tracer::Now() : 0;
    if (Status run = RunSegment(s); !run.ok()) {
      // What was enqueued before the failure runs on: let it finish, as it
      // uses what this submission holds.
      context_->Synchronize(&sticky).IgnoreError();
      return run;
    }
    if (Status synchronized = context_->Synchronize(&sticky); !synchronized.ok()) {
      Status status = SegmentError(std::move(synchronized), segment);
      if (sticky) context_->Fail(status);
      return status;
    }
    if (ActiveTracer(tracer)) {
      // Each command is reported with its segment's span.
      const uint64_t done = Tracer::Now();
      for (uint32_t i = segment.first_command; i < segment.end_command; ++i) {
        hal::TraceCommand(tracer, recording_.commands()[i], submitted, done);
      }
    }
    STRATA_RETURN_IF_ERROR(CheckWords(segment));
    if (timed && std::chrono::steady_clock::now() > deadline) {
      return DeadlineExceededError("the submission was still running at the call's deadline and finished ", late_ms(),
                                   " ms after it (a GPU cannot stop a running kernel); nothing after it ran");
    }
  }
  return OkStatus();
}

}  // namespace strata::stream
