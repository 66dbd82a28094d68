// tensor_values: tensors to and from the VM's values and the HAL's buffer
// views, as the runtime tools pass arguments and read results.
#pragma once

#include "hal/buffer_view.h"
#include "hal/device.h"
#include "tools/common/tensor.h"
#include "vm/base/status.h"
#include "vm/value.h"

namespace strata::tools {

// A new device-local buffer of `device` holding a copy of the tensor, viewed
// with its shape and element type: written through a mapping where that
// memory is host-visible (the CPU, unified memory), through a staging buffer
// where it is not (a discrete GPU).
StatusOr<Ref<hal::BufferView>> CreateBufferView(hal::Device& device, const Tensor& tensor);
// The contents of `view`: mapped directly when its buffer is host-visible and
// mappable, otherwise copied through a staging buffer on `device`.
StatusOr<Tensor> ReadBufferView(hal::Device& device, const hal::BufferView& view);

// The argument for a parameter whose signature character is `type` ('i', 'I',
// 'f', 'F' or 'r'): a scalar (or 0-d tensor) of the matching type, or a
// tensor that becomes a buffer view of `device` (CreateBufferView). Errors say
// "expected i64, got f32", "expected a tensor, got the scalar f32=2.5", ...
StatusOr<vm::Value> TensorToValue(const Tensor& tensor, char type, hal::Device& device);
// A result: a scalar, or a buffer view read back through `device`; other refs
// fail naming their type.
StatusOr<Tensor> TensorFromValue(const vm::Value& value, hal::Device& device);

}  // namespace strata::tools
