// strata.h: modules and their functions, and calls.
//
// A loaded module is a session (drivers/runtime/session.h: the file, used in
// place, on its device with the `hal` module made for it) and a pool of VM
// contexts over the two. A context holds per-call mutable state (the VM stack, globals), so
// each running call needs one of its own; the pool keeps them between calls
// so a call does not pay for linking, and grows to the number of calls that
// ever ran at once.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "drivers/runtime/api_internal.h"
#include "schemas/integrity.h"
#include "vm/value.h"

namespace strata::api {
namespace {

using vm::Value;
using vm::ValueType;

// The element type a scalar of VM type `vm_type` travels as, given its
// recorded source type: i1, i8, i16, ui8, ui16 and ui32 travel in the VM's
// i32 and ui64 in its i64, keeping their own element type; anything else is
// the VM type's own.
ElementType ScalarElementType(char vm_type, const runtime::SourceType& source) {
  if (source.known && !source.tensor && vm_type == 'i') {
    switch (source.element_type) {
      case ElementType::kBool8:
      case ElementType::kInt8:
      case ElementType::kInt16:
      case ElementType::kUint8:
      case ElementType::kUint16:
      case ElementType::kUint32: return source.element_type;
      default: break;
    }
  }
  if (source.known && !source.tensor && vm_type == 'I' && source.element_type == ElementType::kUint64) {
    return source.element_type;
  }
  switch (vm_type) {
    case 'i': return ElementType::kInt32;
    case 'I': return ElementType::kInt64;
    case 'f': return ElementType::kFloat32;
    default: return ElementType::kFloat64;
  }
}

template <typename T>
T Load(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

template <typename T, typename U>
void Store(uint8_t* bytes, U value) {
  const T typed = static_cast<T>(value);
  std::memcpy(bytes, &typed, sizeof(T));
}

using CallContext = runtime::Session::CallContext;

StatusOr<std::unique_ptr<CallContext>> AcquireCallContext(strata_module& module) {
  {
    std::lock_guard<std::mutex> lock(module.pool_mutex);
    if (!module.idle_contexts.empty()) {
      std::unique_ptr<CallContext> call = std::move(module.idle_contexts.back());
      module.idle_contexts.pop_back();
      return call;
    }
  }
  return module.session->CreateContext();
}

void ReturnCallContext(strata_module& module, std::unique_ptr<CallContext> call) {
  std::lock_guard<std::mutex> lock(module.pool_mutex);
  module.idle_contexts.push_back(std::move(call));
}

// The loader's integrity options from the C ones.
vm::IntegrityOptions Integrity(const strata_module_options* options) {
  vm::IntegrityOptions integrity;
  if (options && options->trusted_public_key) {
    integrity.trusted_public_key.assign(options->trusted_public_key,
                                        options->trusted_public_key + integrity::kPublicKeyBytes);
  }
  return integrity;
}

Status LoadModule(strata_device* device, StatusOr<Ref<vm::BytecodeModule>> program,
                  const strata_module_options* options, strata_module** out_module) {
  STRATA_RETURN_IF_ERROR(program.status());
  auto module = std::make_unique<strata_module>();
  if (options) module->call_limits = options->call_limits;
  STRATA_ASSIGN_OR_RETURN(module->session, runtime::Session::Create(device->device, std::move(program).value()));
  for (const runtime::Function& fn : module->session->functions()) {
    module->functions.push_back(std::make_unique<strata_function>(
        strata_function{module.get(), static_cast<uint32_t>(module->functions.size()), &fn}));
  }
  // Linking now reports a module that imports what this runtime lacks at
  // load time rather than at the first call; the context is the pool's first.
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<CallContext> first, module->session->CreateContext());
  module->idle_contexts.push_back(std::move(first));
  *out_module = module.release();
  return OkStatus();
}

// Keeps a caller's module bytes in use until the module is gone, then tells
// the caller.
class CallerBytes final : public RefObject {
 public:
  static const RefTypeInfo kType;
  CallerBytes(void (*release)(void*), void* user_data)
      : RefObject(&kType), release_(release), user_data_(user_data) {}
  ~CallerBytes() override {
    if (release_) release_(user_data_);
  }

