// VulkanBuffer and VulkanAllocator: HAL buffers carved out of large
// VkDeviceMemory blocks.
//
// Memory types: every Vulkan memory type that a storage/transfer buffer can
// use becomes one HAL heap, named by its device-local, host-visible and
// host-coherent bits (types with the same bits collapse into the first, which
// Vulkan lists as the faster). Heaps are offered fewest bits first, so a
// request for device-local memory gets device-only memory on a discrete GPU,
// and host-visible requests get system memory rather than the small
// host-visible window of VRAM; on a unified-memory device (lavapipe, mobile
// GPUs) one heap has all three bits.
//
// Sub-allocation: each heap has a MemoryPool of blocks (64 MiB, fewer on a
// small heap), each one VkDeviceMemory with one VkBuffer over all of it
// (storage, transfer source and target) and, when host-visible, mapped once
// for its lifetime. A HAL buffer is a range of a block found first-fit in the
// block's free list (RangeAllocator), aligned for storage-buffer binding
// offsets, host-mapping atoms and the buffer's memory requirements. Buffers
// larger than half a block get a dedicated block of their own. Freed ranges
// coalesce with their neighbours; an empty block is freed unless it is the
// pool's last. Every buffer resolves to (VkBuffer, offset), which is all a
// command needs.
//
// Idle dedicated blocks: a freed dedicated block is kept, up to the pool's
// idle limit (4 blocks' worth, at most an eighth of the heap), for the next
// dedicated buffer it fits with at most a quarter to spare. A module that
// returns a large result on every call would otherwise pay vkAllocateMemory
// and vkFreeMemory for it each time (1.6 ms for 64 MiB on an NVIDIA H200,
// half the time of the matmul that writes it). The oldest idle blocks go
// first past the limit, and all of them before an allocation that fails for
// lack of memory is tried again.
//
// Limits: an allocation may not exceed maxMemoryAllocationSize, the heap's
// size or the device's max_allocation option (RESOURCE_EXHAUSTED, checked by
// hal::Allocator against MemoryHeap::max_allocation_size); a dispatch binding
// may not exceed maxStorageBufferRange (checked when recorded).
//
// Import: caller memory becomes a buffer through VK_EXT_external_memory_host
// when the device has it: the pages around the range (aligned to the
// device's minImportedHostPointerAlignment) are imported as one
// VkDeviceMemory, so the device reads and writes the caller's bytes in place.
// Without the extension Import fails with UNIMPLEMENTED, saying so.
//
// Ownership: buffers keep their pool (and through it the VulkanContext) alive,
// so they outlive the allocator and the device. Thread safety: see
// hal/buffer.h and hal/allocator.h; a pool's free lists are under its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "drivers/vulkan/vulkan_context.h"
#include "hal/allocator.h"
#include "hal/buffer.h"

namespace strata::vulkan {

extern const hal::DriverFamily kVulkanFamily;

// First-fit allocation of ranges inside [0, size), with coalescing frees.
// Not thread-safe (the pool locks around it).
class RangeAllocator {
 public:
  explicit RangeAllocator(uint64_t size) : size_(size) { free_[0] = size; }
  // The offset of `length` bytes aligned to `alignment` (a power of two), or
  // nullopt when no free range fits.
  std::optional<uint64_t> Allocate(uint64_t length, uint64_t alignment);
  // Gives back a range that Allocate returned (with the same length).
  void Free(uint64_t offset, uint64_t length);
  bool empty() const { return free_.size() == 1 && free_.begin()->second == size_; }
  uint64_t size() const { return size_; }
  uint64_t free_bytes() const;

 private:
  uint64_t size_;
  std::map<uint64_t, uint64_t> free_;  // offset -> length, never adjacent
};

// One VkDeviceMemory with a VkBuffer over all of it.
struct MemoryBlock {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint8_t* mapped = nullptr;  // host-visible blocks: mapped for their lifetime
  bool dedicated = false;
  RangeAllocator ranges;
  explicit MemoryBlock(uint64_t size) : ranges(size) {}
};

// The blocks of one Vulkan memory type.
class MemoryPool {
 public:
  // `idle_limit`: bytes of freed dedicated blocks kept for reuse.
  MemoryPool(std::shared_ptr<VulkanContext> context, uint32_t memory_type_index, uint64_t block_size,
             uint64_t alignment, uint64_t idle_limit);
  ~MemoryPool();

  struct Range {
    MemoryBlock* block;
    uint64_t offset;
    uint64_t length;  // reserved bytes (at least 1 alignment unit)
  };
  StatusOr<Range> Allocate(uint64_t length);
  void Free(const Range& range);

  VulkanContext& context() const { return *context_; }
  bool coherent() const { return coherent_; }
  uint64_t block_size() const { return block_size_; }
  uint64_t alignment() const { return alignment_; }
  // Blocks currently held (dedicated ones included), idle ones not.
  size_t block_count();
  // Freed dedicated blocks kept for reuse, and their bytes.
  size_t idle_block_count();
  uint64_t idle_bytes();
  uint64_t idle_limit() const { return idle_limit_; }

 private:
  StatusOr<MemoryBlock*> CreateBlock(uint64_t size, bool dedicated);
  void DestroyBlock(MemoryBlock* block);
  // An idle dedicated block of `size` to `size * 5 / 4` bytes, the smallest,
  // moved back to blocks_; null when none.
  MemoryBlock* ReuseIdle(uint64_t size);
  // Destroys the oldest idle blocks until at most `limit` bytes are idle.
  void TrimIdle(uint64_t limit);

