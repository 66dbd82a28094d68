#include "tools/common/tensor_values.h"

#include "hal/semaphore.h"
#include "tools/common/tensor_text.h"

namespace strata::tools {

StatusOr<Ref<hal::BufferView>> CreateBufferView(hal::Device& device, const Tensor& tensor) {
  STRATA_ASSIGN_OR_RETURN(Ref<hal::Buffer> buffer,
                          hal::UploadBuffer(device, {tensor.bytes.data(), tensor.bytes.size()}));
  return hal::BufferView::Create(std::move(buffer), 0, tensor.element_type, tensor.shape);
}

StatusOr<Tensor> ReadBufferView(hal::Device& device, const hal::BufferView& view) {
  Tensor tensor;
  tensor.element_type = view.element_type();
  tensor.shape.assign(view.shape().begin(), view.shape().end());
  if (!FindElementType(tensor.element_type)) {
    return InvalidArgumentError("a buffer view of unknown element type 0x",
                                Hex(static_cast<uint32_t>(tensor.element_type)));
  }
  STRATA_RETURN_IF_ERROR(ResizeBytes(&tensor, view.byte_length()));
  STRATA_RETURN_IF_ERROR(
      hal::ReadBuffer(device, *view.buffer(), view.byte_offset(), {tensor.bytes.data(), tensor.bytes.size()}));
  return tensor;
}

StatusOr<vm::Value> TensorToValue(const Tensor& tensor, char type, hal::Device& device) {
  if (type == 'r') {
    if (tensor.scalar) return InvalidArgumentError("expected a tensor, got the scalar ", FormatTensor(tensor));
    STRATA_ASSIGN_OR_RETURN(Ref<hal::BufferView> view, CreateBufferView(device, tensor));
    return vm::Value::FromRef(std::move(view));
  }
  const vm::ValueType want = vm::ValueTypeFromSignatureChar(type);
  if (want == vm::ValueType::kNone) return InvalidArgumentError("unknown signature type '", type, "'");
  if (!tensor.shape.empty()) {
    return InvalidArgumentError("expected ", vm::ValueTypeName(want), ", got a tensor ", tensor.DescribeType());
  }
  const uint8_t* p = tensor.bytes.data();
  const ElementType et = tensor.element_type;
  switch (want) {
    case vm::ValueType::kI32:
      if (et == ElementType::kInt32) return vm::Value::I32(Load<int32_t>(p));
      if (et == ElementType::kBool8) return vm::Value::I32(*p != 0);
      break;
    case vm::ValueType::kI64:
      if (et == ElementType::kInt64) return vm::Value::I64(Load<int64_t>(p));
      break;
    case vm::ValueType::kF32:
      if (et == ElementType::kFloat32) return vm::Value::F32(Load<float>(p));
      break;
    case vm::ValueType::kF64:
      if (et == ElementType::kFloat64) return vm::Value::F64(Load<double>(p));
      break;
    default: break;
  }
  return InvalidArgumentError("expected ", vm::ValueTypeName(want), ", got ", tensor.DescribeType());
}

StatusOr<Tensor> TensorFromValue(const vm::Value& value, hal::Device& device) {
  Tensor tensor;
  tensor.scalar = true;
  auto scalar = [&](ElementType type, const void* data) {
    tensor.element_type = type;
    const auto* bytes = static_cast<const uint8_t*>(data);
    tensor.bytes.assign(bytes, bytes + ElementTypeByteSize(type));
    return tensor;
  };
  switch (value.type()) {
    case vm::ValueType::kI32: {
      int32_t v = value.i32();
      return scalar(ElementType::kInt32, &v);
    }
    case vm::ValueType::kI64: {
      int64_t v = value.i64();
      return scalar(ElementType::kInt64, &v);
    }
    case vm::ValueType::kF32: {
      float v = value.f32();
      return scalar(ElementType::kFloat32, &v);
    }
    case vm::ValueType::kF64: {
      double v = value.f64();
      return scalar(ElementType::kFloat64, &v);
    }
    case vm::ValueType::kRef:
      if (auto* view = RefCast<hal::BufferView>(value.ref().get())) return ReadBufferView(device, *view);
      break;
    case vm::ValueType::kNone: break;
  }
  return InvalidArgumentError("not a tensor or scalar: ", value.ToString());
}

}  // namespace strata::tools
