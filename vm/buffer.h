// vm.buffer: a byte buffer the host program can load from and store to.
//
// A buffer either owns heap storage (buffer.alloc, host code) or views bytes
// owned by something else (a module's rodata, caller memory) and keeps that
// owner alive with a reference, so rodata is used in place with no copy.
// Views of rodata are read-only.
//
// Thread safety: the object is immutable apart from its bytes; concurrent
// writes to overlapping bytes are the caller's race to avoid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vm/base/ref.h"
#include "vm/base/status.h"

namespace strata::vm {

class Buffer final : public RefObject {
 public:
  static const RefTypeInfo kType;

  // A zero-filled, 64-byte aligned heap buffer.
  static StatusOr<Ref<Buffer>> Allocate(uint64_t length);
  // A view of `bytes`, kept valid by a reference to `owner` (may be null when
  // the caller guarantees the bytes outlive the buffer).
  static Ref<Buffer> Wrap(std::span<uint8_t> bytes, Ref<RefObject> owner, bool writable);

  uint8_t* data() const { return data_; }
  uint64_t length() const { return length_; }
  bool writable() const { return writable_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(length_)}; }

  // Checks that [offset, offset + size) lies inside the buffer (and, for a
  // write, that the buffer is writable); the error names `what`.
  Status CheckRange(const char* what, uint64_t offset, uint64_t size, bool write) const;

 private:
  Buffer(uint8_t* data, uint64_t length, bool owns, Ref<RefObject> owner, bool writable);
  ~Buffer() override;

  uint8_t* data_;
  uint64_t length_;
  bool owns_;
  bool writable_;
  Ref<RefObject> owner_;
};

}  // namespace strata::vm
