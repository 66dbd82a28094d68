// BufferView: a buffer range interpreted as a dense, row-major tensor with a
// shape and an element type. This is what the host program passes around as
// a tensor and what tools print.
//
// Creation checks that the element type is known, that the shape's byte size
// (product of the dimensions times the element size) does not overflow and
// that it fits in the buffer after the view's byte offset.
//
// Element types are packed as (kind << 8) | bit width; the numeric values are
// part of the `hal` VM module's ABI.
//
// Ownership: a RefObject that keeps its buffer alive. Immutable after
// creation, so every method is thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "hal/buffer.h"
#include "schemas/element_type.h"
#include "vm/base/ref.h"
#include "vm/base/status.h"

namespace strata::hal {

// schemas/element_type.h: the types, their names and sizes.
using ElementType = ::strata::ElementType;

class BufferView final : public RefObject {
 public:
  static const RefTypeInfo kType;  // "hal.buffer_view"
  // Enough for every tensor the compiler produces; keeps the shape inline.
  static constexpr uint32_t kMaxRank = 8;

  static StatusOr<Ref<BufferView>> Create(Ref<Buffer> buffer, uint64_t byte_offset,
                                              ElementType element_type, std::span<const int64_t> shape);

  Buffer* buffer() const { return buffer_.get(); }
  uint64_t byte_offset() const { return byte_offset_; }
  uint64_t byte_length() const { return byte_length_; }
  ElementType element_type() const { return element_type_; }
  uint32_t rank() const { return rank_; }
  std::span<const int64_t> shape() const { return {shape_, rank_}; }
  uint64_t element_count() const;

  // "4x8xf32".
  std::string DescribeType() const;

 private:
  BufferView() : RefObject(&kType) {}

  Ref<Buffer> buffer_;
  uint64_t byte_offset_ = 0;
  uint64_t byte_length_ = 0;
  ElementType element_type_ = ElementType::kInt8;
  uint32_t rank_ = 0;
  int64_t shape_[kMaxRank] = {};
};

}  // namespace strata::hal
