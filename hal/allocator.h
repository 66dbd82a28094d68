// Allocator: where a device's buffers come from.
//
// An allocator offers one or more memory heaps, each with a set of memory
// types, the usages it supports and an alignment. Allocate picks the first heap
// that has every requested memory type bit and usage bit (as Vulkan picks a
// memory type index), so callers ask for what they need and drivers decide
// where it lives; the buffer reports the heap's actual memory types, which may
// be more than were asked for (all CPU memory is device-local, host-visible and
// host-coherent at once).
//
// Import wraps caller-owned host memory as a buffer without copying it; the
// caller's release callback runs once the last reference to the buffer (and
// to any subspan of it, and any command buffer that recorded it) is gone.
//
// Statistics: once enabled (they cost a few atomic operations per
// allocation, so they are off by default), the allocator counts the bytes of
// the buffers Allocate hands out (not imported memory) until each buffer is
// destroyed, and keeps the peak; `run-module --print-statistics` reports it.
//
// Ownership: the device owns its allocator and hands out borrowed pointers;
// the allocator is a RefObject only so that the VM can hold it in a register
// (a VM reference keeps it alive). Buffers do not need their allocator to stay
// alive.
//
// Thread safety: every method is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "hal/buffer.h"
#include "vm/base/ref.h"
#include "vm/base/status.h"

namespace strata::hal {

struct MemoryHeap {
  MemoryTypes memory_types;
  BufferUsages allowed_usage;
  uint64_t max_allocation_size;
  uint64_t min_alignment;  // of every buffer allocated from it
};

struct AllocatorStatistics {
  uint64_t live_bytes = 0;   // allocated and not yet freed
  uint64_t peak_bytes = 0;   // the most live at any one time so far
  uint64_t allocations = 0;  // buffers allocated so far
};

// What a buffer must offer. `memory_types` is the set of required bits (0:
// any heap will do); `access` limits what device and host may do to it.
struct BufferParams {
  MemoryTypes memory_types = 0;
  BufferUsages usage = kUsageAll;
  MemoryAccesses access = kAccessReadWrite;
};

class Allocator : public RefObject {
 public:
  static const RefTypeInfo kType;  // "hal.allocator"
  using ReleaseCallback = std::function<void()>;

  std::span<const MemoryHeap> heaps() const { return heaps_; }

  // A new buffer of `length` bytes (0 allowed) whose contents are undefined,
  // as on every GPU API: clearing large buffers nobody reads costs time.
  // `preferred` usages are added where the chosen heap (the first to offer
  // the params' memory types and usage) allows them, and dropped where it
  // does not: results that the host may map where the device's memory is
  // host-visible (the CPU, unified memory) and that stay device-local on a
  // discrete GPU, read back through staging (ReadBuffer).
  StatusOr<Ref<Buffer>> Allocate(const BufferParams& params, uint64_t length, BufferUsages preferred = 0);

  // A buffer over `memory` (not copied). `release` (may be empty) runs when
  // the buffer is destroyed. On failure, nothing is wrapped, `release` is not
  // called and the caller keeps its memory.
  StatusOr<Ref<Buffer>> Import(const BufferParams& params, std::span<uint8_t> memory,
                                   ReleaseCallback release);

  // Counts the buffers allocated from now on (see above); Device's
  // set_statistics_enabled turns this on with the device's own counters.
  void set_statistics_enabled(bool enabled) { statistics_enabled_.store(enabled, std::memory_order_relaxed); }
  // What Allocate has handed out while counting (a snapshot).
  AllocatorStatistics statistics() const;

 protected:
  explicit Allocator(std::vector<MemoryHeap> heaps)
      : RefObject(&kType), heaps_(std::move(heaps)), counter_(std::make_shared<AllocationCounter>()) {}

  // Driver hooks, called with validated parameters. `heap` is the heap
  // Allocate chose.
  virtual StatusOr<Ref<Buffer>> AllocateBuffer(const MemoryHeap& heap, const BufferParams& params,
                                                   uint64_t length) = 0;
  virtual StatusOr<Ref<Buffer>> ImportHostBuffer(const BufferParams& params, std::span<uint8_t> memory,
                                                     ReleaseCallback release) = 0;

 private:
  Status ValidateParams(const char* what, const BufferParams& params) const;

  std::vector<MemoryHeap> heaps_;
  std::atomic<bool> statistics_enabled_{false};
  std::shared_ptr<AllocationCounter> counter_;
};

}  // namespace strata::hal