  std::shared_ptr<VulkanContext> context_;
  const uint32_t memory_type_index_;
  const uint64_t block_size_;
  const uint64_t alignment_;
  bool host_visible_ = false;
  bool coherent_ = false;
  std::mutex mutex_;
  std::vector<std::unique_ptr<MemoryBlock>> blocks_;
  const uint64_t idle_limit_;
  uint64_t idle_bytes_ = 0;
  std::vector<std::unique_ptr<MemoryBlock>> idle_;  // oldest first
};

class VulkanBuffer final : public hal::Buffer {
 public:
  // A range of a pool's block; `release` (may be empty) runs when the buffer
  // is destroyed.
  VulkanBuffer(hal::MemoryTypes memory_types, const hal::BufferParams& params, uint64_t length,
               std::shared_ptr<MemoryPool> pool, MemoryPool::Range range, hal::Allocator::ReleaseCallback release);
  // Imported host memory: `memory` and `buffer` are owned; byte 0 of this
  // buffer is at `offset` in them, and at `host` for the host.
  VulkanBuffer(hal::MemoryTypes memory_types, const hal::BufferParams& params, uint64_t length,
               std::shared_ptr<VulkanContext> context, VkDeviceMemory memory, VkBuffer buffer, uint64_t offset,
               uint8_t* host, hal::Allocator::ReleaseCallback release);

  // The context whose device the memory belongs to.
  const VulkanContext* context() const { return pool_ ? &pool_->context() : context_.get(); }
  VkBuffer vk_buffer() const { return vk_buffer_; }
  // The offset of byte 0 of this buffer in vk_buffer().
  uint64_t vk_offset() const { return vk_offset_; }
  // Byte 0 for the host, or null when not host-visible.
  uint8_t* host_address() const { return host_; }
  // Makes device writes to [offset, offset + length) visible to the host
  // (nothing to do for coherent memory).
  Status Invalidate(uint64_t offset, uint64_t length);

 protected:
  ~VulkanBuffer() override;
  StatusOr<uint8_t*> MapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access) override;
  Status UnmapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access, uint8_t* data) override;

 private:
  // Flushes or invalidates a range of non-coherent memory.
  Status SyncRange(bool flush, uint64_t offset, uint64_t length);

  std::shared_ptr<MemoryPool> pool_;  // allocated buffers
  MemoryPool::Range range_{};
  std::shared_ptr<VulkanContext> context_;  // imported buffers
  VkDeviceMemory imported_memory_ = VK_NULL_HANDLE;
  VkBuffer vk_buffer_;
  uint64_t vk_offset_;
  uint8_t* host_;
  bool coherent_;
  hal::Allocator::ReleaseCallback release_;
};

// (VkBuffer, offset) of byte `offset` of any Vulkan-family buffer, subspans
// included.
struct VkBufferRange {
  VkBuffer buffer;
  uint64_t offset;
};
inline VkBufferRange Resolve(const hal::Buffer* buffer, uint64_t offset) {
  const auto* allocated = static_cast<const VulkanBuffer*>(buffer->allocated_buffer());
  return {allocated->vk_buffer(), allocated->vk_offset() + buffer->byte_offset() + offset};
}

class VulkanAllocator final : public hal::Allocator {
 public:
  // Heaps and pools for `context`'s memory types; allocations above
  // `max_allocation` bytes fail with RESOURCE_EXHAUSTED.
  // With `unified_memory` false, a memory type that is both device-local and
  // host-visible becomes two heaps: device-local (not mappable) and
  // host-visible, host-coherent; the device then places memory as on a
  // discrete GPU without a host-visible VRAM window, so that the staging
  // paths run (and are tested) on a unified-memory device such as lavapipe.
  static StatusOr<Ref<VulkanAllocator>> Create(std::shared_ptr<VulkanContext> context, uint64_t max_allocation,
                                               bool unified_memory = true);

  // Host-visible memory for the driver's own use (command buffers' upload
  // data and check words), not counted in the statistics.
  StatusOr<Ref<VulkanBuffer>> AllocateInternal(uint64_t length);
  // The pool behind heap `index` of heaps().
  MemoryPool& pool(size_t index) const { return *pools_[index]; }

 protected:
  StatusOr<Ref<hal::Buffer>> AllocateBuffer(const hal::MemoryHeap& heap, const hal::BufferParams& params,
                                                uint64_t length) override;
  StatusOr<Ref<hal::Buffer>> ImportHostBuffer(const hal::BufferParams& params, std::span<uint8_t> memory,
                                                  ReleaseCallback release) override;

 private:
  VulkanAllocator(std::shared_ptr<VulkanContext> context, std::vector<hal::MemoryHeap> heaps,
                  std::vector<std::shared_ptr<MemoryPool>> pools);
  StatusOr<Ref<hal::Buffer>> AllocateFromPool(size_t heap_index, const hal::BufferParams& params,
                                                  uint64_t length, ReleaseCallback release);

  std::shared_ptr<VulkanContext> context_;
  std::vector<std::shared_ptr<MemoryPool>> pools_;  // one per heap, same order
};

}  // namespace strata::vulkan
