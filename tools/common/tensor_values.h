// tensor_values: tensors to and from the VM's values and the HAL's buffer
// views, as the runtime tools pass arguments and read results.
#pragma once

#include "hal/buffer_view.h"
#include "hal/device.h"
#include "tools/common/tensor.h"
#include "vm/base/status.h"
#include "vm/value.h"

namespace strata::tools {

// A new host-visible buffer from `allocator` holding a copy of the tensor,
// viewed with its shape and element type.
StatusOr<Ref<hal::BufferView>> CreateBufferView(hal::Allocator& allocator, const Tensor& tensor);
// The contents of `view`: mapped directly when its buffer is host-visible and
// mappable, otherwise copied through a staging buffer on `device`.
StatusOr<Tensor> ReadBufferView(hal::Device& device, const hal::BufferView& view);

// The argument for a parameter whose signature character is `type` ('i', 'I',
// 'f', 'F' or 'r'): a scalar (or 0-d tensor) of the matching type, or a
// tensor that becomes a buffer view from `allocator`. Errors say "expected
// i64, got f32", "expected a tensor, got the scalar f32=2.5", ...
StatusOr<vm::Value> TensorToValue(const Tensor& tensor, char type, hal::Allocator& allocator);
// A result: a scalar, or a buffer view read back through `device`; other refs
// fail naming their type.
StatusOr<Tensor> TensorFromValue(const vm::Value& value, hal::Device& device);

}  // namespace strata::tools
