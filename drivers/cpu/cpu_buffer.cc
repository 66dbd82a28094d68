#include "drivers/cpu/cpu_buffer.h"

#include <unistd.h>

#include <algorithm>

#include <cstdlib>

#include "drivers/cpu/cpu_device.h"

namespace strata::cpu {

namespace {

constexpr hal::MemoryTypes kCpuMemory = hal::kMemoryDeviceLocal | hal::kMemoryHostVisible | hal::kMemoryHostCoherent;
constexpr uint64_t kAlignment = 64;
}  // namespace

uint64_t DefaultMaxAllocation() {
  // A corrupt or hostile length asks for an error, not for the whole
  // machine: nothing larger than its physical memory.
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return kMaxAllocation;
  return std::min(kMaxAllocation, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size));
}

CpuBuffer::CpuBuffer(uint8_t* data, uint64_t length, hal::MemoryTypes memory_types, const hal::BufferParams& params,
                     hal::Allocator::ReleaseCallback release)
    : Buffer(&kCpuFamily, memory_types, params.usage, params.access, length),
      data_(data),
      release_(std::move(release)) {}

CpuBuffer::~CpuBuffer() {
  if (release_) {
    release_();
  } else {
    std::free(data_);
  }
}

StatusOr<uint8_t*> CpuBuffer::MapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access) {
  return data_ + offset;
}

// Host memory is coherent and stays addressable: there is nothing to flush and
// nothing to release when a mapping ends.
Status CpuBuffer::UnmapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access, uint8_t* data) {
  return OkStatus();
}

CpuAllocator::CpuAllocator(uint64_t max_allocation)
    : Allocator({hal::MemoryHeap{kCpuMemory, hal::kUsageAll, max_allocation, kAlignment}}) {}

StatusOr<Ref<hal::Buffer>> CpuAllocator::AllocateBuffer(const hal::MemoryHeap& heap,
                                                            const hal::BufferParams& params, uint64_t length) {
  // Zero-length buffers still get a unique, aligned address.
  uint64_t rounded = (length + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment);
  if (!data) return ResourceExhaustedError("allocate: out of host memory allocating ", length, " bytes");
  return Ref<hal::Buffer>(MakeRef<CpuBuffer>(static_cast<uint8_t*>(data), length, heap.memory_types,
                                                     params, nullptr));
}

StatusOr<Ref<hal::Buffer>> CpuAllocator::ImportHostBuffer(const hal::BufferParams& params,
                                                              std::span<uint8_t> memory, ReleaseCallback release) {
  if ((kCpuMemory & params.memory_types) != params.memory_types) {
    return InvalidArgumentError("import: host memory is ", hal::DescribeMemoryTypes(kCpuMemory), ", not ",
                                hal::DescribeMemoryTypes(params.memory_types));
  }
  // An empty release callback would make the buffer free() memory it does not
  // own; give it one that does nothing instead.
  if (!release) release = [] {};
  return Ref<hal::Buffer>(
      MakeRef<CpuBuffer>(memory.data(), memory.size(), kCpuMemory, params, std::move(release)));
}

}  // namespace strata::cpu
