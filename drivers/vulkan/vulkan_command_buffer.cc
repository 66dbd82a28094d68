#include "drivers/vulkan/vulkan_command_buffer.h"

#include <algorithm>
#include <cstring>

#include "hal/gpu_commands.h"

namespace strata::vulkan {
namespace {

uint64_t AlignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

constexpr VkAccessFlags kAllAccess = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;

}  // namespace

VulkanCommandBuffer::VulkanCommandBuffer(std::shared_ptr<VulkanContext> context, Ref<VulkanAllocator> allocator,
                                         const hal::DeviceLimits& limits)
    : CommandBuffer(&kVulkanFamily, limits),
      context_(std::move(context)),
      allocator_(std::move(allocator)),
      check_stride_(AlignUp(4, context_->limits().minStorageBufferOffsetAlignment)) {}

VulkanCommandBuffer::~VulkanCommandBuffer() {
  ResetImpl();
  const DeviceFunctions& vk = context_->vk();
  if (descriptor_pool_) vk.vkDestroyDescriptorPool(context_->device(), descriptor_pool_, nullptr);
  if (queries_) vk.vkDestroyQueryPool(context_->device(), queries_, nullptr);
  // Destroying the pool frees its command buffers.
  if (pool_) vk.vkDestroyCommandPool(context_->device(), pool_, nullptr);
}

void VulkanCommandBuffer::ResetImpl() {
  recording_.Reset();
  bindings_.clear();
  constants_.clear();
  dispatches_ = 0;
  segments_.clear();
  host_buffer_ = nullptr;
}

Status VulkanCommandBuffer::CheckBuffer(const char* what, const hal::Buffer* buffer) const {
  if (static_cast<const VulkanBuffer*>(buffer->allocated_buffer())->context() != context_.get()) {
    return InvalidArgumentError(what, " belongs to another Vulkan device than this command buffer");
  }
  return OkStatus();
}

Status VulkanCommandBuffer::DispatchImpl(hal::Executable* executable, uint32_t entry_point,
                                         hal::WorkgroupCount workgroups, std::span<const uint32_t> constants,
                                         std::span<const hal::BufferBinding> bindings) {
  auto* vulkan_executable = static_cast<VulkanExecutable*>(executable);
  const hal::EntryPointInfo& info = executable->entry_points()[entry_point];
  auto where = [&] { return StrCat("dispatch of '", info.name, "' (executable '", executable->name(), "')"); };
  if (vulkan_executable->context() != context_.get()) {
    return InvalidArgumentError(where(), ": the executable was prepared for another Vulkan device");
  }
  const VkPhysicalDeviceLimits& limits = context_->limits();
  for (size_t i = 0; i < bindings.size(); ++i) {
    const hal::BufferBinding& binding = bindings[i];
    STRATA_RETURN_IF_ERROR(CheckBuffer(StrCat(where(), ": binding ", i).c_str(), binding.buffer));
    const VkBufferRange range = Resolve(binding.buffer, binding.offset);
    if (range.offset % limits.minStorageBufferOffsetAlignment) {
      return InvalidArgumentError(where(), ": binding ", i, " starts at byte ", range.offset,
                                  " of its Vulkan buffer (a subspan at offset ", binding.buffer->byte_offset(),
                                  " plus the binding offset ", binding.offset, "), not a multiple of the device's ",
                                  "storage-buffer offset alignment ", limits.minStorageBufferOffsetAlignment);
    }
    if (binding.length == 0) {
      return InvalidArgumentError(where(), ": binding ", i, " is empty; Vulkan cannot bind an empty storage buffer");
    }
    if (binding.length > limits.maxStorageBufferRange) {
      return OutOfRangeError(where(), ": binding ", i, " is ", binding.length, " bytes; device '", context_->name(),
                             "' binds at most ", limits.maxStorageBufferRange,
                             " bytes per storage buffer (maxStorageBufferRange)");
    }
  }
  RetainResource(vulkan_executable);
  Command& command = recording_.AddCommand(hal::GpuCommandKind::kDispatch);
  command.executable = vulkan_executable;
  command.entry_point = entry_point;
  command.workgroups[0] = workgroups.x;
  command.workgroups[1] = workgroups.y;
  command.workgroups[2] = workgroups.z;
  command.first_binding = static_cast<uint32_t>(bindings_.size());
  command.first_constant = static_cast<uint32_t>(constants_.size());
  command.dispatch_index = dispatches_++;
  if (!info.check_messages.empty()) {
    command.check_slot = recording_.AddCheckSlot();
  }
  for (const hal::BufferBinding& binding : bindings) {
    RetainResource(binding.buffer);
    const VkBufferRange range = Resolve(binding.buffer, binding.offset);
    bindings_.push_back({range.buffer, range.offset, binding.length});
  }
  constants_.insert(constants_.end(), constants.begin(), constants.end());
  recording_.AddOp({Op::Kind::kDispatch});
  return OkStatus();
}

Status VulkanCommandBuffer::FillImpl(hal::Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                                     uint32_t pattern_length) {
  STRATA_RETURN_IF_ERROR(CheckBuffer("fill: the target buffer", target));
  RetainResource(target);
  const VkBufferRange range = Resolve(target, offset);
  // vkCmdFillBuffer writes whole words at 4-byte-aligned offsets: it takes the
  // aligned middle; the bytes before and after come from upload data.
  const hal::FillSplit split = hal::SplitFill(range.offset, length, pattern, pattern_length);
  recording_.AddCommand(hal::GpuCommandKind::kFill).length = length;
  auto edge = [&](uint64_t begin, const uint8_t* bytes, uint64_t count) {
    Op op{Op::Kind::kCopyUpload};
    op.target = range.buffer;
    op.target_offset = range.offset + begin;
    op.length = count;
    op.source_offset = recording_.AddUpload({bytes, static_cast<size_t>(count)});
    recording_.AddOp(op);
  };
  hal::LowerFill(split, edge, [&](uint64_t begin, uint64_t middle, uint32_t word) {
    Op op{Op::Kind::kFill};
    op.target = range.buffer;
    op.target_offset = range.offset + begin;
    op.length = middle;
    op.word = word;
    recording_.AddOp(op);
  });
  return OkStatus();
}

Status VulkanCommandBuffer::CopyImpl(hal::Buffer* source, uint64_t source_offset, hal::Buffer* target,
                                     uint64_t target_offset, uint64_t length) {
  STRATA_RETURN_IF_ERROR(CheckBuffer("copy: the source buffer", source));
  STRATA_RETURN_IF_ERROR(CheckBuffer("copy: the target buffer", target));
  RetainResource(source);
  RetainResource(target);
  const VkBufferRange from = Resolve(source, source_offset), to = Resolve(target, target_offset);
  recording_.AddCommand(hal::GpuCommandKind::kCopy).length = length;
  Op op{Op::Kind::kCopy};
  op.source = from.buffer;
  op.source_offset = from.offset;
  op.target = to.buffer;
  op.target_offset = to.offset;
  op.length = length;
  recording_.AddOp(op);
  return OkStatus();
}

Status VulkanCommandBuffer::UpdateImpl(std::span<const uint8_t> source, hal::Buffer* target, uint64_t target_offset) {
  STRATA_RETURN_IF_ERROR(CheckBuffer("update: the target buffer", target));
  RetainResource(target);
  const VkBufferRange range = Resolve(target, target_offset);
  recording_.AddCommand(hal::GpuCommandKind::kUpdate).length = source.size();
  // vkCmdUpdateBuffer needs a 4-byte-aligned target in the VkBuffer; a
  // subspan at an odd offset gets a copy from upload data instead.
  Op op{range.offset % 4 == 0 ? Op::Kind::kUpdate : Op::Kind::kCopyUpload};
  op.target = range.buffer;
  op.target_offset = range.offset;
  op.length = source.size();
  op.source_offset = recording_.AddUpload(source);
  recording_.AddOp(op);
  return OkStatus();
}

Status VulkanCommandBuffer::BarrierImpl() {
  // Consecutive barriers order nothing more than one does.
  const std::vector<Op>& ops = recording_.ops();
  if (ops.empty() || ops.back().kind == Op::Kind::kBarrier) return OkStatus();
  // After a dispatch with checks, the queue thread reads the checks of what
  // came before and stops the submission here if one failed; the next
  // segment starts with a full barrier, which is this one.
  if (recording_.EndSegmentAtBarrier()) return OkStatus();
  recording_.AddOrderingOp({Op::Kind::kBarrier});
  return OkStatus();
}

void VulkanCommandBuffer::RecordBarrier(VkCommandBuffer commands, VkPipelineStageFlags destination_stage,
                                        VkAccessFlags destination_access) const {
  auto barrier = VkMake<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  barrier.dstAccessMask = destination_access;
  context_->vk().vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, destination_stage, 0, 1, &barrier,
                                      0, nullptr, 0, nullptr);
}

