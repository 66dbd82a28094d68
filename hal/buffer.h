// Buffer: a range of device memory, with memory types, usage and host mapping.
//
// A buffer comes from a device's Allocator (allocated, or imported from
// caller-owned host memory) or from Subspan, which views a byte range of
// another buffer and keeps it alive. Every buffer knows the *allocated buffer*
// that owns its memory and its byte offset in it, so drivers resolve any
// buffer to (their own memory object, offset) in one step.
//
// Memory types and usage bits mirror Vulkan's memory property flags and buffer
// usage flags, so GPU drivers map them one to one. Their numeric values are
// part of the `hal` VM module's ABI (the compiler emits them as constants).
//
// Mapping gives the host a pointer into host-visible memory for the life of a
// MappedRange; memory that is not host-coherent is invalidated on map and
// flushed on unmap by the driver, so callers never handle coherency
// themselves. A buffer whose memory is only device-local cannot be mapped on
// any driver, CPU included, so code that works on the CPU also works on GPUs.
//
// Ownership: buffers are RefObjects; whoever creates one owns its first
// reference. Command buffers retain the buffers they record, so a buffer
// released by its creator stays alive until the work using it is done (and
// only then runs an imported buffer's release callback).
//
// Thread safety: a buffer's properties are immutable and every method is
// thread-safe. Concurrent host or device writes to overlapping bytes are the
// caller's race to avoid, as on every GPU API.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hal/resource.h"
#include "schemas/buffer_bits.h"
#include "vm/base/status.h"

namespace strata::hal {

// Memory type bits (a bitfield in MemoryTypes).
using MemoryTypes = uint32_t;
enum MemoryTypeBit : MemoryTypes {
  kMemoryDeviceLocal = buffer_bits::kDeviceLocal,    // fastest for the device to access
  kMemoryHostVisible = buffer_bits::kHostVisible,    // the host can map it
  kMemoryHostCoherent = buffer_bits::kHostCoherent,  // writes seen both ways without flushes
  kMemoryTypeMask = buffer_bits::kAllMemoryTypes,
};

// Usage bits (a bitfield in BufferUsages): what a buffer may be used for.
// Devices place buffers by usage, and command buffers check it when recording.
using BufferUsages = uint32_t;
enum BufferUsageBit : BufferUsages {
  kUsageTransferSource = buffer_bits::kTransferSource,    // copy source
  kUsageTransferTarget = buffer_bits::kTransferTarget,    // fill, copy and update target
  kUsageDispatchStorage = buffer_bits::kDispatchStorage,  // dispatch binding
  kUsageMapping = buffer_bits::kMapping,                  // host mapping
  kUsageAll = buffer_bits::kAllUsages,
};

// Access bits (a bitfield in MemoryAccesses).
using MemoryAccesses = uint32_t;
enum MemoryAccessBit : MemoryAccesses {
  kAccessRead = 1u << 0,
  kAccessWrite = 1u << 1,
  kAccessReadWrite = kAccessRead | kAccessWrite,
};

// "device-local|host-visible", "none".
std::string DescribeMemoryTypes(MemoryTypes types);
// "transfer-source|dispatch-storage", "none".
std::string DescribeBufferUsages(BufferUsages usages);

class Buffer;

// The bytes an allocator has handed out and not yet got back, and the most
// it ever had out at once. Shared by the allocator and every buffer it
// allocated, because buffers may outlive their allocator.
struct AllocationCounter {
  std::atomic<uint64_t> live_bytes{0};
  std::atomic<uint64_t> peak_bytes{0};
  std::atomic<uint64_t> allocations{0};

  void Add(uint64_t bytes);
  void Remove(uint64_t bytes) { live_bytes.fetch_sub(bytes, std::memory_order_relaxed); }
};

// Host access to a mapped byte range of a buffer, for as long as this object
// lives (or until Unmap). Move-only; keeps the buffer alive.
class MappedRange {
 public:
  MappedRange() = default;
  MappedRange(MappedRange&& other) noexcept { *this = std::move(other); }
  MappedRange& operator=(MappedRange&& other) noexcept;
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;
  // Unmaps; an error from unmapping is dropped (call Unmap to see it).
  ~MappedRange();

  // Empty once unmapped.
  std::span<uint8_t> bytes() const { return {data_, static_cast<size_t>(data_ ? length_ : 0)}; }
  // The bytes as an array of T (length rounded down to whole elements).
  template <typename T>
  std::span<T> As() const {
    return {reinterpret_cast<T*>(data_), static_cast<size_t>(data_ ? length_ / sizeof(T) : 0)};
  }
  // Flushes host writes (for memory that is not host-coherent) and ends the
  // mapping. A second call fails: the range is no longer mapped.
  Status Unmap();

