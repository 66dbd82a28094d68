#include "hal/buffer_view.h"

#include <algorithm>

namespace strata::hal {

const RefTypeInfo BufferView::kType = {"hal.buffer_view"};

StatusOr<Ref<BufferView>> BufferView::Create(Ref<Buffer> buffer, uint64_t byte_offset,
                                                 ElementType element_type, std::span<const int64_t> shape) {
  if (!buffer) return InvalidArgumentError("buffer view: the buffer is null");
  uint32_t element_size = ElementTypeByteSize(element_type);
  if (element_size == 0) {
    return InvalidArgumentError("buffer view: unknown element type 0x",
                                Hex(static_cast<uint32_t>(element_type)));
  }
  if (shape.size() > kMaxRank) {
    return InvalidArgumentError("buffer view: rank ", shape.size(), " exceeds the maximum of ", kMaxRank);
  }
  uint64_t byte_length = element_size;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return InvalidArgumentError("buffer view: dimension ", i, " is negative (", shape[i], ")");
    }
    if (__builtin_mul_overflow(byte_length, static_cast<uint64_t>(shape[i]), &byte_length)) {
      return InvalidArgumentError("buffer view: the byte size of the shape overflows 64 bits");
    }
  }
  auto view = Ref<BufferView>::Adopt(new BufferView());
  view->element_type_ = element_type;
  view->rank_ = static_cast<uint32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), view->shape_);
  if (byte_offset > buffer->byte_length() || byte_length > buffer->byte_length() - byte_offset) {
    return OutOfRangeError("buffer view: ", view->DescribeType(), " needs ", byte_length,
                           " bytes at offset ", byte_offset, " but the buffer has ", buffer->byte_length());
  }
  view->buffer_ = std::move(buffer);
  view->byte_offset_ = byte_offset;
  view->byte_length_ = byte_length;
  return view;
}

uint64_t BufferView::element_count() const {
  uint64_t count = 1;
  for (uint32_t i = 0; i < rank_; ++i) count *= static_cast<uint64_t>(shape_[i]);
  return count;
}

std::string BufferView::DescribeType() const {
  std::string out;
  for (uint32_t i = 0; i < rank_; ++i) out += StrCat(shape_[i], "x");
  return out + ElementTypeName(element_type_);
}

}  // namespace strata::hal
