#include "hal/command_log.h"

namespace strata::hal {

void CommandLog::ResetImpl() {
  entries_.clear();
  constants_.clear();
  bindings_.clear();
  update_data_.clear();
}

Status CommandLog::DispatchImpl(Executable* executable, uint32_t entry_point, WorkgroupCount workgroups,
                                std::span<const uint32_t> constants, std::span<const BufferBinding> bindings) {
  RetainResource(executable);
  Entry& entry = entries_.emplace_back();
  entry.kind = Kind::kDispatch;
  entry.executable = executable;
  entry.entry_point = entry_point;
  entry.workgroups = workgroups;
  entry.first = static_cast<uint32_t>(constants_.size());
  entry.count = static_cast<uint32_t>(constants.size());
  entry.first_binding = static_cast<uint32_t>(bindings_.size());
  entry.binding_count = static_cast<uint32_t>(bindings.size());
  constants_.insert(constants_.end(), constants.begin(), constants.end());
  for (const BufferBinding& binding : bindings) {
    if (binding.buffer) RetainResource(binding.buffer);
    bindings_.push_back(binding);
  }
  return OkStatus();
}

Status CommandLog::FillImpl(Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                            uint32_t pattern_length) {
  RetainResource(target);
  Entry& entry = entries_.emplace_back();
  entry.kind = Kind::kFill;
  entry.target = target;
  entry.target_offset = offset;
  entry.length = length;
  entry.pattern = pattern;
  entry.pattern_length = pattern_length;
  return OkStatus();
}

Status CommandLog::CopyImpl(Buffer* source, uint64_t source_offset, Buffer* target, uint64_t target_offset,
                            uint64_t length) {
  RetainResource(source);
  RetainResource(target);
  Entry& entry = entries_.emplace_back();
  entry.kind = Kind::kCopy;
  entry.source = source;
  entry.source_offset = source_offset;
  entry.target = target;
  entry.target_offset = target_offset;
  entry.length = length;
  return OkStatus();
}

Status CommandLog::UpdateImpl(std::span<const uint8_t> source, Buffer* target, uint64_t target_offset) {
  RetainResource(target);
  Entry& entry = entries_.emplace_back();
  entry.kind = Kind::kUpdate;
  entry.target = target;
  entry.target_offset = target_offset;
  entry.first = static_cast<uint32_t>(update_data_.size());
  entry.count = static_cast<uint32_t>(source.size());
  update_data_.insert(update_data_.end(), source.begin(), source.end());
  return OkStatus();
}

Status CommandLog::BarrierImpl() {
  entries_.emplace_back().kind = Kind::kBarrier;
  return OkStatus();
}

Status CommandLog::Replay(CommandBuffer& target, std::span<const BufferBinding> table) const {
  STRATA_RETURN_IF_ERROR(target.Begin());
  std::vector<BufferBinding> bindings;
  for (const Entry& entry : entries_) {
    switch (entry.kind) {
      case Kind::kDispatch: {
        bindings.assign(bindings_.begin() + entry.first_binding,
                        bindings_.begin() + entry.first_binding + entry.binding_count);
        for (BufferBinding& binding : bindings) {
          if (binding.indirect()) binding = ResolveSlot(binding, table);
        }
        STRATA_RETURN_IF_ERROR(target.Dispatch(entry.executable, entry.entry_point, entry.workgroups,
                                               {constants_.data() + entry.first, entry.count}, bindings));
        break;
      }
      case Kind::kFill:
        STRATA_RETURN_IF_ERROR(
            target.Fill(entry.target, entry.target_offset, entry.length, entry.pattern, entry.pattern_length));
        break;
      case Kind::kCopy:
        STRATA_RETURN_IF_ERROR(
            target.Copy(entry.source, entry.source_offset, entry.target, entry.target_offset, entry.length));
        break;
      case Kind::kUpdate:
        STRATA_RETURN_IF_ERROR(
            target.Update({update_data_.data() + entry.first, entry.count}, entry.target, entry.target_offset));
        break;
      case Kind::kBarrier:
        STRATA_RETURN_IF_ERROR(target.Barrier());
        break;
    }
  }
  return target.End();
}

}  // namespace strata::hal
