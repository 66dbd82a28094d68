#include "hal/allocator.h"

namespace strata::hal {

const RefTypeInfo Allocator::kType = {"hal.allocator"};

Status Allocator::ValidateParams(const char* what, const BufferParams& params) const {
  if (params.memory_types & ~kMemoryTypeMask) {
    return InvalidArgumentError(what, ": unknown memory type bits 0x",
                                Hex(params.memory_types & ~kMemoryTypeMask));
  }
  if ((params.memory_types & kMemoryHostCoherent) && !(params.memory_types & kMemoryHostVisible)) {
    return InvalidArgumentError(what, ": memory type host-coherent requires host-visible");
  }
  if (params.usage == 0 || (params.usage & ~kUsageAll)) {
    return InvalidArgumentError(what, ": usage must be a nonzero combination of the known bits (0x",
                                Hex(kUsageAll), "), got 0x", Hex(params.usage));
  }
  if (params.access == 0 || (params.access & ~kAccessReadWrite)) {
    return InvalidArgumentError(what, ": access must be read, write or both, got bits ", params.access);
  }
  if ((params.usage & kUsageTransferTarget) && !(params.access & kAccessWrite)) {
    return InvalidArgumentError(what, ": a read-only buffer cannot have usage transfer-target");
  }
  return OkStatus();
}

StatusOr<Ref<Buffer>> Allocator::Allocate(const BufferParams& params, uint64_t length, BufferUsages preferred) {
  STRATA_RETURN_IF_ERROR(ValidateParams("allocate", params));
  if (preferred & ~kUsageAll) {
    return InvalidArgumentError("allocate: unknown preferred usage bits 0x", Hex(preferred & ~kUsageAll));
  }
  // Mapping needs host-visible memory, so asking for the usage implies it.
  MemoryTypes required = params.memory_types | ((params.usage & kUsageMapping) ? MemoryTypes{kMemoryHostVisible} : 0);
  for (const MemoryHeap& heap : heaps_) {
    if ((heap.memory_types & required) != required) continue;
    if ((heap.allowed_usage & params.usage) != params.usage) continue;
    if (length > heap.max_allocation_size) {
      return ResourceExhaustedError("allocate: ", length, " bytes requested, the largest allocation of ",
                                    DescribeMemoryTypes(heap.memory_types), " memory is ",
                                    heap.max_allocation_size, " bytes");
    }
    BufferParams chosen = params;
    chosen.usage |= preferred & heap.allowed_usage;
    // Mapping needs host-visible memory, whatever the heap allows (a
    // required mapping already chose a host-visible heap).
    if (!(heap.memory_types & kMemoryHostVisible)) chosen.usage &= ~kUsageMapping;
    STRATA_ASSIGN_OR_RETURN(Ref<Buffer> buffer, AllocateBuffer(heap, chosen, length));
    if (statistics_enabled_.load(std::memory_order_relaxed)) {
      buffer->allocation_counter_ = counter_;
      counter_->Add(length);
    }
    return buffer;
  }
  const auto describe = [](const MemoryHeap& heap) {
    return StrCat(DescribeMemoryTypes(heap.memory_types), " for ", DescribeBufferUsages(heap.allowed_usage));
  };
  return InvalidArgumentError("allocate: no memory heap offers ", DescribeMemoryTypes(required), " for ",
                              DescribeBufferUsages(params.usage), " (heaps: ", JoinNames(heaps_, describe, "; "), ")");
}

AllocatorStatistics Allocator::statistics() const {
  AllocatorStatistics statistics;
  statistics.live_bytes = counter_->live_bytes.load(std::memory_order_relaxed);
  statistics.peak_bytes = counter_->peak_bytes.load(std::memory_order_relaxed);
  statistics.allocations = counter_->allocations.load(std::memory_order_relaxed);
  return statistics;
}

StatusOr<Ref<Buffer>> Allocator::Import(const BufferParams& params, std::span<uint8_t> memory,
                                            ReleaseCallback release) {
  STRATA_RETURN_IF_ERROR(ValidateParams("import", params));
  if (memory.data() == nullptr && !memory.empty()) {
    return InvalidArgumentError("import: null host memory of ", memory.size(), " bytes");
  }
  return ImportHostBuffer(params, memory, std::move(release));
}

}  // namespace strata::hal
