// strata.h: tensors, as HAL buffer views on a device.
#include <cstdio>
#include <cstring>

#include "drivers/runtime/api_internal.h"
#include "hal/command_buffer.h"
#include "hal/semaphore.h"

namespace strata::api {
namespace {

// strata.h stands alone (C, installed), so it spells the codes out; they
// must be schemas/element_types.def's, row for row.
#define STRATA_ELEMENT_TYPE(e, code, name, numpy, c_name)                  \
  static_assert(STRATA_ELEMENT_TYPE_##c_name == static_cast<int>(ElementType::e), \
                "STRATA_ELEMENT_TYPE_" #c_name " mirrors strata::ElementType::" #e);
#include "schemas/element_types.def"
#undef STRATA_ELEMENT_TYPE
static_assert(STRATA_MAX_RANK == hal::BufferView::kMaxRank);


// Checks what strata_tensor_create and strata_tensor_wrap are given: a known
// element type, a shape of at most STRATA_MAX_RANK non-negative dimensions,
// and exactly as many bytes as the shape needs.
Status CheckTensorArguments(const char* function, strata_device* device, strata_element_type element_type,
                            const int64_t* shape, size_t rank, const void* data, size_t byte_length,
                            strata_tensor** out_tensor) {
  if (!device) return InvalidArgumentError(function, ": device is null");
  if (!out_tensor) return InvalidArgumentError(function, ": out_tensor is null");
  const auto type = static_cast<ElementType>(element_type);
  const uint64_t element_size = ElementTypeByteSize(type);
  if (element_size == 0) {
    return InvalidArgumentError(function, ": unknown element type 0x", Hex(static_cast<uint32_t>(element_type)));
  }
  if (rank > STRATA_MAX_RANK) {
    return InvalidArgumentError(function, ": rank ", rank, " exceeds the maximum of ", STRATA_MAX_RANK);
  }
  if (rank > 0 && !shape) return InvalidArgumentError(function, ": shape is null for rank ", rank);
  uint64_t needed = element_size;
  for (size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) return InvalidArgumentError(function, ": dimension ", i, " is negative (", shape[i], ")");
    if (__builtin_mul_overflow(needed, static_cast<uint64_t>(shape[i]), &needed)) {
      return InvalidArgumentError(function, ": the byte size of the shape overflows 64 bits");
    }
  }
  const std::string described = runtime::DescribeTensorType({shape, rank}, type);
  if (needed != byte_length) {
    return InvalidArgumentError(function, ": ", described, " needs ", needed, " bytes, got ", byte_length);
  }
  if (!data && byte_length > 0) return InvalidArgumentError(function, ": data is null for ", byte_length, " bytes");
  return OkStatus();
}

}  // namespace


strata_tensor* NewTensor(Ref<hal::BufferView> view, Ref<hal::Device> device) {
  auto* tensor = new strata_tensor();
  tensor->view = std::move(view);
  tensor->device = std::move(device);
  return tensor;
}

StatusOr<strata_tensor*> CreateTensor(const Ref<hal::Device>& device, ElementType element_type,
                                      std::span<const int64_t> shape, const void* data, size_t byte_length) {
  STRATA_ASSIGN_OR_RETURN(Ref<hal::Buffer> buffer,
                          hal::UploadBuffer(*device, {static_cast<const uint8_t*>(data), byte_length}));
  STRATA_ASSIGN_OR_RETURN(Ref<hal::BufferView> view,
                          hal::BufferView::Create(std::move(buffer), 0, element_type, shape));
  return NewTensor(std::move(view), device);
}

Status ReadTensor(strata_tensor& tensor, void* out) {
  const hal::BufferView& view = *tensor.view;
  return hal::ReadBuffer(*tensor.device, *view.buffer(), view.byte_offset(),
                         {static_cast<uint8_t*>(out), static_cast<size_t>(view.byte_length())});
}

}  // namespace strata::api

using strata::ElementType;
using strata::InvalidArgumentError;
using strata::OkStatus;
using strata::Status;
using strata::api::Guard;
namespace hal = strata::hal;
namespace vm = strata::vm;