 private:
  void (*release_)(void*);
  void* user_data_;
};
const RefTypeInfo CallerBytes::kType = {"strata.caller_bytes"};

// An input tensor as the VM value of signature type `vm_type`.
StatusOr<Value> InputValue(const runtime::Function& fn, size_t i, strata_tensor* tensor) {
  const char vm_type = fn.arg_types[i];
  const runtime::SourceType& expected = fn.inputs[i];
  if (!tensor) return InvalidArgumentError(fn.name, ": input ", i, " is null");
  const hal::BufferView& view = *tensor->view;
  if (vm_type == 'r') {
    STRATA_RETURN_IF_ERROR(runtime::Session::CheckTensorInput(fn, i, view));
    return Value::FromRef(tensor->view);
  }
  const ElementType want = ScalarElementType(vm_type, expected);
  if (view.rank() != 0 || view.element_type() != want) {
    return InvalidArgumentError(fn.name, ": input ", i, ": expected ", fn.input_types[i], " (a tensor<",
                                ElementTypeName(want), "> of rank 0), got ", DescribeTensor(view));
  }
  uint8_t bytes[8] = {};
  STRATA_RETURN_IF_ERROR(ReadTensor(*tensor, bytes));
  switch (want) {
    case ElementType::kInt8: return Value::I32(Load<int8_t>(bytes));
    case ElementType::kInt16: return Value::I32(Load<int16_t>(bytes));
    case ElementType::kUint8: return Value::I32(Load<uint8_t>(bytes));
    case ElementType::kUint16: return Value::I32(Load<uint16_t>(bytes));
    case ElementType::kBool8: return Value::I32(bytes[0] != 0);
    case ElementType::kInt64:
    case ElementType::kUint64: return Value::I64(Load<int64_t>(bytes));
    case ElementType::kFloat32: return Value::F32(Load<float>(bytes));
    case ElementType::kFloat64: return Value::F64(Load<double>(bytes));
    default: return Value::I32(Load<int32_t>(bytes));  // i32, ui32
  }
}

// A result of the program as a new tensor.
StatusOr<strata_tensor*> OutputTensor(const runtime::Function& fn, size_t i, const Value& value,
                                      const Ref<hal::Device>& device) {
  if (value.type() == ValueType::kRef) {
    auto* view = RefCast<hal::BufferView>(value.ref().get());
    if (!view) {
      return InvalidArgumentError(fn.name, ": output ", i, " is ", value.ToString(),
                                  ", which is not a tensor; the C API returns tensors and scalars only");
    }
    return NewTensor(Ref<hal::BufferView>::Borrow(view), device);
  }
  const ElementType type = ScalarElementType(fn.result_types[i], fn.outputs[i]);
  uint8_t bytes[8] = {};
  switch (type) {
    case ElementType::kInt8:
    case ElementType::kUint8: Store<int8_t>(bytes, value.i32()); break;
    case ElementType::kBool8: Store<uint8_t>(bytes, value.i32() != 0); break;
    case ElementType::kInt16:
    case ElementType::kUint16: Store<int16_t>(bytes, value.i32()); break;
    case ElementType::kInt64:
    case ElementType::kUint64: Store<int64_t>(bytes, value.i64()); break;
    case ElementType::kFloat32: Store<float>(bytes, value.f32()); break;
    case ElementType::kFloat64: Store<double>(bytes, value.f64()); break;
    default: Store<int32_t>(bytes, value.i32()); break;  // i32, ui32
  }
  return CreateTensor(device, type, {}, bytes, ElementTypeByteSize(type));
}

Status Call(strata_function* function, strata_tensor* const* inputs, size_t input_count, strata_tensor** outputs,
            size_t output_count, const strata_call_limits* limits) {
  if (!function) return InvalidArgumentError("strata_function_call: function is null");
  const runtime::Function* fn = function->fn;
  STRATA_RETURN_IF_ERROR(runtime::Session::CheckInputCount(*fn, input_count));
  if (output_count != fn->result_types.size()) {
    return InvalidArgumentError(fn->name, ": returns ", fn->result_types.size(), " output",
                                fn->result_types.size() == 1 ? "" : "s", ", got room for ", output_count);
  }
  if (input_count > 0 && !inputs) return InvalidArgumentError(fn->name, ": inputs is null");
  if (output_count > 0 && !outputs) return InvalidArgumentError(fn->name, ": outputs is null");
  std::vector<Value> args;
  args.reserve(input_count);
  for (size_t i = 0; i < input_count; ++i) {
    STRATA_ASSIGN_OR_RETURN(Value arg, InputValue(*fn, i, inputs[i]));
    args.push_back(std::move(arg));
  }

  strata_module& module = *function->module;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<CallContext> call, AcquireCallContext(module));
  const strata_call_limits& applied = limits ? *limits : module.call_limits;
  vm::InvocationOptions invocation;
  invocation.max_steps = applied.max_steps;
  if (applied.timeout_us) {
    invocation.deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(applied.timeout_us);
  }
  auto results = call->context->Invoke(call->handles[function->index], args, invocation);
  // A context whose call failed may hold half-updated globals; drop it.
  if (!results.ok()) return results.status();
  ReturnCallContext(module, std::move(call));

  std::vector<strata_tensor*> tensors;
  tensors.reserve(output_count);
  for (size_t i = 0; i < output_count; ++i) {
    auto tensor = OutputTensor(*fn, i, (*results)[i], module.session->device());
    if (!tensor.ok()) {
      for (strata_tensor* t : tensors) ReleaseObject(t);
      return tensor.status();
    }
    tensors.push_back(*tensor);
  }
  for (size_t i = 0; i < output_count; ++i) outputs[i] = tensors[i];
  return OkStatus();
}

}  // namespace
}  // namespace strata::api

using strata::InvalidArgumentError;
using strata::OkStatus;
using strata::Status;
using strata::api::Guard;

