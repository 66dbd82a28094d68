// CudaBuffer and CudaAllocator: HAL buffers in the memory CUDA offers.
//
// Heaps, fewest memory-type bits first (hal/allocator.h picks the first that
// has every bit asked for):
//
//   device-local                              cuMemAlloc: VRAM, not mappable
//   host-visible | host-coherent              cuMemHostAlloc(PORTABLE | DEVICEMAP):
//                                             pinned system memory, mapped
//                                             for the host and the device at
//                                             once; kernels read it over PCIe
//   device-local | host-visible | host-coherent
//                                             cuMemAllocManaged(ATTACH_GLOBAL):
//                                             managed memory, which migrates
//                                             to the device that touches it;
//                                             only where the device has
//                                             concurrent managed access (the
//                                             host may touch it while kernels
//                                             run elsewhere)
//
// Every allocation is its own CUDA allocation (no sub-allocation yet), of at
// least one byte, so empty buffers have addresses too. A buffer is a device
// address to every command (unified addressing: copies infer their
// direction) and, when host-visible, a host address for mapping; both kinds
// of host memory are coherent, so mapping needs no flush or invalidation.
// The largest allocation is the device's memory for device memory and
// managed memory (more managed memory than the GPU has can hang it) and the
// machine's physical memory for pinned memory.
//
// Import: caller memory becomes a buffer in place through cuMemHostRegister
// (PORTABLE | DEVICEMAP, plus READ_ONLY for read-only memory where the
// device supports it). Registration is by whole pages, and CUDA refuses to
// register a page twice, while imports (a module's weights, say) often share
// pages: the process keeps one registry of registered page ranges, each
// counting the imports that use it and unregistered when the last goes. The
// device reads and writes the caller's bytes at their host address (devices
// without CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM refuse
// imports with UNIMPLEMENTED).
//
// Ownership: buffers keep their CudaContext alive, so they outlive the
// allocator and the device. Thread safety: see hal/buffer.h and
// hal/allocator.h; the registry is under a mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "drivers/cuda/cuda_context.h"
#include "hal/allocator.h"
#include "hal/buffer.h"

namespace strata::cuda {

extern const hal::DriverFamily kCudaFamily;

// What the device promises of every binding's address (its
// DeviceLimits::min_binding_alignment): CUDA binds any address, but 16 keeps
// 128-bit vector loads aligned, as Vulkan devices ask too. Allocations are
// aligned to 256 bytes, so only subspans and imports can miss it.
inline constexpr uint64_t kBindingAlignment = 16;

// Where a buffer's memory came from, which says how to free it.
enum class MemoryKind : uint8_t { kDevice, kPinnedHost, kManaged, kImported };

class CudaBuffer final : public hal::Buffer {
 public:
  // `host` is null for device memory; `registrations` lists the registry
  // page ranges an import uses (empty otherwise).
  CudaBuffer(std::shared_ptr<CudaContext> context, MemoryKind kind, hal::MemoryTypes memory_types,
             const hal::BufferParams& params, uint64_t length, CUdeviceptr device_address, uint8_t* host,
             std::vector<uintptr_t> registrations, hal::Allocator::ReleaseCallback release);

  const CudaContext* context() const { return context_.get(); }
  // Byte 0 for kernels and copies.
  CUdeviceptr device_address() const { return device_address_; }
  // Byte 0 for the host, or null when not host-visible.
  uint8_t* host_address() const { return host_; }

 protected:
  ~CudaBuffer() override;
  StatusOr<uint8_t*> MapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access) override;
  Status UnmapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access, uint8_t* data) override;

 private:
  std::shared_ptr<CudaContext> context_;
  MemoryKind kind_;
  CUdeviceptr device_address_;
  uint8_t* host_;
  std::vector<uintptr_t> registrations_;
  hal::Allocator::ReleaseCallback release_;
};

// The device address of byte `offset` of any CUDA-family buffer, subspans
// included.
inline CUdeviceptr DeviceAddress(const hal::Buffer* buffer, uint64_t offset) {
  const auto* allocated = static_cast<const CudaBuffer*>(buffer->allocated_buffer());
  return allocated->device_address() + buffer->byte_offset() + offset;
}

class CudaAllocator final : public hal::Allocator {
 public:
  static StatusOr<Ref<CudaAllocator>> Create(std::shared_ptr<CudaContext> context);

  // Pinned host memory for the driver's own use (command buffers' check
  // words and upload data), not counted in the statistics.
  StatusOr<Ref<CudaBuffer>> AllocateInternal(uint64_t length);

 protected:
  StatusOr<Ref<hal::Buffer>> AllocateBuffer(const hal::MemoryHeap& heap, const hal::BufferParams& params,
                                            uint64_t length) override;
  StatusOr<Ref<hal::Buffer>> ImportHostBuffer(const hal::BufferParams& params, std::span<uint8_t> memory,
                                              ReleaseCallback release) override;

 private:
  CudaAllocator(std::shared_ptr<CudaContext> context, std::vector<hal::MemoryHeap> heaps);
  StatusOr<Ref<CudaBuffer>> AllocateOfTypes(hal::MemoryTypes types, const hal::BufferParams& params, uint64_t length,
                                            ReleaseCallback release);

  std::shared_ptr<CudaContext> context_;
};

}  // namespace strata::cuda