Status VulkanCommandBuffer::CreateDescriptorSets() {
  const DeviceFunctions& vk = context_->vk();
  VkDevice device = context_->device();
  sets_.clear();
  if (descriptor_pool_) {
    vk.vkDestroyDescriptorPool(device, descriptor_pool_, nullptr);
    descriptor_pool_ = VK_NULL_HANDLE;
  }
  if (context_->push_descriptors() || dispatches_ == 0) return OkStatus();
  uint32_t descriptors = 0;
  for (const Command& command : recording_.commands()) {
    if (command.kind != hal::GpuCommandKind::kDispatch) continue;
    const hal::EntryPointInfo& info = command.executable->entry_points()[command.entry_point];
    descriptors += info.binding_count + (command.check_slot >= 0 ? 1 : 0);
  }
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(descriptors, 1u)};
  auto pool_info = VkMake<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  pool_info.maxSets = dispatches_;
  pool_info.poolSizeCount = 1;
  pool_info.pPoolSizes = &size;
  VkResult result = vk.vkCreateDescriptorPool(device, &pool_info, nullptr, &descriptor_pool_);
  if (result != VK_SUCCESS) return VkError(result, "command buffer end: vkCreateDescriptorPool");
  std::vector<VkDescriptorBufferInfo> infos;
  for (const Command& command : recording_.commands()) {
    if (command.kind != hal::GpuCommandKind::kDispatch) continue;
    const VulkanExecutable::Pipeline& pipeline = command.executable->pipeline(command.entry_point);
    auto allocate_info = VkMake<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
    allocate_info.descriptorPool = descriptor_pool_;
    allocate_info.descriptorSetCount = 1;
    allocate_info.pSetLayouts = &pipeline.set_layout;
    VkDescriptorSet set;
    result = vk.vkAllocateDescriptorSets(device, &allocate_info, &set);
    if (result != VK_SUCCESS) return VkError(result, "command buffer end: vkAllocateDescriptorSets");
    sets_.push_back(set);
    const uint32_t count = command.executable->entry_points()[command.entry_point].binding_count;
    infos.assign(bindings_.begin() + command.first_binding, bindings_.begin() + command.first_binding + count);
    if (command.check_slot >= 0) {
      infos.push_back({host_buffer_->vk_buffer(), host_buffer_->vk_offset() + command.check_slot * check_stride_, 4});
    }
    std::vector<VkWriteDescriptorSet> writes(infos.size(),
                                             VkMake<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET));
    for (uint32_t b = 0; b < writes.size(); ++b) {
      writes[b].dstSet = set;
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    vk.vkUpdateDescriptorSets(device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  return OkStatus();
}

Status VulkanCommandBuffer::EndImpl() {
  segments_.clear();
  if (recording_.commands().empty()) return OkStatus();
  const DeviceFunctions& vk = context_->vk();
  VkDevice device = context_->device();
  const std::vector<uint8_t>& upload = recording_.upload();
  const uint64_t upload_base = recording_.check_slots() * check_stride_;
  if (upload_base + upload.size() > 0) {
    STRATA_ASSIGN_OR_RETURN(host_buffer_, allocator_->AllocateInternal(upload_base + upload.size()));
    if (!upload.empty()) {
      STRATA_ASSIGN_OR_RETURN(hal::MappedRange range, host_buffer_->Map(hal::kAccessWrite, upload_base, upload.size()));
      std::memcpy(range.bytes().data(), upload.data(), upload.size());
      STRATA_RETURN_IF_ERROR(range.Unmap());
    }
  }
  if (!pool_) {
    auto pool_info = VkMake<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = context_->queue_family();
    VkResult result = vk.vkCreateCommandPool(device, &pool_info, nullptr, &pool_);
    if (result != VK_SUCCESS) return VkError(result, "command buffer end: vkCreateCommandPool");
  }
  const uint32_t queries = 2 * static_cast<uint32_t>(recording_.commands().size());
  if (context_->timestamp_valid_bits() && queries > query_capacity_) {
    if (queries_) vk.vkDestroyQueryPool(device, queries_, nullptr);
    queries_ = VK_NULL_HANDLE;
    query_capacity_ = 0;
    auto query_info = VkMake<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = queries;
    VkResult result = vk.vkCreateQueryPool(device, &query_info, nullptr, &queries_);
    if (result != VK_SUCCESS) return VkError(result, "command buffer end: vkCreateQueryPool");
    query_capacity_ = queries;
  }
  STRATA_RETURN_IF_ERROR(CreateDescriptorSets());

  for (const Recording::Segment& range : recording_.Segments()) {
    Segment segment;
    static_cast<Recording::Segment&>(segment) = range;
    if (segments_.size() == spare_.size()) {
      auto allocate_info = VkMake<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
      allocate_info.commandPool = pool_;
      allocate_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      allocate_info.commandBufferCount = 1;
      VkCommandBuffer commands;
      VkResult result = vk.vkAllocateCommandBuffers(device, &allocate_info, &commands);
      if (result != VK_SUCCESS) return VkError(result, "command buffer end: vkAllocateCommandBuffers");
      spare_.push_back(commands);
    }
    segment.commands = spare_[segments_.size()];
    STRATA_RETURN_IF_ERROR(RecordSegment(segment, segments_.empty()));
    segments_.push_back(segment);
  }
  return OkStatus();
}

void VulkanCommandBuffer::RecordDispatch(VkCommandBuffer commands, const Command& command) const {
  const DeviceFunctions& vk = context_->vk();
  const VulkanExecutable::Pipeline& pipeline = command.executable->pipeline(command.entry_point);
  const hal::EntryPointInfo& info = command.executable->entry_points()[command.entry_point];
  vk.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  if (context_->push_descriptors()) {
    VkDescriptorBufferInfo infos[hal::Executable::kMaxBindings + 1];
    uint32_t count = info.binding_count;
    std::copy_n(bindings_.begin() + command.first_binding, count, infos);
    if (command.check_slot >= 0) {
      infos[count++] = {host_buffer_->vk_buffer(), host_buffer_->vk_offset() + command.check_slot * check_stride_, 4};
    }
    VkWriteDescriptorSet writes[hal::Executable::kMaxBindings + 1];
    for (uint32_t b = 0; b < count; ++b) {
      writes[b] = VkMake<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
      writes[b].dstBinding = b;
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    if (count) {
      vk.vkCmdPushDescriptorSetKHR(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, count, writes);
    }
  } else if (info.binding_count || command.check_slot >= 0) {
    vk.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1,
                               &sets_[command.dispatch_index], 0, nullptr);
  }
  if (info.constant_count) {
    vk.vkCmdPushConstants(commands, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, info.constant_count * 4,
                          constants_.data() + command.first_constant);
  }
  vk.vkCmdDispatch(commands, command.workgroups[0], command.workgroups[1], command.workgroups[2]);
}

Status VulkanCommandBuffer::RecordSegment(const Segment& segment, bool first) {
  const DeviceFunctions& vk = context_->vk();
  VkCommandBuffer commands = segment.commands;
  auto begin_info = VkMake<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  VkResult result = vk.vkBeginCommandBuffer(commands, &begin_info);
  if (result != VK_SUCCESS) return VkError(result, "command buffer end: vkBeginCommandBuffer");
  // Ordered after everything submitted before, whose writes it sees.
  RecordBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, kAllAccess);
  if (first && recording_.check_slots()) {
    vk.vkCmdFillBuffer(commands, host_buffer_->vk_buffer(), host_buffer_->vk_offset(),
                       recording_.check_slots() * check_stride_, 0);
    RecordBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, kAllAccess);
  }
  if (queries_) {
    vk.vkCmdResetQueryPool(commands, queries_, 2 * segment.first_command,
                           2 * (segment.end_command - segment.first_command));
  }
  const uint8_t* upload = recording_.upload().data();
  const std::vector<Command>& recorded = recording_.commands();
  for (uint32_t i = segment.first_op; i < segment.end_op; ++i) {
    const Op& op = recording_.ops()[i];
    const bool traced = queries_ && op.kind != Op::Kind::kBarrier;
    if (traced && recorded[op.command].first_op == i) {
      vk.vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 2 * op.command);
    }
    switch (op.kind) {
      case Op::Kind::kDispatch: RecordDispatch(commands, recorded[op.command]); break;
      case Op::Kind::kFill: vk.vkCmdFillBuffer(commands, op.target, op.target_offset, op.length, op.word); break;
      case Op::Kind::kCopy: {
        const VkBufferCopy region{op.source_offset, op.target_offset, op.length};
        vk.vkCmdCopyBuffer(commands, op.source, op.target, 1, &region);
        break;
      }
      case Op::Kind::kCopyUpload: {
        const uint64_t upload_base = recording_.check_slots() * check_stride_;
        const VkBufferCopy region{host_buffer_->vk_offset() + upload_base + op.source_offset, op.target_offset,
                                  op.length};
        vk.vkCmdCopyBuffer(commands, host_buffer_->vk_buffer(), op.target, 1, &region);
        break;
      }
      case Op::Kind::kUpdate:
        vk.vkCmdUpdateBuffer(commands, op.target, op.target_offset, op.length, upload + op.source_offset);
        break;
      case Op::Kind::kBarrier: RecordBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, kAllAccess); break;
    }
    if (traced && recorded[op.command].end_op == i + 1) {
      vk.vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 2 * op.command + 1);
    }
  }
  // The host reads results (and check words) once the fence signals.
  RecordBarrier(commands, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
  result = vk.vkEndCommandBuffer(commands);
  if (result != VK_SUCCESS) return VkError(result, "command buffer end: vkEndCommandBuffer");
  return OkStatus();
}

