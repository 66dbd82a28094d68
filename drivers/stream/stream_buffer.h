// StreamBuffer and StreamAllocator: HAL buffers in the memory a CUDA-style
// API offers (stream_context.h; the calls named are CUDA's, HIP's are alike).
//
// Heaps, fewest memory-type bits first (hal/allocator.h picks the first that
// has every bit asked for):
//
//   device-local                              cuMemAlloc, hipMalloc: VRAM,
//                                             not mappable
//   host-visible | host-coherent              cuMemHostAlloc(PORTABLE | DEVICEMAP),
//                                             hipHostMalloc(Portable | Mapped):
//                                             pinned system memory, mapped
//                                             for the host and the device at
//                                             once; kernels read it over PCIe
//   device-local | host-visible | host-coherent
//                                             cuMemAllocManaged, hipMallocManaged
//                                             (attach global): managed memory,
//                                             which migrates to the device
//                                             that touches it; only where the
//                                             device has concurrent managed
//                                             access (the host may touch it
//                                             while kernels run elsewhere)
//
// Every allocation is its own API allocation (no sub-allocation yet), of at
// least one byte, so empty buffers have addresses too, rounded up to 256
// bytes. A freed allocation goes to the allocator's BlockCache rather than
// back to the API: cuMemAlloc and cuMemFree (hipMalloc, hipFree) cost tens
// of microseconds and may wait for the device, while a program allocates
// the same sizes on every call. The cache hands a block of the same kind and
// rounded size out again, frees the oldest blocks beyond a limit (a quarter
// of the device's memory, at most 4 GiB), and is emptied when an allocation
// fails for want of memory before that allocation is tried again. A buffer is a device
// address to every command (unified addressing: copies infer their
// direction) and, when host-visible, a host address for mapping; both kinds
// of host memory are coherent, so mapping needs no flush or invalidation.
// The largest allocation is the device's memory for device memory and
// managed memory (more managed memory than the GPU has can hang it) and the
// machine's physical memory for pinned memory.
//
// Import: caller memory becomes a buffer in place through host registration
// (cuMemHostRegister, hipHostRegister: portable and mapped, plus read-only
// for read-only memory where the device supports it). Registration is by
// whole pages, and the API refuses to register a page twice, while imports (a module's weights, say) often share
// pages: the process keeps one registry of registered page ranges, each
// counting the imports that use it and unregistered when the last goes. The
// device reads and writes the caller's bytes at their host address (devices
// where registered memory has another address on the device refuse imports
// with UNIMPLEMENTED).
//
// Ownership: buffers keep their StreamContext alive, so they outlive the
// allocator and the device. Thread safety: see hal/buffer.h and
// hal/allocator.h; the registry is under a mutex.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "drivers/stream/stream_context.h"
#include "hal/allocator.h"
#include "hal/buffer.h"

namespace strata::stream {

// What the device promises of every binding's address (its
// DeviceLimits::min_binding_alignment): CUDA and HIP bind any address, but 16 keeps
// 128-bit vector loads aligned, as Vulkan devices ask too. Allocations are
// aligned to 256 bytes, so only subspans and imports can miss it.
inline constexpr uint64_t kBindingAlignment = 16;

inline uint64_t AlignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// Where a buffer's memory came from, which says how to free it.
enum class MemoryKind : uint8_t { kDevice, kPinnedHost, kManaged, kImported };

// Freed device, managed and pinned allocations kept for reuse (see above).
// Thread-safe; it keeps the context alive, and frees what it holds when the
// last buffer and the allocator are gone.
class BlockCache {
 public:
  struct Block {
    DevicePtr device = 0;
    uint8_t* host = nullptr;
  };
  BlockCache(std::shared_ptr<StreamContext> context, uint64_t limit);
  ~BlockCache();
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // A kept block of `kind` and exactly `size` bytes, the last one given.
  bool Take(MemoryKind kind, uint64_t size, Block* block);
  // Keeps `block` for reuse, freeing the oldest blocks beyond the limit.
  void Give(MemoryKind kind, uint64_t size, Block block);
  // Frees every kept block; false when there was none.
  bool Clear();

