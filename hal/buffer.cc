#include "hal/buffer.h"

#include <utility>

namespace strata::hal {

const RefTypeInfo Buffer::kType = {"hal.buffer"};

template <typename Bits>
static std::string DescribeBits(Bits bits, std::initializer_list<std::pair<Bits, const char*>> names) {
  std::string out;
  for (const auto& [bit, name] : names) {
    if (!(bits & bit)) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  return out.empty() ? "none" : out;
}

std::string DescribeMemoryTypes(MemoryTypes types) {
  return DescribeBits<MemoryTypes>(types, {{kMemoryDeviceLocal, "device-local"},
                                           {kMemoryHostVisible, "host-visible"},
                                           {kMemoryHostCoherent, "host-coherent"}});
}

std::string DescribeBufferUsages(BufferUsages usages) {
  return DescribeBits<BufferUsages>(usages, {{kUsageTransferSource, "transfer-source"},
                                             {kUsageTransferTarget, "transfer-target"},
                                             {kUsageDispatchStorage, "dispatch-storage"},
                                             {kUsageMapping, "mapping"}});
}

// A view of part of another buffer's memory. Subspans of subspans view the
// allocated buffer directly, so a chain never grows.
class SubspanBuffer final : public Buffer {
 public:
  SubspanBuffer(Ref<Buffer> allocated, uint64_t byte_offset, uint64_t byte_length)
      : Buffer(std::move(allocated), byte_offset, byte_length) {}

 protected:
  StatusOr<uint8_t*> MapRange(uint64_t offset, uint64_t length, MemoryAccesses access) override {
    return allocated_buffer()->MapRange(byte_offset() + offset, length, access);
  }
  Status UnmapRange(uint64_t offset, uint64_t length, MemoryAccesses access, uint8_t* data) override {
    return allocated_buffer()->UnmapRange(byte_offset() + offset, length, access, data);
  }
};

Buffer::Buffer(const DriverFamily* family, MemoryTypes memory_types, BufferUsages usage,
               MemoryAccesses allowed_access, uint64_t byte_length)
    : Resource(&kType, family),
      memory_types_(memory_types),
      usage_(usage),
      allowed_access_(allowed_access),
      byte_length_(byte_length),
      byte_offset_(0),
      allocated_buffer_(this) {}

void AllocationCounter::Add(uint64_t bytes) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  const uint64_t live = live_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

Buffer::~Buffer() {
  if (allocation_counter_) allocation_counter_->Remove(byte_length_);
}

Buffer::Buffer(Ref<Buffer> allocated, uint64_t byte_offset, uint64_t byte_length)
    : Resource(&kType, allocated->family()),
      memory_types_(allocated->memory_types_),
      usage_(allocated->usage_),
      allowed_access_(allocated->allowed_access_),
      byte_length_(byte_length),
      byte_offset_(byte_offset),
      allocated_buffer_(allocated.get()),
      allocated_ref_(std::move(allocated)) {}

StatusOr<uint64_t> Buffer::ResolveRange(const char* what, uint64_t offset, uint64_t length) const {
  if (offset > byte_length_) {
    return OutOfRangeError(what, ": offset ", offset, " is past the end of a ", byte_length_, "-byte buffer");
  }
  if (length == kWholeBuffer) return byte_length_ - offset;
  if (length > byte_length_ - offset) {
    return OutOfRangeError(what, ": bytes [", offset, ", ", offset + length, ") are out of range of a ",
                           byte_length_, "-byte buffer");
  }
  return length;
}

Status Buffer::CheckUsage(const char* what, BufferUsages required) const {
  if ((usage_ & required) != required) {
    return InvalidArgumentError(what, ": the buffer needs usage ", DescribeBufferUsages(required),
                                " but was created with ", DescribeBufferUsages(usage_));
  }
  return OkStatus();
}

Status Buffer::CheckAccess(const char* what, MemoryAccesses access) const {
  if ((allowed_access_ & access) != access) {
    return FailedPreconditionError(what, ": the buffer is ",
                                   allowed_access_ == kAccessRead ? "read-only" : "not readable",
                                   (access & kAccessWrite) ? " and cannot be written" : " and cannot be read");
  }
  return OkStatus();
}

StatusOr<Ref<Buffer>> Buffer::Subspan(uint64_t offset, uint64_t length) {
  STRATA_ASSIGN_OR_RETURN(uint64_t resolved, ResolveRange("buffer subspan", offset, length));
  Ref<Buffer> allocated = Ref<Buffer>::Borrow(allocated_buffer_);
  return Ref<Buffer>(
      Ref<SubspanBuffer>::Adopt(new SubspanBuffer(std::move(allocated), byte_offset_ + offset, resolved)));
}

StatusOr<MappedRange> Buffer::Map(MemoryAccesses access, uint64_t offset, uint64_t length) {
  if (access == 0 || (access & ~kAccessReadWrite)) {
    return InvalidArgumentError("buffer map: access must be read, write or both, got bits ", access);
  }
  // The usage first: a buffer made without the mapping usage is refused the
  // same way whatever memory it got (on a CPU, all memory is host-visible).
  STRATA_RETURN_IF_ERROR(CheckUsage("buffer map", kUsageMapping));
  if (!(memory_types_ & kMemoryHostVisible)) {
    return FailedPreconditionError("buffer map: the buffer's memory (", DescribeMemoryTypes(memory_types_),
                                   ") is not host-visible; copy it to a host-visible buffer to read it");
  }
  STRATA_RETURN_IF_ERROR(CheckAccess("buffer map", access));
  STRATA_ASSIGN_OR_RETURN(uint64_t resolved, ResolveRange("buffer map", offset, length));
  STRATA_ASSIGN_OR_RETURN(uint8_t* data, MapRange(offset, resolved, access));
  MappedRange range;
  range.buffer_ = Ref<Buffer>::Borrow(this);
  range.offset_ = offset;
  range.length_ = resolved;
  range.access_ = access;
  range.data_ = data;
  return range;
}

MappedRange& MappedRange::operator=(MappedRange&& other) noexcept {
  if (this != &other) {
    if (data_) Unmap().IgnoreError();
    buffer_ = std::move(other.buffer_);
    offset_ = other.offset_;
    length_ = other.length_;
    access_ = other.access_;
    data_ = std::exchange(other.data_, nullptr);
  }
  return *this;
}

MappedRange::~MappedRange() {
  if (data_) Unmap().IgnoreError();
}

Status MappedRange::Unmap() {
  if (!data_) return FailedPreconditionError("buffer unmap: the range is not mapped (already unmapped)");
  Status status = buffer_->UnmapRange(offset_, length_, access_, std::exchange(data_, nullptr));
  buffer_ = nullptr;
  return status;
}

}  // namespace strata::hal