void VulkanCommandBuffer::TraceSegment(const Segment& segment, Tracer* tracer, uint64_t submitted,
                                       uint64_t done) const {
  const uint32_t count = segment.end_command - segment.first_command;
  // Device timestamps, placed on the host's clock: through a calibration when
  // the device offers one, else with the segment's first timestamp at its
  // submission; kept within the submission either way.
  std::vector<uint64_t> times(2 * count, 0);
  bool timed = false;
  if (queries_) {
    const DeviceFunctions& vk = context_->vk();
    VkResult result = vk.vkGetQueryPoolResults(context_->device(), queries_, 2 * segment.first_command, 2 * count,
                                               times.size() * 8, times.data(), 8,
                                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    timed = result == VK_SUCCESS;
    if (timed) {
      const double period = context_->limits().timestampPeriod;
      int64_t offset_ns = static_cast<int64_t>(submitted) - static_cast<int64_t>(times[0] * period);
      if (context_->calibrated_timestamps()) {
        VkCalibratedTimestampInfoEXT infos[2] = {
            VkMake<VkCalibratedTimestampInfoEXT>(VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT),
            VkMake<VkCalibratedTimestampInfoEXT>(VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT)};
        infos[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
        infos[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
        uint64_t now[2], deviation;
        if (vk.vkGetCalibratedTimestampsEXT(context_->device(), 2, infos, now, &deviation) == VK_SUCCESS) {
          offset_ns = static_cast<int64_t>(now[1]) - static_cast<int64_t>(now[0] * period);
        }
      }
      for (uint64_t& time : times) {
        time = std::clamp<uint64_t>(static_cast<uint64_t>(static_cast<int64_t>(time * period) + offset_ns), submitted,
                                    done);
      }
    }
  }
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t begin = timed ? times[2 * i] : submitted;
    const uint64_t end = timed ? std::max(times[2 * i + 1], begin) : done;
    hal::TraceCommand(tracer, recording_.commands()[segment.first_command + i], begin, end);
  }
}

Status VulkanCommandBuffer::Execute(VkFence fence, Tracer* tracer,
                                    std::chrono::steady_clock::time_point deadline) const {
  const DeviceFunctions& vk = context_->vk();
  VkDevice device = context_->device();
  for (size_t s = 0; s < segments_.size(); ++s) {
    const Segment& segment = segments_[s];
    if (context_->lost.load(std::memory_order_relaxed)) return context_->LostError();
    if (std::chrono::steady_clock::now() > deadline) {
      const double late_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - deadline).count();
      return DeadlineExceededError("the submission stopped ", late_ms, " ms after the call's deadline, before part ",
                                   s + 1, " of ", segments_.size(), " of a command buffer");
    }
    const uint64_t submitted = tracer ? Tracer::Now() : 0;
    auto submit = VkMake<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &segment.commands;
    STRATA_RETURN_IF_ERROR(context_->WorkResult(vk.vkQueueSubmit(context_->queue(), 1, &submit, fence)));
    bool missed_deadline;
    STRATA_RETURN_IF_ERROR(context_->WaitForWork(
        deadline, [&](uint64_t timeout) { return vk.vkWaitForFences(device, 1, &fence, VK_TRUE, timeout); },
        &missed_deadline));
    vk.vkResetFences(device, 1, &fence);
    if (ActiveTracer(tracer)) TraceSegment(segment, tracer, submitted, Tracer::Now());
    STRATA_RETURN_IF_ERROR(CheckSegment(segment));
    if (missed_deadline) return VulkanContext::RanPastDeadline(deadline, "; nothing after it ran");
  }
  return OkStatus();
}

Status VulkanCommandBuffer::CheckSegment(const Segment& segment) const {
  if (recording_.check_slots()) {
    STRATA_RETURN_IF_ERROR(host_buffer_->Invalidate(0, recording_.check_slots() * check_stride_));
  }
  return recording_.CheckWords(segment, [&](uint32_t slot) {
    uint32_t word;
    std::memcpy(&word, host_buffer_->host_address() + slot * check_stride_, 4);
    return word;
  });
}

VkCommandBuffer VulkanCommandBuffer::Launch() const {
  if (segments_.size() != 1 || in_flight_.exchange(true, std::memory_order_acq_rel)) return VK_NULL_HANDLE;
  return segments_[0].commands;
}

Status VulkanCommandBuffer::Finish() const {
  Status status = CheckSegment(segments_[0]);
  in_flight_.store(false, std::memory_order_release);
  return status;
}

}  // namespace strata::vulkan