extern "C" {

const char* strata_element_type_name(strata_element_type type) {
  return ElementTypeName(static_cast<ElementType>(type));
}

size_t strata_element_type_size(strata_element_type type) {
  return ElementTypeByteSize(static_cast<ElementType>(type));
}

strata_status* strata_tensor_create(strata_device* device, strata_element_type element_type, const int64_t* shape,
                                    size_t rank, const void* data, size_t byte_length, strata_tensor** out_tensor) {
  return Guard([&]() -> Status {
    STRATA_RETURN_IF_ERROR(strata::api::CheckTensorArguments("strata_tensor_create", device, element_type, shape,
                                                             rank, data, byte_length, out_tensor));
    STRATA_ASSIGN_OR_RETURN(*out_tensor, strata::api::CreateTensor(device->device,
                                                                   static_cast<ElementType>(element_type),
                                                                   {shape, rank}, data, byte_length));
    return OkStatus();
  });
}

strata_status* strata_tensor_wrap(strata_device* device, strata_element_type element_type, const int64_t* shape,
                                  size_t rank, const void* data, size_t byte_length, void (*release)(void* user_data),
                                  void* user_data, strata_tensor** out_tensor) {
  return Guard([&]() -> Status {
    STRATA_RETURN_IF_ERROR(strata::api::CheckTensorArguments("strata_tensor_wrap", device, element_type, shape, rank,
                                                             data, byte_length, out_tensor));
    const auto type = static_cast<ElementType>(element_type);
    const uint32_t element_size = ElementTypeByteSize(type);
    if (reinterpret_cast<uintptr_t>(data) % element_size != 0) {
      return InvalidArgumentError("strata_tensor_wrap: data at 0x", strata::Hex(reinterpret_cast<uintptr_t>(data)), " is not aligned to the ", element_size,
                                  "-byte elements of ", ElementTypeName(type));
    }
    // Read-only to the device: dispatches may only read it, and nothing
    // writes the caller's memory behind its back.
    hal::BufferParams params;
    params.usage = hal::kUsageTransferSource | hal::kUsageDispatchStorage | hal::kUsageMapping;
    params.access = hal::kAccessRead;
    // The callback is armed only once the tensor exists, so that a failure
    // below (which destroys the imported buffer) leaves the memory the
    // caller's without telling it otherwise.
    auto armed = std::make_shared<std::atomic<bool>>(false);
    hal::Allocator::ReleaseCallback on_release;
    if (release) {
      on_release = [release, user_data, armed] {
        if (armed->load(std::memory_order_acquire)) release(user_data);
      };
    }
    auto tensor = std::make_unique<strata_tensor>();
    std::span<uint8_t> memory(static_cast<uint8_t*>(const_cast<void*>(data)), byte_length);
    STRATA_ASSIGN_OR_RETURN(strata::Ref<hal::Buffer> buffer,
                            device->device->allocator()->Import(params, memory, std::move(on_release)));
    STRATA_ASSIGN_OR_RETURN(tensor->view, hal::BufferView::Create(std::move(buffer), 0, type, {shape, rank}));
    tensor->device = device->device;
    armed->store(true, std::memory_order_release);
    *out_tensor = tensor.release();
    return OkStatus();
  });
}

void strata_tensor_retain(strata_tensor* tensor) { strata::api::RetainObject(tensor); }
void strata_tensor_release(strata_tensor* tensor) { strata::api::ReleaseObject(tensor); }

strata_element_type strata_tensor_element_type(const strata_tensor* tensor) {
  return static_cast<strata_element_type>(tensor ? static_cast<uint32_t>(tensor->view->element_type()) : 0);
}

size_t strata_tensor_rank(const strata_tensor* tensor) { return tensor ? tensor->view->rank() : 0; }

const int64_t* strata_tensor_shape(const strata_tensor* tensor) {
  return tensor && tensor->view->rank() > 0 ? tensor->view->shape().data() : nullptr;
}

size_t strata_tensor_element_count(const strata_tensor* tensor) {
  return tensor ? tensor->view->element_count() : 0;
}

size_t strata_tensor_byte_length(const strata_tensor* tensor) { return tensor ? tensor->view->byte_length() : 0; }

strata_status* strata_tensor_data(strata_tensor* tensor, const void** out_data) {
  return Guard([&]() -> Status {
    if (!tensor) return InvalidArgumentError("strata_tensor_data: tensor is null");
    if (!out_data) return InvalidArgumentError("strata_tensor_data: out_data is null");
    const hal::BufferView& view = *tensor->view;
    std::lock_guard<std::mutex> lock(tensor->mutex);
    if (!tensor->mapping) {
      hal::Buffer* buffer = view.buffer();
      if (!(buffer->memory_types() & hal::kMemoryHostVisible) || !(buffer->usage() & hal::kUsageMapping)) {
        return strata::FailedPreconditionError("strata_tensor_data: the ", strata::api::DescribeTensor(view),
                                               " lives in ", hal::DescribeMemoryTypes(buffer->memory_types()),
                                               " memory that the host cannot map; use strata_tensor_copy_out");
      }
      STRATA_ASSIGN_OR_RETURN(hal::MappedRange range,
                              buffer->Map(hal::kAccessRead, view.byte_offset(), view.byte_length()));
      tensor->mapping = std::move(range);
    }
    *out_data = tensor->mapping->bytes().data();
    return OkStatus();
  });
}

strata_status* strata_tensor_copy_out(strata_tensor* tensor, void* buffer, size_t buffer_length) {
  return Guard([&]() -> Status {
    if (!tensor) return InvalidArgumentError("strata_tensor_copy_out: tensor is null");
    const uint64_t needed = tensor->view->byte_length();
    if (buffer_length < needed) {
      return InvalidArgumentError("strata_tensor_copy_out: the ", strata::api::DescribeTensor(*tensor->view),
                                  " is ", needed, " bytes, the buffer has room for ", buffer_length);
    }
    if (!buffer && needed > 0) return InvalidArgumentError("strata_tensor_copy_out: buffer is null");
    return strata::api::ReadTensor(*tensor, buffer);
  });
}

size_t strata_tensor_describe(const strata_tensor* tensor, char* buffer, size_t buffer_length) {
  const std::string text = tensor ? strata::api::DescribeTensor(*tensor->view) : std::string("null");
  if (buffer && buffer_length > 0) {
    const size_t n = text.size() < buffer_length - 1 ? text.size() : buffer_length - 1;
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return text.size();
}

}  // extern "C"
