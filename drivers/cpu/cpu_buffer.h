// CpuBuffer and CpuAllocator: host memory as device memory.
//
// On the CPU every byte is at once device-local, host-visible and
// host-coherent, so the allocator offers one heap with all three types and
// every usage. Buffers are 64-byte aligned heap allocations (a cache line, and
// enough for any vector load), or caller memory wrapped without a copy by
// Import. A buffer's address never changes, so command buffers resolve
// bindings to raw pointers when they record.
//
// Ownership and thread safety: see hal/buffer.h and hal/allocator.h.
#pragma once

#include <cstdint>

#include "hal/allocator.h"
#include "hal/buffer.h"

namespace strata::cpu {

class CpuBuffer final : public hal::Buffer {
 public:
  // Takes over `data`: freed with std::free, or handed to `release` if set.
  CpuBuffer(uint8_t* data, uint64_t length, hal::MemoryTypes memory_types, const hal::BufferParams& params,
            hal::Allocator::ReleaseCallback release);

  uint8_t* data() const { return data_; }

 protected:
  ~CpuBuffer() override;
  StatusOr<uint8_t*> MapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access) override;
  Status UnmapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access, uint8_t* data) override;

 private:
  uint8_t* data_;
  hal::Allocator::ReleaseCallback release_;
};

// The host address of byte `offset` of any CPU-family buffer (subspans
// included).
inline uint8_t* HostPointer(const hal::Buffer* buffer, uint64_t offset) {
  return static_cast<CpuBuffer*>(buffer->allocated_buffer())->data() + buffer->byte_offset() + offset;
}

// The largest allocation a CPU device makes unless its spec says otherwise
// (max_allocation=BYTES): the machine's physical memory, at most 2^40 bytes.
inline constexpr uint64_t kMaxAllocation = uint64_t{1} << 40;
uint64_t DefaultMaxAllocation();

class CpuAllocator final : public hal::Allocator {
 public:
  explicit CpuAllocator(uint64_t max_allocation);

 protected:
  StatusOr<Ref<hal::Buffer>> AllocateBuffer(const hal::MemoryHeap& heap, const hal::BufferParams& params,
                                                uint64_t length) override;
  StatusOr<Ref<hal::Buffer>> ImportHostBuffer(const hal::BufferParams& params, std::span<uint8_t> memory,
                                                  ReleaseCallback release) override;
};

}  // namespace strata::cpu
