// VulkanCommandBuffer: HAL commands recorded into VkCommandBuffers.
//
// Recording validates each command (the HAL base class, plus the Vulkan
// limits below) and lowers it at once to device operations on (VkBuffer,
// offset) ranges; End records those into VkCommandBuffers, from a command
// pool of the command buffer's own:
//
//   dispatch  bind the entry point's pipeline, its bindings as set 0 (push
//             descriptors, or a descriptor set from the command buffer's
//             pool), its push constants, vkCmdDispatch. Binding offsets must
//             be multiples of minStorageBufferOffsetAlignment within their
//             VkBuffer (a subspan at an odd offset cannot be bound), ranges
//             are 1 to maxStorageBufferRange bytes.
//   fill      vkCmdFillBuffer over the 4-byte-aligned middle, with the 1- or
//             2-byte pattern replicated into the word as it falls there; the
//             up to 3 bytes before and after are copied from upload data.
//   update    vkCmdUpdateBuffer when the target offset is 4-byte aligned in
//             its VkBuffer, else a copy from upload data.
//   copy      vkCmdCopyBuffer.
//   barrier   a full memory barrier over all commands.
//
// Upload data and the check-status words of dispatches with checks live in
// one host-visible buffer allocated at End. Each VkCommandBuffer starts with
// a full memory barrier (ordering it after earlier submissions) and ends with
// one that makes device writes visible to the host.
//
// Checks: a command buffer is split into *segments* after every barrier that
// follows a dispatch with checks, so that the queue thread can read the
// check words of the work before the barrier and stop the submission before
// anything after it runs, as on the CPU drivers. The first segment zeroes
// every check word.
//
// Timestamps: when the queue has them, every command is bracketed by two
// timestamp queries, read back only for traced submissions.
//
// Ownership and thread safety: see hal/command_buffer.h. Executing
// (Execute) happens on the device's queue thread, one submission at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_context.h"
#include "drivers/vulkan/vulkan_executable.h"
#include "hal/command_buffer.h"
#include "hal/gpu_commands.h"
#include "vm/base/trace.h"

namespace strata::vulkan {

class VulkanCommandBuffer final : public hal::CommandBuffer {
 public:
  VulkanCommandBuffer(std::shared_ptr<VulkanContext> context, Ref<VulkanAllocator> allocator,
                      const hal::DeviceLimits& limits);

  const VulkanContext* context() const { return context_.get(); }

  // Submits the segments in order to the context's queue, each followed by
  // a wait on `fence`; stops at the first failed check (with the check's
  // message), at VK_ERROR_DEVICE_LOST, or when `deadline` passes (work the
  // device is running then finishes first: a GPU cannot be stopped
  // mid-dispatch). Reports every command to `tracer` when it is not null.
  Status Execute(VkFence fence, Tracer* tracer, std::chrono::steady_clock::time_point deadline) const;

  // Pipelined execution (VulkanQueue::Launch and Await, on the queue's two
  // threads): a command buffer of one segment (no checks to read between
  // parts) that is not in flight already (its check words and
  // VkCommandBuffer serve one execution at a time) can be launched; Launch
  // marks it in flight and returns its VkCommandBuffer, or null when it
  // cannot be launched. Finish, once the device is done with it, reads its
  // check words and clears the mark; Unlaunch clears it when the launch was
  // abandoned.
  VkCommandBuffer Launch() const;
  Status Finish() const;
  void Unlaunch() const { in_flight_.store(false, std::memory_order_release); }

  // Segments recorded by End (for tests).
  size_t segment_count() const { return segments_.size(); }

 protected:
  ~VulkanCommandBuffer() override;

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
  // One device operation; a HAL command lowers to one to three of them.
  struct Op {
    enum class Kind : uint8_t { kDispatch, kFill, kCopy, kCopyUpload, kUpdate, kBarrier } kind;
    VkBuffer target = VK_NULL_HANDLE;  // transfers
    uint64_t target_offset = 0;
    uint64_t length = 0;
    VkBuffer source = VK_NULL_HANDLE;  // kCopy
    uint64_t source_offset = 0;        // kCopy; kCopyUpload, kUpdate: into the upload data
    uint32_t word = 0;                 // kFill
    uint32_t command = 0;              // its command (not for barriers)
  };
  // One HAL command, for tracing and checks (hal::GpuRecording).
  struct Command {
    hal::GpuCommandKind kind;
    uint64_t length = 0;  // transfers
    const VulkanExecutable* executable = nullptr;
    uint32_t entry_point = 0;
    uint32_t workgroups[3] = {0, 0, 0};
    uint32_t first_binding = 0;   // into bindings_
    uint32_t first_constant = 0;  // into constants_
    int32_t check_slot = -1;      // dispatches with checks: their word
    uint32_t dispatch_index = 0;  // dispatches: their descriptor set
    uint32_t first_op = 0, end_op = 0;
  };
  using Recording = hal::GpuRecording<Command, Op>;
  // A segment runs as one VkCommandBuffer.
  struct Segment : Recording::Segment {
    VkCommandBuffer commands = VK_NULL_HANDLE;
  };

  Status CheckBuffer(const char* what, const hal::Buffer* buffer) const;
  void RecordBarrier(VkCommandBuffer commands, VkPipelineStageFlags destination_stage,
                     VkAccessFlags destination_access) const;
  Status CreateDescriptorSets();
  Status RecordSegment(const Segment& segment, bool first);
  void RecordDispatch(VkCommandBuffer commands, const Command& command) const;
  void TraceSegment(const Segment& segment, Tracer* tracer, uint64_t submitted, uint64_t done) const;
  // Reads the check words of `segment`'s dispatches once the device is done
  // with it: the first failed check's error, if any.
  Status CheckSegment(const Segment& segment) const;

  std::shared_ptr<VulkanContext> context_;
  Ref<VulkanAllocator> allocator_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t query_capacity_ = 0;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> spare_;  // allocated from pool_, reused

  Recording recording_;
  std::vector<VkDescriptorBufferInfo> bindings_;
  std::vector<uint32_t> constants_;
  uint32_t dispatches_ = 0;
  std::vector<VkDescriptorSet> sets_;  // without push descriptors: one per dispatch

  Ref<VulkanBuffer> host_buffer_;  // check words, then upload data
  uint64_t check_stride_ = 4;
  std::vector<Segment> segments_;
  mutable std::atomic<bool> in_flight_{false};
};

}  // namespace strata::vulkan
