#include "hal/module/hal_module.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "hal/buffer_view.h"
#include "vm/buffer.h"
#include "vm/context.h"
#include "vm/list.h"

namespace strata::hal {
namespace {

using vm::CallArgs;
using vm::CallResults;
using vm::Value;
using vm::ValueType;

// A map from keys to values made once and then shared, which a lookup of an
// existing entry reads without the map's lock: each entry made is published
// in a slot chosen by a hash of its key (entries are never erased, so their
// addresses hold), and a lookup that finds its key there is done. Taking
// the lock, even uncontended, is an atomic instruction once the process has
// a second thread (glibc's single-threaded path ends), and it waits for
// every store before it; the calls of a compiled program look up each of
// their constants and executables on every call (the sample CNN's seven
// lookups were 2 % of its call on cpu-task).
template <typename Key, typename Value>
class OnceMap {
 public:
  // The value for `key`, made by `make()` (a StatusOr<Value>) on its first
  // lookup; `hash` chooses the key's slot. Two first lookups racing make it
  // once.
  template <typename Make>
  StatusOr<const Value*> FindOrMake(const Key& key, size_t hash, Make&& make) {
    std::atomic<const Entry*>& slot = slots_[hash % kSlots];
    if (const Entry* entry = slot.load(std::memory_order_acquire); entry && entry->first == key) return &entry->second;
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = entries_.find(key);
    if (found == entries_.end()) {
      StatusOr<Value> made = make();
      if (!made.ok()) return std::move(made).status();
      found = entries_.emplace(key, std::move(made).value()).first;
    }
    slot.store(&*found, std::memory_order_release);
    return &found->second;
  }

 private:
  using Entry = std::pair<const Key, Value>;
  static constexpr size_t kSlots = 64;
  std::mutex mutex_;
  std::map<Key, Value> entries_;
  std::array<std::atomic<const Entry*>, kSlots> slots_{};
};

// What every function of one hal module shares.
struct ModuleState {
  Ref<Device> device;
  // Prepared executables by (device, module, executable group); holding the
  // device and the module keeps their addresses from being reused while
  // cached.
  struct Prepared {
    Ref<Device> device;
    Ref<RefObject> module;
    Ref<Executable> executable;
  };
  OnceMap<std::tuple<const Device*, const vm::BytecodeModule*, std::string_view>, Prepared> executables;
  // Constant tensors by (device, first byte, length), made once
  // (device.constant) and then shared by every call; the vm.buffer holding
  // the bytes is kept, so its address is not reused while cached.
  struct Constant {
    Ref<Device> device;
    Ref<vm::Buffer> source;
    Ref<Buffer> buffer;
  };
  OnceMap<std::tuple<const Device*, const uint8_t*, uint64_t>, Constant> constants;
};

// The buffer device.constant gives for `bytes` (see hal_module.h): the
// bytes in place where the device's kernels read host memory as fast as
// their own (its first device-local heap is host-visible: the CPU, lavapipe,
// integrated GPUs) and it can import host memory; otherwise a device-local
// copy (hal::UploadBuffer: written through a mapping on unified memory,
// through a staging buffer on a discrete GPU).
StatusOr<Ref<Buffer>> MakeConstant(Device& device, vm::Buffer& source, std::span<const uint8_t> bytes) {
  Allocator& allocator = *device.allocator();
  const auto fastest = std::find_if(allocator.heaps().begin(), allocator.heaps().end(), [](const MemoryHeap& heap) {
    return (heap.memory_types & kMemoryDeviceLocal) && (heap.allowed_usage & kUsageDispatchStorage);
  });
  if (fastest == allocator.heaps().end() || (fastest->memory_types & kMemoryHostVisible)) {
    BufferParams params;
    params.memory_types = kMemoryHostVisible | kMemoryHostCoherent;
    params.usage = kUsageDispatchStorage | kUsageTransferSource | kUsageMapping;
    params.access = kAccessRead;
    Ref<vm::Buffer> keep_alive = Ref<vm::Buffer>::Borrow(&source);
    auto imported = allocator.Import(params, {const_cast<uint8_t*>(bytes.data()), bytes.size()},
                                     [keep_alive]() mutable { keep_alive = nullptr; });
    // A device that cannot use this host memory in place (its import is
    // UNIMPLEMENTED): a copy.
    if (imported.ok() || imported.status().code() != StatusCode::kUnimplemented) return imported;
  }
  return UploadBuffer(device, bytes);
}

// Keeps a buffer range mapped for as long as the vm.buffer viewing it lives.
class MappingOwner final : public RefObject {
 public:
  static const RefTypeInfo kType;
  explicit MappingOwner(MappedRange range) : RefObject(&kType), range_(std::move(range)) {}
  const MappedRange& range() const { return range_; }

 private:
  MappedRange range_;
};
const RefTypeInfo MappingOwner::kType = {"hal.mapping"};

// Argument access with messages that name the function and the argument.
// How long a wait cut short by the call's deadline still gives the device to
// stop its work and report where it stopped.
constexpr std::chrono::milliseconds kDeadlineGrace{50};

class Args {
 public:
  Args(const char* function, CallArgs args) : function_(function), args_(args) {}