 private:
  struct Entry {
    MemoryKind kind;
    uint64_t size;
    Block block;
  };
  void Free(const Entry& entry) const;

  std::shared_ptr<StreamContext> context_;
  const uint64_t limit_;
  std::mutex mutex_;
  std::deque<Entry> entries_;  // oldest first
  uint64_t bytes_ = 0;
};

class StreamBuffer final : public hal::Buffer {
 public:
  // `host` is null for device memory; `registrations` lists the registry
  // page ranges an import uses (empty otherwise).
  // `cache` (null for imports) takes the memory back, `allocated_size`
  // bytes of it, when the buffer is destroyed.
  StreamBuffer(std::shared_ptr<StreamContext> context, MemoryKind kind, hal::MemoryTypes memory_types,
             const hal::BufferParams& params, uint64_t length, DevicePtr device_address, uint8_t* host,
             std::vector<uintptr_t> registrations, hal::Allocator::ReleaseCallback release,
             std::shared_ptr<BlockCache> cache = nullptr, uint64_t allocated_size = 0);

  const StreamContext* context() const { return context_.get(); }
  // Byte 0 for kernels and copies.
  DevicePtr device_address() const { return device_address_; }
  // Byte 0 for the host, or null when not host-visible.
  uint8_t* host_address() const { return host_; }

 protected:
  ~StreamBuffer() override;
  StatusOr<uint8_t*> MapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access) override;
  Status UnmapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access, uint8_t* data) override;

 private:
  std::shared_ptr<StreamContext> context_;
  MemoryKind kind_;
  DevicePtr device_address_;
  uint8_t* host_;
  std::vector<uintptr_t> registrations_;
  hal::Allocator::ReleaseCallback release_;
  std::shared_ptr<BlockCache> cache_;
  uint64_t allocated_size_;
};

// The device address of byte `offset` of any buffer of a stream driver, subspans
// included.
inline DevicePtr DeviceAddress(const hal::Buffer* buffer, uint64_t offset) {
  const auto* allocated = static_cast<const StreamBuffer*>(buffer->allocated_buffer());
  return allocated->device_address() + buffer->byte_offset() + offset;
}

class StreamAllocator final : public hal::Allocator {
 public:
  static StatusOr<Ref<StreamAllocator>> Create(std::shared_ptr<StreamContext> context);

  // Pinned host memory for the driver's own use (command buffers' check
  // words and upload data), not counted in the statistics.
  StatusOr<Ref<StreamBuffer>> AllocateInternal(uint64_t length);

 protected:
  StatusOr<Ref<hal::Buffer>> AllocateBuffer(const hal::MemoryHeap& heap, const hal::BufferParams& params,
                                            uint64_t length) override;
  StatusOr<Ref<hal::Buffer>> ImportHostBuffer(const hal::BufferParams& params, std::span<uint8_t> memory,
                                              ReleaseCallback release) override;

 private:
  StreamAllocator(std::shared_ptr<StreamContext> context, std::vector<hal::MemoryHeap> heaps);
  StatusOr<Ref<StreamBuffer>> AllocateOfTypes(hal::MemoryTypes types, const hal::BufferParams& params, uint64_t length,
                                            ReleaseCallback release);
  // A new API allocation of `size` bytes (`length` rounded up).
  StatusOr<Ref<StreamBuffer>> AllocateNew(MemoryKind kind, hal::MemoryTypes types, const hal::BufferParams& params,
                                          uint64_t length, uint64_t size, ReleaseCallback& release);

  std::shared_ptr<StreamContext> context_;
  std::shared_ptr<BlockCache> cache_;
};

}  // namespace strata::stream
