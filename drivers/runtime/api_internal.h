// What the C API's handles are, in C++, and the helpers its files share.
// Nothing here crosses the C boundary: strata.h only names the structs.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "drivers/runtime/strata.h"
#include "hal/buffer_view.h"
#include "hal/device.h"
#include "drivers/runtime/session.h"
#include "vm/base/status.h"

// A C object with an atomic reference count; the last release deletes it.
struct strata_counted {
  std::atomic<int32_t> references{1};
};

struct strata_status {
  strata_code code;
  std::string message;  // with the backtrace, one "\n  at frame" line per frame
};

struct strata_instance : strata_counted {
  // Names and descriptions of the registry's drivers, kept so that the
  // pointers handed out stay valid as long as the instance.
  std::vector<std::pair<std::string, std::string>> drivers;
};

struct strata_device : strata_counted {
  strata::Ref<strata::hal::Device> device;
};

struct strata_tensor : strata_counted {
  strata::Ref<strata::hal::BufferView> view;
  // For copies out of memory the host cannot map.
  strata::Ref<strata::hal::Device> device;
  // The view's bytes mapped for reading, once strata_tensor_data asked.
  std::mutex mutex;
  std::optional<strata::hal::MappedRange> mapping;
};

struct strata_function {
  strata_module* module;  // the module this function belongs to (not a reference)
  uint32_t index;         // in the session's functions and in each pooled context's handles
  const strata::runtime::Function* fn;
};

struct strata_module : strata_counted {
  std::unique_ptr<strata::runtime::Session> session;
  std::vector<std::unique_ptr<strata_function>> functions;
  strata_call_limits call_limits = {0, 0};  // the default of every call
  // Idle contexts; a call takes one (or creates one) and puts it back.
  std::mutex pool_mutex;
  std::vector<std::unique_ptr<strata::runtime::Session::CallContext>> idle_contexts;
};

namespace strata::api {

template <typename T>
void RetainObject(T* object) {
  if (object) object->references.fetch_add(1, std::memory_order_relaxed);
}

template <typename T>
void ReleaseObject(T* object) {
  if (object && object->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete object;
}

// A C status from a C++ one; null for OK. Never fails: running out of memory
// gives a preallocated status.
strata_status* ToCStatus(const Status& status);

// Runs `body` (returning a Status) and converts the result, turning
// exceptions from the standard library (std::bad_alloc) into statuses, so no
// exception crosses the C boundary. A build without exceptions
// (-fno-exceptions, docs/embedding.md) ends the process when memory runs out.
template <typename F>
strata_status* Guard(F&& body) {
#if __cpp_exceptions
  try {
    return ToCStatus(body());
  } catch (const std::bad_alloc&) {
    return ToCStatus(ResourceExhaustedError("out of memory"));
  } catch (const std::exception& e) {
    return ToCStatus(InternalError("unexpected exception: ", e.what()));
  } catch (...) {
    return ToCStatus(InternalError("unexpected exception"));
  }
#else
  return ToCStatus(body());
#endif
}

using runtime::DescribeTensor;
using runtime::DescribeTensorType;

// A new tensor over `view`.
strata_tensor* NewTensor(Ref<hal::BufferView> view, Ref<hal::Device> device);

// A new tensor holding a copy of `bytes` on `device`.
StatusOr<strata_tensor*> CreateTensor(const Ref<hal::Device>& device, ElementType element_type,
                                      std::span<const int64_t> shape, const void* data, size_t byte_length);

// Copies the tensor's bytes into `out` (exactly byte_length() bytes).
Status ReadTensor(strata_tensor& tensor, void* out);

}  // namespace strata::api