  // Argument i of letter 'r', checked here as a T.
  template <typename T>
  StatusOr<T*> Get(size_t i) const {
    RefObject* object = args_[i].ref().get();
    if (T* typed = RefCast<T>(object)) return typed;
    return InvalidArgumentError("hal.", function_, ": argument ", i, " must be a ", T::kType.name, ", got ",
                                object ? object->type_name() : "null");
  }
  // Argument i, whose type CheckArguments has checked (null only for an 'L').
  template <typename T>
  T* Typed(size_t i) const {
    return static_cast<T*>(args_[i].ref().get());
  }
  // The bytes of vm.buffer argument i (a 'b') as text.
  std::string_view Text(size_t i) const {
    const vm::Buffer* buffer = Typed<vm::Buffer>(i);
    return std::string_view(reinterpret_cast<const char*>(buffer->data()), buffer->length());
  }
  // The ref argument as a T, or null when it is null or of another type.
  template <typename T>
  T* As(size_t i) const {
    return RefCast<T>(args_[i].ref().get());
  }
  const char* RefTypeName(size_t i) const {
    RefObject* object = args_[i].ref().get();
    return object ? object->type_name() : "null";
  }
  int32_t I32(size_t i) const { return args_[i].i32(); }
  int64_t I64(size_t i) const { return args_[i].i64(); }
  // A length in bytes, where -1 means "to the end".
  uint64_t Length(size_t i) const { return static_cast<uint64_t>(args_[i].i64()); }
  // Prefixes a failure with the function's name.
  Status Prefixed(Status status) const {
    if (!status.ok()) status.Annotate("hal.", function_, ": ");
    return status;
  }