extern "C" {

strata_status* strata_module_load_file(strata_device* device, const char* path, strata_module** out_module) {
  return strata_module_load_file_with_options(device, path, nullptr, out_module);
}

strata_status* strata_module_load_file_with_options(strata_device* device, const char* path,
                                                    const strata_module_options* options,
                                                    strata_module** out_module) {
  return Guard([&]() -> Status {
    if (!device) return InvalidArgumentError("strata_module_load_file: device is null");
    if (!path) return InvalidArgumentError("strata_module_load_file: path is null");
    if (!out_module) return InvalidArgumentError("strata_module_load_file: out_module is null");
    return strata::api::LoadModule(
        device, strata::vm::BytecodeModule::LoadFile(path, strata::api::Integrity(options)), options, out_module);
  });
}

strata_status* strata_module_load_memory(strata_device* device, const void* data, size_t byte_length,
                                         void (*release)(void* user_data), void* user_data,
                                         strata_module** out_module) {
  return strata_module_load_memory_with_options(device, data, byte_length, release, user_data, nullptr, out_module);
}

strata_status* strata_module_load_memory_with_options(strata_device* device, const void* data, size_t byte_length,
                                                      void (*release)(void* user_data), void* user_data,
                                                      const strata_module_options* options,
                                                      strata_module** out_module) {
  return Guard([&]() -> Status {
    if (!device) return InvalidArgumentError("strata_module_load_memory: device is null");
    if (!data) return InvalidArgumentError("strata_module_load_memory: data is null");
    if (!out_module) return InvalidArgumentError("strata_module_load_memory: out_module is null");
    if (reinterpret_cast<uintptr_t>(data) % 64 != 0) {
      return InvalidArgumentError("strata_module_load_memory: data at 0x", strata::Hex(reinterpret_cast<uintptr_t>(data)),
                                  " is not 64-byte aligned (declare the array _Alignas(64), or allocate it with "
                                  "aligned_alloc(64, size))");
    }
    // The release callback runs when the owner goes, which is with the
    // module on success and before returning on failure, as documented.
    auto owner = strata::MakeRef<strata::api::CallerBytes>(release, user_data);
    std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data), byte_length);
    return strata::api::LoadModule(
        device, strata::vm::BytecodeModule::LoadBytes(bytes, std::move(owner), strata::api::Integrity(options)),
        options, out_module);
  });
}

void strata_module_retain(strata_module* module) { strata::api::RetainObject(module); }
void strata_module_release(strata_module* module) { strata::api::ReleaseObject(module); }

const char* strata_module_name(const strata_module* module) {
  // The name is a view into the module's FlatBuffer, which stores strings
  // NUL-terminated.
  const std::string_view name = module ? module->session->program()->name() : std::string_view();
  return !name.empty() ? name.data() : "";
}

size_t strata_module_function_count(const strata_module* module) { return module ? module->functions.size() : 0; }

strata_function* strata_module_function(const strata_module* module, size_t index) {
  return module && index < module->functions.size() ? module->functions[index].get() : nullptr;
}

strata_status* strata_module_lookup_function(const strata_module* module, const char* name,
                                             strata_function** out_function) {
  return Guard([&]() -> Status {
    if (!module) return InvalidArgumentError("strata_module_lookup_function: module is null");
    if (!name) return InvalidArgumentError("strata_module_lookup_function: name is null");
    if (!out_function) return InvalidArgumentError("strata_module_lookup_function: out_function is null");
    STRATA_ASSIGN_OR_RETURN(const strata::runtime::Function* fn, module->session->FindFunction(name));
    *out_function = module->functions[fn - module->session->functions().data()].get();
    return strata::OkStatus();
  });
}

const char* strata_function_name(const strata_function* function) { return function ? function->fn->name.c_str() : ""; }

const char* strata_function_signature(const strata_function* function) {
  return function ? function->fn->signature.c_str() : "";
}

size_t strata_function_input_count(const strata_function* function) {
  return function ? function->fn->input_types.size() : 0;
}

size_t strata_function_output_count(const strata_function* function) {
  return function ? function->fn->output_types.size() : 0;
}

const char* strata_function_input_type(const strata_function* function, size_t index) {
  return function && index < function->fn->input_types.size() ? function->fn->input_types[index].c_str() : nullptr;
}

const char* strata_function_output_type(const strata_function* function, size_t index) {
  return function && index < function->fn->output_types.size() ? function->fn->output_types[index].c_str() : nullptr;
}

strata_status* strata_function_call(strata_function* function, strata_tensor* const* inputs, size_t input_count,
                                    strata_tensor** outputs, size_t output_count) {
  return Guard([&] { return strata::api::Call(function, inputs, input_count, outputs, output_count, nullptr); });
}

strata_status* strata_function_call_with_limits(strata_function* function, strata_tensor* const* inputs,
                                                size_t input_count, strata_tensor** outputs, size_t output_count,
                                                const strata_call_limits* limits) {
  return Guard([&] { return strata::api::Call(function, inputs, input_count, outputs, output_count, limits); });
}

}  // extern "C"
