#include "vm/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace strata::vm {

const RefTypeInfo Buffer::kType = {"vm.buffer"};

// Heap buffers are limited so that a corrupt or hostile length asks for an
// error, not for the whole machine.
static constexpr uint64_t kMaxHeapBufferBytes = uint64_t{1} << 40;

StatusOr<Ref<Buffer>> Buffer::Allocate(uint64_t length) {
  if (length > kMaxHeapBufferBytes) {
    return ResourceExhaustedError("buffer.alloc: ", length, " bytes requested, limit is ",
                                  kMaxHeapBufferBytes);
  }
  uint64_t rounded = (length + 63) & ~uint64_t{63};
  void* data = rounded ? std::aligned_alloc(64, rounded) : nullptr;
  if (rounded && !data) {
    return ResourceExhaustedError("buffer.alloc: out of memory allocating ", length, " bytes");
  }
  if (data) std::memset(data, 0, rounded);
  return Ref<Buffer>::Adopt(
      new Buffer(static_cast<uint8_t*>(data), length, /*owns=*/true, nullptr, /*writable=*/true));
}

Ref<Buffer> Buffer::Wrap(std::span<uint8_t> bytes, Ref<RefObject> owner, bool writable) {
  return Ref<Buffer>::Adopt(
      new Buffer(bytes.data(), bytes.size(), /*owns=*/false, std::move(owner), writable));
}

Buffer::Buffer(uint8_t* data, uint64_t length, bool owns, Ref<RefObject> owner, bool writable)
    : RefObject(&kType),
      data_(data),
      length_(length),
      owns_(owns),
      writable_(writable),
      owner_(std::move(owner)) {}

Buffer::~Buffer() {
  if (owns_) std::free(data_);
}

Status Buffer::CheckRange(const char* what, uint64_t offset, uint64_t size, bool write) const {
  if (offset > length_ || size > length_ - offset) {
    return OutOfRangeError(what, ": bytes [", offset, ", ", offset + size,
                           ") are out of range of a ", length_, "-byte buffer");
  }
  if (write && !writable_) {
    return FailedPreconditionError(what, ": buffer is read-only (module rodata)");
  }
  return OkStatus();
}

}  // namespace strata::vm