 private:
  const char* function_;
  CallArgs args_;
};

template <typename T>
Value RefValue(Ref<T> object) {
  return Value::FromRef(Ref<RefObject>(std::move(object)));
}

// Reads (semaphore, value) pairs from a flat vm.list into `out`.
Status ReadSemaphoreList(const char* what, vm::List* list, std::vector<SemaphoreValue>* out) {
  out->clear();
  if (!list) return OkStatus();
  if (list->size() % 2) {
    return InvalidArgumentError("hal.queue.execute: ", what, " must hold (semaphore, value) pairs, got ",
                                list->size(), " elements");
  }
  for (uint32_t i = 0; i < list->size(); i += 2) {
    Value semaphore, value;
    STRATA_RETURN_IF_ERROR(list->Get(i, ValueType::kRef, &semaphore));
    STRATA_RETURN_IF_ERROR(list->Get(i + 1, ValueType::kI64, &value));
    auto* typed = RefCast<Semaphore>(semaphore.ref().get());
    if (!typed) {
      return InvalidArgumentError("hal.queue.execute: ", what, " element ", i, " must be a hal.semaphore, got ",
                                  semaphore.ref() ? semaphore.ref()->type_name() : "null");
    }
    out->push_back({typed, static_cast<uint64_t>(value.i64())});
  }
  return OkStatus();
}

// The lists of one queue.execute, kept per thread so that steady-state
// submission from a program does not allocate. (The pointers are borrowed
// from the call's vm.lists, which hold the objects for its duration.)
struct SubmitLists {
  std::vector<SemaphoreValue> waits;
  std::vector<SemaphoreValue> signals;
  std::vector<CommandBuffer*> command_buffers;
  std::vector<BufferBinding> table;
};

StatusOr<Ref<Executable>> CreateExecutable(ModuleState& state, Device* device,
                                           const vm::EmbeddedExecutable& embedded) {
  const vm::BytecodeModule& owner = embedded.module();
  const std::string_view name = embedded.name();
  auto prepare = [&]() -> StatusOr<ModuleState::Prepared> {
    std::vector<const vm::ExecutableInfo*> candidates;
    for (uint32_t variant : embedded.variants()) candidates.push_back(&owner.executables()[variant]);
    Status unsuitable;
    for (const std::string& format : device->info().executable_formats) {
      for (const vm::ExecutableInfo* info : candidates) {
        if (info->format != format) continue;
        ExecutableParams params;
        params.name = info->name;
        params.format = info->format;
        params.data = info->data;
        params.metadata = info->metadata;
        params.owner = Ref<RefObject>::Borrow(const_cast<vm::BytecodeModule*>(&owner));
        StatusOr<Ref<Executable>> executable = device->PrepareExecutable(params);
        if (!executable.ok()) {
          // Another embedding of the same format may suit this device (one
          // built for a CPU without the features this one lacks).
          if (executable.status().code() == StatusCode::kFailedPrecondition) {
            unsuitable = std::move(executable).status();
            continue;
          }
          return std::move(executable).status();
        }
        return ModuleState::Prepared{Ref<Device>::Borrow(device), params.owner, std::move(executable).value()};
      }
    }
    if (!unsuitable.ok()) return unsuitable;
    return IncompatibleError("executable '", name, "' is embedded as ",
                             JoinNames(candidates, [](const vm::ExecutableInfo* info) { return info->format; }),
                             " but device '", device->info().name, "' runs ",
                             JoinNames(device->info().executable_formats, [](const std::string& f) { return f; }));
  };
  // The slot by the name's address in the module, which the key holds: no
  // hashing of its characters on every call.
  STRATA_ASSIGN_OR_RETURN(const ModuleState::Prepared* prepared,
                          state.executables.FindOrMake(std::make_tuple(static_cast<const Device*>(device), &owner, name),
                                                       reinterpret_cast<uintptr_t>(name.data()) >> 4, prepare));
  return prepared->executable;
}

StatusOr<std::pair<int32_t, int64_t>> QueryI64(Device* device, std::string_view category, std::string_view key) {
  const DeviceInfo& info = device->info();
  if (category == "hal.executable.format") return std::make_pair(1, int64_t{device->SupportsExecutableFormat(key)});
  if (category == "hal.driver") return std::make_pair(1, int64_t{info.driver == key});
  if (category == "hal.device") {
    if (key == "concurrency") return std::make_pair(1, int64_t{info.concurrency});
    if (key == "min_binding_alignment") {
      return std::make_pair(1, static_cast<int64_t>(info.limits.min_binding_alignment));
    }
    if (key == "max_workgroup_count.x") return std::make_pair(1, int64_t{info.limits.max_workgroup_count[0]});
    if (key == "max_workgroup_count.y") return std::make_pair(1, int64_t{info.limits.max_workgroup_count[1]});
    if (key == "max_workgroup_count.z") return std::make_pair(1, int64_t{info.limits.max_workgroup_count[2]});
  }
  return std::make_pair(0, int64_t{0});
}

// The row of `name` in schemas/hal_functions.def (where the compiler reads
// it too); empty for a name not in the table. The rows are one string of
// "name\0signature\0" pairs, without pointers to relocate.
std::string_view TableSignature(std::string_view name) {
  static constexpr char kRows[] =
#define STRATA_HAL_FUNCTION(name, signature) name "\0" signature "\0"
#include "schemas/hal_functions.def"
#undef STRATA_HAL_FUNCTION
      ;
  for (const char* row = kRows; row < kRows + sizeof(kRows) - 1;) {
    const std::string_view row_name(row);
    const std::string_view signature(row + row_name.size() + 1);
    if (row_name == name) return signature;
    row = signature.data() + signature.size() + 1;
  }
  return {};
}

// The type a ref argument must have, by its letter in hal_functions.def;
// null for a letter the function checks itself ('r') or a scalar.
const RefTypeInfo* ArgumentType(char letter) {
  switch (letter) {
    case 'b': return &vm::Buffer::kType;
    case 'l': case 'L': return &vm::List::kType;
    case 'd': return &Device::kType;
    case 'a': return &Allocator::kType;
    case 'u': return &Buffer::kType;
    case 'v': return &BufferView::kType;
    case 'e': return &Executable::kType;
    case 'c': return &CommandBuffer::kType;
    case 's': return &Semaphore::kType;
    case 'x': return &vm::EmbeddedExecutable::kType;
    default: return nullptr;
  }
}

// Checks each ref argument of `hal.<function>` against its letter in
// `arg_letters` (the arguments of its row), so the bodies take them typed.
Status CheckArguments(const char* function, std::string_view arg_letters, CallArgs args) {
  for (size_t i = 0; i < arg_letters.size(); ++i) {
    const RefTypeInfo* type = ArgumentType(arg_letters[i]);
    if (!type) continue;
    const RefObject* object = args[i].ref().get();
    if (object ? object->type() == type : arg_letters[i] == 'L') continue;
    return InvalidArgumentError("hal.", function, ": argument ", i, " must be a ", type->name, ", got ",
                                object ? object->type_name() : "null");
  }
  return OkStatus();
}

// hal.allocator.allocate (allocator, memory_types, usage, length) and
// hal.allocator.allocate_preferring (allocator, memory_types, usage,
// preferred usage, length).
template <bool kPreferring>
Status Allocate(ModuleState& state, const Args& args, CallResults results) {
  Allocator* allocator = args.Typed<Allocator>(0);
  const int64_t length = args.I64(kPreferring ? 4 : 3);
  if (length < 0) {
    return InvalidArgumentError("hal.allocator.", kPreferring ? "allocate_preferring" : "allocate",
                                ": negative length ", length);
  }
  BufferParams params;
  params.memory_types = static_cast<MemoryTypes>(args.I32(1));
  params.usage = static_cast<BufferUsages>(args.I32(2));
  const BufferUsages preferred = kPreferring ? static_cast<BufferUsages>(args.I32(3)) : 0;
  auto buffer = allocator->Allocate(params, static_cast<uint64_t>(length), preferred);
  if (!buffer.ok()) return args.Prefixed(std::move(buffer).status());
  results[0] = RefValue(std::move(buffer).value());
  return OkStatus();
}

// command_buffer.create and command_buffer.create_streamed: the command
// buffer `create` makes on the device argument.
Status CreateCommandBufferWith(StatusOr<Ref<CommandBuffer>> (Device::*create)(), const Args& args,
                               CallResults results) {
  auto command_buffer = (args.Typed<Device>(0)->*create)();
  if (!command_buffer.ok()) return args.Prefixed(std::move(command_buffer).status());
  results[0] = RefValue(std::move(command_buffer).value());
  return OkStatus();
}

Status AddFunctions(vm::NativeModule& module, std::shared_ptr<ModuleState> state) {
  // Every body is a plain function of the module's state: one wrapper type
  // for all of them, not one std::function per function.
  using Body = Status (*)(ModuleState& state, const Args& args, CallResults results);
  auto add = [&module, &state](const char* name, Body body) {
    const std::string_view row = TableSignature(name);
    if (row.empty()) return InternalError("hal.", name, " is not in schemas/hal_functions.def");
    const std::string_view arg_letters = row.substr(0, row.find('_'));
    // To the VM every letter but i and I is a ref.
    std::string signature(row);
    for (char& c : signature) {
      if (c != 'i' && c != 'I' && c != '_') c = 'r';
    }
    return module.AddFunction(name, std::move(signature),
                              [name, arg_letters, body, state](CallArgs args, CallResults results) {
                                STRATA_RETURN_IF_ERROR(CheckArguments(name, arg_letters, args));
                                return body(*state, Args(name, args), results);
                              });
  };

  // ---- device ----
  STRATA_RETURN_IF_ERROR(add("device.default", [](ModuleState& state, const Args&, CallResults results) {
    results[0] = RefValue(state.device);
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("device.allocator", [](ModuleState& state, const Args& args, CallResults results) {
    Device* device = args.Typed<Device>(0);
    results[0] = RefValue(Ref<Allocator>::Borrow(device->allocator()));
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("device.query_i64", [](ModuleState& state, const Args& args, CallResults results) {
    Device* device = args.Typed<Device>(0);
    const std::string_view category = args.Text(1);
    const std::string_view key = args.Text(2);
    STRATA_ASSIGN_OR_RETURN(auto found, QueryI64(device, category, key));
    results[0] = Value::I32(found.first);
    results[1] = Value::I64(found.second);
    return OkStatus();
  }));

  // ---- allocator ----
  STRATA_RETURN_IF_ERROR(add("allocator.allocate", Allocate</*kPreferring=*/false>));
  STRATA_RETURN_IF_ERROR(add("allocator.allocate_preferring", Allocate</*kPreferring=*/true>));
  STRATA_RETURN_IF_ERROR(add("allocator.import", [](ModuleState& state, const Args& args, CallResults results) {
    Allocator* allocator = args.Typed<Allocator>(0);
    vm::Buffer* source = args.Typed<vm::Buffer>(3);
    uint64_t offset = static_cast<uint64_t>(args.I64(4));
    uint64_t length = args.Length(5);
    if (length == Buffer::kWholeBuffer && offset <= source->length()) length = source->length() - offset;
    STRATA_RETURN_IF_ERROR(source->CheckRange("hal.allocator.import: source", offset, length, false));
    BufferParams params;
    params.memory_types = static_cast<MemoryTypes>(args.I32(1));
    params.usage = static_cast<BufferUsages>(args.I32(2));
    params.access = source->writable() ? kAccessReadWrite : kAccessRead;
    // The hal.buffer holds a reference to the vm.buffer, released with it.
    Ref<vm::Buffer> keep_alive = Ref<vm::Buffer>::Borrow(source);
    auto buffer = allocator->Import(params, {source->data() + offset, static_cast<size_t>(length)},
                                    [keep_alive]() mutable { keep_alive = nullptr; });
    if (!buffer.ok()) return args.Prefixed(std::move(buffer).status());
    results[0] = RefValue(std::move(buffer).value());
    return OkStatus();
  }));

  STRATA_RETURN_IF_ERROR(add("device.constant", [](ModuleState& state, const Args& args, CallResults results) {
    Device* device = args.Typed<Device>(0);
    vm::Buffer* source = args.Typed<vm::Buffer>(1);
    uint64_t offset = static_cast<uint64_t>(args.I64(2));
    uint64_t length = args.Length(3);
    if (length == Buffer::kWholeBuffer && offset <= source->length()) length = source->length() - offset;
    STRATA_RETURN_IF_ERROR(source->CheckRange("hal.device.constant: source", offset, length, false));
    const uint8_t* data = source->data() + offset;
    STRATA_ASSIGN_OR_RETURN(
        const ModuleState::Constant* constant,
        state.constants.FindOrMake(std::make_tuple(static_cast<const Device*>(device), data, length),
                                   reinterpret_cast<uintptr_t>(data) >> 6,
                                   [&]() -> StatusOr<ModuleState::Constant> {
                                     auto made = MakeConstant(*device, *source, {data, static_cast<size_t>(length)});
                                     if (!made.ok()) return args.Prefixed(std::move(made).status());
                                     return ModuleState::Constant{Ref<Device>::Borrow(device),
                                                                  Ref<vm::Buffer>::Borrow(source),
                                                                  std::move(made).value()};
                                   }));
    results[0] = RefValue(constant->buffer);
    return OkStatus();
  }));

  // ---- buffer ----
  STRATA_RETURN_IF_ERROR(add("buffer.length", [](ModuleState& state, const Args& args, CallResults results) {
    Buffer* buffer = args.Typed<Buffer>(0);
    results[0] = Value::I64(static_cast<int64_t>(buffer->byte_length()));
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer.subspan", [](ModuleState& state, const Args& args, CallResults results) {
    Buffer* buffer = args.Typed<Buffer>(0);
    auto subspan = buffer->Subspan(static_cast<uint64_t>(args.I64(1)), args.Length(2));
    if (!subspan.ok()) return args.Prefixed(std::move(subspan).status());
    results[0] = RefValue(std::move(subspan).value());
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer.map", [](ModuleState& state, const Args& args, CallResults results) {
    Buffer* buffer = args.Typed<Buffer>(0);
    if (!(buffer->memory_types() & kMemoryHostVisible) || !(buffer->usage() & kUsageMapping)) {
      // Memory the host cannot map (device-local on a discrete GPU): a
      // read-only copy of the range, made through a staging buffer.
      const uint64_t offset = static_cast<uint64_t>(args.I64(1));
      auto resolved = buffer->ResolveRange("map", offset, args.Length(2));
      if (!resolved.ok()) return args.Prefixed(std::move(resolved).status());
      const uint64_t length = *resolved;
      auto copy = vm::Buffer::Allocate(length);
      if (!copy.ok()) return args.Prefixed(std::move(copy).status());
      Ref<vm::Buffer> bytes = std::move(copy).value();
      const std::span<uint8_t> data = {bytes->data(), static_cast<size_t>(length)};
      STRATA_RETURN_IF_ERROR(args.Prefixed(ReadBuffer(*state.device, *buffer, offset, data)));
      results[0] = RefValue(vm::Buffer::Wrap(data, Ref<RefObject>(std::move(bytes)), false));
      return OkStatus();
    }
    const bool writable = buffer->allowed_access() & kAccessWrite;
    auto range = buffer->Map(writable ? kAccessReadWrite : kAccessRead, static_cast<uint64_t>(args.I64(1)),
                             args.Length(2));
    if (!range.ok()) return args.Prefixed(std::move(range).status());
    auto owner = MakeRef<MappingOwner>(std::move(range).value());
    std::span<uint8_t> bytes = owner->range().bytes();
    results[0] = RefValue(vm::Buffer::Wrap(bytes, Ref<RefObject>(std::move(owner)), writable));
    return OkStatus();
  }));

  // ---- buffer_view ----
  STRATA_RETURN_IF_ERROR(add("buffer_view.create", [](ModuleState& state, const Args& args, CallResults results) {
    Buffer* buffer = args.Typed<Buffer>(0);
    vm::List* shape_list = args.Typed<vm::List>(3);
    if (shape_list->size() > BufferView::kMaxRank) {
      return InvalidArgumentError("hal.buffer_view.create: rank ", shape_list->size(), " exceeds the maximum of ",
                                  BufferView::kMaxRank);
    }
    int64_t shape[BufferView::kMaxRank];
    for (uint32_t i = 0; i < shape_list->size(); ++i) {
      Value dim;
      STRATA_RETURN_IF_ERROR(args.Prefixed(shape_list->Get(i, ValueType::kI64, &dim)));
      shape[i] = dim.i64();
    }
    auto view = BufferView::Create(Ref<Buffer>::Borrow(buffer), static_cast<uint64_t>(args.I64(1)),
                                   static_cast<ElementType>(args.I32(2)), {shape, shape_list->size()});
    if (!view.ok()) return args.Prefixed(std::move(view).status());
    results[0] = RefValue(std::move(view).value());
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer_view.buffer", [](ModuleState& state, const Args& args, CallResults results) {
    BufferView* view = args.Typed<BufferView>(0);
    results[0] = RefValue(Ref<Buffer>::Borrow(view->buffer()));
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer_view.byte_offset", [](ModuleState& state, const Args& args, CallResults results) {
    BufferView* view = args.Typed<BufferView>(0);
    results[0] = Value::I64(static_cast<int64_t>(view->byte_offset()));
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer_view.byte_length", [](ModuleState& state, const Args& args, CallResults results) {
    BufferView* view = args.Typed<BufferView>(0);
    results[0] = Value::I64(static_cast<int64_t>(view->byte_length()));
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer_view.element_type", [](ModuleState& state, const Args& args, CallResults results) {
    BufferView* view = args.Typed<BufferView>(0);
    results[0] = Value::I32(static_cast<int32_t>(view->element_type()));
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer_view.rank", [](ModuleState& state, const Args& args, CallResults results) {
    BufferView* view = args.Typed<BufferView>(0);
    results[0] = Value::I32(static_cast<int32_t>(view->rank()));
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("buffer_view.dim", [](ModuleState& state, const Args& args, CallResults results) {
    BufferView* view = args.Typed<BufferView>(0);
    int32_t index = args.I32(1);
    if (index < 0 || static_cast<uint32_t>(index) >= view->rank()) {
      return OutOfRangeError("hal.buffer_view.dim: index ", index, " is out of range for ",
                             view->DescribeType(), " (rank ", view->rank(), ")");
    }
    results[0] = Value::I64(view->shape()[index]);
    return OkStatus();
  }));

  STRATA_RETURN_IF_ERROR(add("buffer_view.assert", [](ModuleState& state, const Args& args, CallResults) {
    const std::string_view what = args.Text(1);
    vm::List* shape_list = args.Typed<vm::List>(3);
    const auto element_type = static_cast<ElementType>(args.I32(2));
    // The expected type as text ("?x4xf32"), for the messages.
    const auto expected = [&] {
      std::string text;
      for (uint32_t i = 0; i < shape_list->size(); ++i) {
        Value dim;
        const bool known = shape_list->Get(i, ValueType::kI64, &dim).ok() && dim.i64() >= 0;
        text += known ? std::to_string(dim.i64()) : std::string("?");
        text += 'x';
      }
      const char* type_name = ElementTypeName(element_type);
      return text + (type_name ? type_name : "?");
    };
    BufferView* view = args.As<BufferView>(0);
    if (!view) {
      return InvalidArgumentError(what, ": expected a tensor ", expected(), ", got ", args.RefTypeName(0));
    }
    bool match = view->element_type() == element_type && view->rank() == shape_list->size();
    for (uint32_t i = 0; match && i < view->rank(); ++i) {
      Value dim;
      STRATA_RETURN_IF_ERROR(args.Prefixed(shape_list->Get(i, ValueType::kI64, &dim)));
      match = dim.i64() < 0 || dim.i64() == view->shape()[i];
    }
    if (!match) {
      return InvalidArgumentError(what, ": expected a tensor ", expected(), ", got ", view->DescribeType());
    }
    return OkStatus();
  }));

  // ---- executable ----
  STRATA_RETURN_IF_ERROR(add("executable.create", [](ModuleState& state, const Args& args, CallResults results) {
    Device* device = args.Typed<Device>(0);
    if (args.As<vm::Buffer>(1)) {
      return IncompatibleError("the module names its executable (module format 1.1 and "
                               "older); this runtime takes it as a value (format 1.2): recompile the module");
    }
    STRATA_ASSIGN_OR_RETURN(vm::EmbeddedExecutable * embedded, args.Get<vm::EmbeddedExecutable>(1));
    STRATA_ASSIGN_OR_RETURN(Ref<Executable> executable, CreateExecutable(state, device, *embedded));
    results[0] = RefValue(std::move(executable));
    return OkStatus();
  }));

  // ---- command_buffer ----
  STRATA_RETURN_IF_ERROR(add("command_buffer.create", [](ModuleState&, const Args& args, CallResults results) {
    return CreateCommandBufferWith(&Device::CreateCommandBuffer, args, results);
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.create_streamed", [](ModuleState&, const Args& args, CallResults results) {
    return CreateCommandBufferWith(&Device::CreateStreamedCommandBuffer, args, results);
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.create_indirect", [](ModuleState&, const Args& args, CallResults results) {
    return CreateCommandBufferWith(&Device::CreateIndirectCommandBuffer, args, results);
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.begin", [](ModuleState& state, const Args& args, CallResults) {
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(0);
    return args.Prefixed(command_buffer->Begin());
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.end", [](ModuleState& state, const Args& args, CallResults) {
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(0);
    return args.Prefixed(command_buffer->End());
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.dispatch", [](ModuleState& state, const Args& args, CallResults) {
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(0);
    Executable* executable = args.Typed<Executable>(1);
    vm::List* constant_list = args.Typed<vm::List>(6);
    vm::List* binding_list = args.Typed<vm::List>(7);
    uint32_t constant_count = constant_list ? constant_list->size() : 0;
    uint32_t binding_elements = binding_list ? binding_list->size() : 0;
    if (constant_count > Executable::kMaxConstants) {
      return InvalidArgumentError("hal.command_buffer.dispatch: ", constant_count,
                                  " push constants exceed the maximum of ", Executable::kMaxConstants);
    }
    if (binding_elements % 3 || binding_elements / 3 > Executable::kMaxBindings) {
      return InvalidArgumentError("hal.command_buffer.dispatch: bindings must hold at most ",
                                  Executable::kMaxBindings, " (buffer, offset, length) triples, got ",
                                  binding_elements, " elements");
    }
    // Elements are read in place (List::Peek); a missing or mistyped one is
    // read again with List::Get for its error.
    auto element = [&](vm::List* list, uint32_t index, ValueType type) -> StatusOr<const Value*> {
      if (const Value* value = list->Peek(index, type)) return value;
      Value unused;
      STRATA_RETURN_IF_ERROR(args.Prefixed(list->Get(index, type, &unused)));
      return InternalError("hal.command_buffer.dispatch: list element ", index, " unreadable");
    };
    uint32_t constants[Executable::kMaxConstants];
    for (uint32_t i = 0; i < constant_count; ++i) {
      STRATA_ASSIGN_OR_RETURN(const Value* v, element(constant_list, i, ValueType::kI32));
      constants[i] = static_cast<uint32_t>(v->i32());
    }
    BufferBinding bindings[Executable::kMaxBindings];
    for (uint32_t i = 0; i < binding_elements / 3; ++i) {
      STRATA_ASSIGN_OR_RETURN(const Value* offset, element(binding_list, 3 * i + 1, ValueType::kI64));
      STRATA_ASSIGN_OR_RETURN(const Value* length, element(binding_list, 3 * i + 2, ValueType::kI64));
      // An i32 in place of the buffer: a slot of the binding table of each
      // submission (an indirect command buffer's).
      if (const Value* slot = binding_list->Peek(3 * i, ValueType::kI32)) {
        if (slot->i32() < 0) {
          return InvalidArgumentError("hal.command_buffer.dispatch: binding ", i, " names slot ", slot->i32(),
                                      "; slots are not negative");
        }
        bindings[i] = BufferBinding::Slot(static_cast<uint32_t>(slot->i32()), static_cast<uint64_t>(offset->i64()),
                                          static_cast<uint64_t>(length->i64()));
        continue;
      }
      STRATA_ASSIGN_OR_RETURN(const Value* buffer, element(binding_list, 3 * i, ValueType::kRef));
      auto* typed = RefCast<Buffer>(buffer->ref().get());
      if (!typed) {
        return InvalidArgumentError("hal.command_buffer.dispatch: binding ", i,
                                    " must be a hal.buffer or an i32 binding table slot, got ",
                                    buffer->ref() ? buffer->ref()->type_name() : "null");
      }
      bindings[i] = {typed, static_cast<uint64_t>(offset->i64()), static_cast<uint64_t>(length->i64())};
    }
    WorkgroupCount workgroups;
    if (args.I32(3) < 0 || args.I32(4) < 0 || args.I32(5) < 0) {
      return InvalidArgumentError("hal.command_buffer.dispatch: negative workgroup count (", args.I32(3), ", ",
                                  args.I32(4), ", ", args.I32(5), ")");
    }
    workgroups.x = static_cast<uint32_t>(args.I32(3));
    workgroups.y = static_cast<uint32_t>(args.I32(4));
    workgroups.z = static_cast<uint32_t>(args.I32(5));
    return args.Prefixed(command_buffer->Dispatch(executable, static_cast<uint32_t>(args.I32(2)), workgroups,
                                                  {constants, constant_count}, {bindings, binding_elements / 3}));
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.fill", [](ModuleState& state, const Args& args, CallResults) {
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(0);
    Buffer* target = args.Typed<Buffer>(1);
    return args.Prefixed(command_buffer->Fill(target, static_cast<uint64_t>(args.I64(2)), args.Length(3),
                                              static_cast<uint32_t>(args.I32(4)),
                                              static_cast<uint32_t>(args.I32(5))));
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.copy", [](ModuleState& state, const Args& args, CallResults) {
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(0);
    Buffer* source = args.Typed<Buffer>(1);
    Buffer* target = args.Typed<Buffer>(3);
    return args.Prefixed(command_buffer->Copy(source, static_cast<uint64_t>(args.I64(2)), target,
                                              static_cast<uint64_t>(args.I64(4)), args.Length(5)));
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.update", [](ModuleState& state, const Args& args, CallResults) {
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(0);
    vm::Buffer* source = args.Typed<vm::Buffer>(1);
    Buffer* target = args.Typed<Buffer>(3);
    uint64_t offset = static_cast<uint64_t>(args.I64(2));
    uint64_t length = args.Length(5);
    if (length == Buffer::kWholeBuffer && offset <= source->length()) length = source->length() - offset;
    STRATA_RETURN_IF_ERROR(source->CheckRange("hal.command_buffer.update: source", offset, length, false));
    return args.Prefixed(command_buffer->Update({source->data() + offset, static_cast<size_t>(length)}, target,
                                                static_cast<uint64_t>(args.I64(4))));
  }));
  STRATA_RETURN_IF_ERROR(add("command_buffer.barrier", [](ModuleState& state, const Args& args, CallResults) {
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(0);
    return args.Prefixed(command_buffer->Barrier());
  }));

  // ---- semaphore ----
  STRATA_RETURN_IF_ERROR(add("semaphore.create", [](ModuleState& state, const Args& args, CallResults results) {
    Device* device = args.Typed<Device>(0);
    auto semaphore = device->CreateSemaphore(static_cast<uint64_t>(args.I64(1)));
    if (!semaphore.ok()) return args.Prefixed(std::move(semaphore).status());
    results[0] = RefValue(std::move(semaphore).value());
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("semaphore.query", [](ModuleState& state, const Args& args, CallResults results) {
    Semaphore* semaphore = args.Typed<Semaphore>(0);
    StatusOr<uint64_t> value = semaphore->Query();
    results[0] = Value::I32(static_cast<int32_t>(value.status().code()));
    results[1] = Value::I64(value.ok() ? static_cast<int64_t>(*value) : 0);
    return OkStatus();
  }));
  STRATA_RETURN_IF_ERROR(add("semaphore.signal", [](ModuleState& state, const Args& args, CallResults) {
    Semaphore* semaphore = args.Typed<Semaphore>(0);
    return args.Prefixed(semaphore->Signal(static_cast<uint64_t>(args.I64(1))));
  }));
  STRATA_RETURN_IF_ERROR(add("semaphore.wait", [](ModuleState& state, const Args& args, CallResults results) {
    Semaphore* semaphore = args.Typed<Semaphore>(0);
    auto timeout = args.I64(2) < 0 ? Semaphore::kInfiniteTimeout : std::chrono::nanoseconds(args.I64(2));
    // No wait outlasts the call's deadline.
    const auto deadline = vm::CurrentInvocationDeadline();
    bool bounded_by_deadline = false;
    if (deadline != std::chrono::steady_clock::time_point::max()) {
      const auto left = std::max(std::chrono::nanoseconds(0), std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                                  deadline - std::chrono::steady_clock::now()));
      if (left < timeout) {
        timeout = left;
        bounded_by_deadline = true;
      }
    }
    Tracer* const tracer = state.device->tracer();
    const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
    Status status = semaphore->Wait(static_cast<uint64_t>(args.I64(1)), timeout);
    if (tracer) {
      const TraceArg trace_args[] = {{"value", args.I64(1)}};
      tracer->Record({"wait", "semaphore.wait", trace_begin, Tracer::Now(), trace_args});
    }
    // A wait that timed out, as opposed to a semaphore that failed (with
    // whatever code its work failed with, DEADLINE_EXCEEDED included).
    if (status.code() == StatusCode::kDeadlineExceeded && semaphore->Query().ok()) {
      if (!bounded_by_deadline) {
        results[0] = Value::I32(static_cast<int32_t>(StatusCode::kDeadlineExceeded));
        return OkStatus();
      }
      // The device stops the work at its next check (a CPU device between
      // workgroups): give it a moment, so that its own error, which says
      // where it stopped, is the one reported.
      semaphore->Wait(static_cast<uint64_t>(args.I64(1)), kDeadlineGrace).IgnoreError();
      STRATA_RETURN_IF_ERROR(semaphore->Query().status());
      const double late_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - deadline).count();
      return DeadlineExceededError("the call's deadline passed while waiting for the device to reach ",
                                   args.I64(1), "; stopped waiting ", late_ms, " ms after it");
    }
    STRATA_RETURN_IF_ERROR(status);
    results[0] = Value::I32(0);
    return OkStatus();
  }));

  // ---- queue ----
  STRATA_RETURN_IF_ERROR(add("queue.execute", [](ModuleState& state, const Args& args, CallResults) {
    Device* device = args.Typed<Device>(0);
    vm::List* wait_list = args.Typed<vm::List>(1);
    vm::List* signal_list = args.Typed<vm::List>(2);
    vm::List* command_buffer_list = args.Typed<vm::List>(3);
    thread_local SubmitLists lists;
    STRATA_RETURN_IF_ERROR(ReadSemaphoreList("waits", wait_list, &lists.waits));
    STRATA_RETURN_IF_ERROR(ReadSemaphoreList("signals", signal_list, &lists.signals));
    lists.command_buffers.clear();
    for (uint32_t i = 0; command_buffer_list && i < command_buffer_list->size(); ++i) {
      Value value;
      STRATA_RETURN_IF_ERROR(args.Prefixed(command_buffer_list->Get(i, ValueType::kRef, &value)));
      auto* typed = RefCast<CommandBuffer>(value.ref().get());
      if (!typed) {
        return InvalidArgumentError("hal.queue.execute: command buffer ", i, " must be a hal.command_buffer, got ",
                                    value.ref() ? value.ref()->type_name() : "null");
      }
      lists.command_buffers.push_back(typed);
    }
    // The device stops the work at the deadline of the call that submits it.
    return args.Prefixed(device->QueueExecute(lists.waits, lists.signals, lists.command_buffers,
                                              vm::CurrentInvocationDeadline()));
  }));
  STRATA_RETURN_IF_ERROR(add("queue.execute_indirect", [](ModuleState& state, const Args& args, CallResults) {
    Device* device = args.Typed<Device>(0);
    CommandBuffer* command_buffer = args.Typed<CommandBuffer>(3);
    vm::List* table_list = args.Typed<vm::List>(4);
    thread_local SubmitLists lists;
    STRATA_RETURN_IF_ERROR(ReadSemaphoreList("waits", args.Typed<vm::List>(1), &lists.waits));
    STRATA_RETURN_IF_ERROR(ReadSemaphoreList("signals", args.Typed<vm::List>(2), &lists.signals));
    const uint32_t elements = table_list->size();
    if (elements % 3 || elements / 3 > CommandBuffer::kMaxBindingSlots) {
      return InvalidArgumentError("hal.queue.execute_indirect: the binding table must hold at most ",
                                  CommandBuffer::kMaxBindingSlots, " (buffer, offset, length) triples, got ",
                                  elements, " elements");
    }
    lists.table.resize(elements / 3);
    for (uint32_t i = 0; i < elements / 3; ++i) {
      Value buffer, offset, length;
      STRATA_RETURN_IF_ERROR(args.Prefixed(table_list->Get(3 * i, ValueType::kRef, &buffer)));
      STRATA_RETURN_IF_ERROR(args.Prefixed(table_list->Get(3 * i + 1, ValueType::kI64, &offset)));
      STRATA_RETURN_IF_ERROR(args.Prefixed(table_list->Get(3 * i + 2, ValueType::kI64, &length)));
      auto* typed = RefCast<Buffer>(buffer.ref().get());
      if (buffer.ref() && !typed) {
        return InvalidArgumentError("hal.queue.execute_indirect: binding table entry ", i,
                                    " must be a hal.buffer or null, got ", buffer.ref()->type_name());
      }
      // The list keeps the buffers alive for the call; the queue holds them
      // from submission until the work is done.
      lists.table[i] = {typed, static_cast<uint64_t>(offset.i64()), static_cast<uint64_t>(length.i64())};
    }
    const std::span<const BufferBinding> table = lists.table;
    return args.Prefixed(device->QueueExecute(lists.waits, lists.signals, {&command_buffer, 1}, {&table, 1},
                                              vm::CurrentInvocationDeadline()));
  }));
  return OkStatus();
}

}  // namespace

StatusOr<Ref<vm::NativeModule>> CreateHalModule(Ref<Device> device) {
  if (!device) return InvalidArgumentError("hal module: the device is null");
  auto state = std::make_shared<ModuleState>();
  state->device = std::move(device);
  Ref<vm::NativeModule> module = vm::NativeModule::Create("hal");
  STRATA_RETURN_IF_ERROR(AddFunctions(*module, std::move(state)));
  return module;
}

}  // namespace strata::hal