 private:
  friend class Buffer;
  Ref<Buffer> buffer_;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
  MemoryAccesses access_ = 0;
  uint8_t* data_ = nullptr;
};

class Buffer : public Resource {
 public:
  static const RefTypeInfo kType;  // "hal.buffer"
  // As a length: everything from the offset to the end of the buffer.
  static constexpr uint64_t kWholeBuffer = ~uint64_t{0};

  MemoryTypes memory_types() const { return memory_types_; }
  BufferUsages usage() const { return usage_; }
  // What the device and host may do to the bytes (imported read-only memory,
  // such as a module's rodata, allows only reads).
  MemoryAccesses allowed_access() const { return allowed_access_; }
  uint64_t byte_length() const { return byte_length_; }
  // The buffer that owns the memory (this buffer unless it is a subspan) and
  // this buffer's offset inside it.
  Buffer* allocated_buffer() const { return allocated_buffer_; }
  uint64_t byte_offset() const { return byte_offset_; }

  // Resolves `length` (which may be kWholeBuffer) of the range starting at
  // `offset` and checks that the range lies inside this buffer. Errors name
  // `what` ("fill target") and the buffer's length.
  StatusOr<uint64_t> ResolveRange(const char* what, uint64_t offset, uint64_t length) const;
  // Checks that the buffer was created with every bit of `required`.
  Status CheckUsage(const char* what, BufferUsages required) const;
  // Checks that the buffer allows `access` (e.g. that a write target is not
  // read-only).
  Status CheckAccess(const char* what, MemoryAccesses access) const;

  // A buffer viewing [offset, offset + length) of this one; it keeps this
  // buffer's memory alive and shares its properties.
  StatusOr<Ref<Buffer>> Subspan(uint64_t offset, uint64_t length);

  // Maps [offset, offset + length) for the host. Needs kUsageMapping, a
  // host-visible memory type, and `access` within allowed_access().
  StatusOr<MappedRange> Map(MemoryAccesses access, uint64_t offset = 0, uint64_t length = kWholeBuffer);

 protected:
  // An allocated buffer: owns its memory.
  Buffer(const DriverFamily* family, MemoryTypes memory_types, BufferUsages usage,
         MemoryAccesses allowed_access, uint64_t byte_length);
  // A view of `allocated`'s bytes [byte_offset, byte_offset + byte_length).
  Buffer(Ref<Buffer> allocated, uint64_t byte_offset, uint64_t byte_length);

  // Gives an allocated buffer's bytes back to the counter of the allocator
  // that allocated it.
  ~Buffer() override;

  // Driver hooks, called with a range already checked against this buffer.
  // `offset` is relative to this buffer. MapRange returns the host address of
  // the range's first byte; UnmapRange receives it back.
  virtual StatusOr<uint8_t*> MapRange(uint64_t offset, uint64_t length, MemoryAccesses access) = 0;
  virtual Status UnmapRange(uint64_t offset, uint64_t length, MemoryAccesses access, uint8_t* data) = 0;

 private:
  friend class Allocator;
  friend class MappedRange;
  friend class SubspanBuffer;

  MemoryTypes memory_types_;
  BufferUsages usage_;
  MemoryAccesses allowed_access_;
  uint64_t byte_length_;
  uint64_t byte_offset_;
  Buffer* allocated_buffer_;
  // Set for subspans: the reference that keeps the allocated buffer alive.
  Ref<Buffer> allocated_ref_;
  // Set for buffers from Allocator::Allocate (not imports, not subspans).
  std::shared_ptr<AllocationCounter> allocation_counter_;
};

// A byte range of a buffer, as used by dispatch bindings and binding tables.
// A dispatch binding of an indirect command buffer may name no buffer but a
// slot of the binding table each submission gives (CommandBuffer::indirect):
// buffer null, `slot` the entry, offset and length within that entry's range.
struct BufferBinding {
  static constexpr uint32_t kNoSlot = 0xffffffffu;

  Buffer* buffer = nullptr;  // borrowed for the duration of the call
  uint64_t offset = 0;
  uint64_t length = Buffer::kWholeBuffer;
  uint32_t slot = kNoSlot;

  static BufferBinding Slot(uint32_t slot, uint64_t offset = 0, uint64_t length = Buffer::kWholeBuffer) {
    return {nullptr, offset, length, slot};
  }
  bool indirect() const { return slot != kNoSlot; }
};

}  // namespace strata::hal
