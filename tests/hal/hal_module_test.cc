// The `hal` native module driven from a VM Context, as compiled programs will
// drive it: a program module with embedded executables, the hal module created
// for it, and the call sequence of a dispatch (allocate, record, submit, wait,
// read back) made through Context::Invoke.
#include <cstring>

#include "drivers/cpu/cpu_executable.h"
#include "drivers/registry.h"
#include "hal/buffer_view.h"
#include "hal/module/hal_module.h"
#include "schemas/bytecode.h"
#include "strata/schemas/module_generated.h"
#include "tests/hal/hal_test_util.h"
#include "tests/hal/kernels/test_kernels.h"
#include "tests/vm/module_builder.h"
#include "vm/buffer.h"
#include "vm/context.h"
#include "vm/list.h"

namespace strata::testing {
namespace {

using vm::Value;

struct EmbeddedExecutable {
  std::string name;
  std::string format;
  std::span<const uint8_t> data;
  std::vector<uint8_t> metadata;
};

// A module file with no functions and the given executables in its external
// data, laid out as the compiler lays it out.
std::vector<uint8_t> BuildProgram(const std::vector<EmbeddedExecutable>& executables) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<uint8_t> external;
  std::vector<flatbuffers::Offset<schema::ExecutableDef>> defs;
  for (const EmbeddedExecutable& executable : executables) {
    while (external.size() % bytecode::kExternalAlignment) external.push_back(0);
    schema::ExternalRange range(external.size(), executable.data.size());
    external.insert(external.end(), executable.data.begin(), executable.data.end());
    defs.push_back(schema::CreateExecutableDefDirect(fbb, executable.name.c_str(), executable.format.c_str(),
                                                     &range, &executable.metadata));
  }
  auto root = schema::CreateModuleDefDirect(fbb, "program", bytecode::kVersionMajor, bytecode::kVersionMinor,
                                            nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr, 0, nullptr,
                                            &defs, external.size());
  fbb.FinishSizePrefixed(root, schema::ModuleDefIdentifier());
  std::vector<uint8_t> file(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  while (file.size() % bytecode::kExternalAlignment) file.push_back(0);
  file.insert(file.end(), external.begin(), external.end());
  testing::Seal(file);
  return file;
}

Ref<vm::Buffer> Text(std::string_view text) {
  Ref<vm::Buffer> buffer = vm::Buffer::Allocate(text.size()).value();
  std::memcpy(buffer->data(), text.data(), text.size());
  return buffer;
}

Value RefArg(Ref<RefObject> object) { return Value::FromRef(std::move(object)); }
template <typename T>
Value RefArg(const Ref<T>& object) {
  return Value::FromRef(Ref<RefObject>(object));
}

Ref<vm::List> MakeList(std::initializer_list<Value> values) {
  Ref<vm::List> list = vm::List::Create(static_cast<uint32_t>(values.size())).value();
  for (const Value& value : values) list->PushBack(value);
  return list;
}

class Program {
 public:
  explicit Program(const std::string& driver) {
    device_ = CreateDevice(driver);
    const std::string host_format = cpu::HostExecutableFormat();
    std::vector<EmbeddedExecutable> executables = {
        // The device picks the format it runs among several.
        {"kernels", "cpu-elf-riscv64", HostKernelElf("add_f32"), CpuMetadata("add_f32", 3, 1)},
        {"kernels", host_format, HostKernelElf("add_f32"), CpuMetadata("add_f32", 3, 1, {true, true, false})},
        {"failing", host_format, HostKernelElf("fail_if"), CpuMetadata("fail_if", 0, 1)},
    };
    if (!TestKernelSpirv("add_f32").empty()) {
      executables.push_back(
          {"kernels", "vulkan-spirv", TestKernelSpirv("add_f32"), VulkanMetadata(VulkanTestKernel("add_f32"))});
      executables.push_back(
          {"failing", "vulkan-spirv", TestKernelSpirv("fail_if"), VulkanMetadata(VulkanTestKernel("fail_if"))});
    }
    if (!TestKernelPtx("add_f32").empty()) {
      executables.push_back(
          {"kernels", "cuda-ptx", TestKernelPtx("add_f32"), CudaMetadata(CudaTestKernel("add_f32"))});
      executables.push_back(
          {"failing", "cuda-ptx", TestKernelPtx("fail_if"), CudaMetadata(CudaTestKernel("fail_if"))});
    }
    // And one embedded only in a format the device does not run.
    foreign_format_ = device_->SupportsExecutableFormat("vulkan-spirv") ? "cpu-elf-riscv64" : "vulkan-spirv";
    executables.push_back({"foreign", foreign_format_, HostKernelElf("fail_if"), {}});
    auto module = vm::BytecodeModule::LoadOwned(BuildProgram(executables));
    REQUIRE_MESSAGE(module.ok(), module.status().ToString());
    module_ = module.value();
    auto hal = hal::CreateHalModule(device_);
    REQUIRE_MESSAGE(hal.ok(), hal.status().ToString());
    auto context = vm::Context::Create({Ref<vm::Module>(hal.value()), Ref<vm::Module>(module.value())});
    REQUIRE_MESSAGE(context.ok(), context.status().ToString());
    context_ = std::move(context).value();
  }

  StatusOr<std::vector<Value>> Call(std::string_view function, std::vector<Value> args) {
    STRATA_ASSIGN_OR_RETURN(vm::FunctionHandle handle, context_->LookupFunction(StrCat("hal.", function)));
    return context_->Invoke(handle, args);
  }
  // Calls a function that must succeed.
  std::vector<Value> Must(std::string_view function, std::vector<Value> args) {
    StatusOr<std::vector<Value>> results = Call(function, std::move(args));
    INFO("hal.", std::string(function));
    REQUIRE_MESSAGE(results.ok(), results.status().ToString());
    return std::move(results).value();
  }

  // The program's embedded executable `name`, as vm.const.ref.executable
  // makes it.
  Value Executable(std::string_view name) const {
    const auto& groups = module_->executable_groups();
    for (uint32_t i = 0; i < groups.size(); ++i) {
      if (groups[i].name == name) return Value::FromRef(MakeRef<vm::EmbeddedExecutable>(module_, i));
    }
    FAIL("no executable named ", std::string(name));
    return Value::FromRef(nullptr);
  }

  hal::Device* device() const { return device_.get(); }
  const std::string& foreign_format() const { return foreign_format_; }

 private:
  Ref<hal::Device> device_;
  Ref<vm::BytecodeModule> module_;
  std::string foreign_format_;
  std::unique_ptr<vm::Context> context_;
};

TEST_CASE("hal module: a dispatch from allocation to read-back") {
  FOR_EACH_DRIVER(unused) {
    if (!PrepareTestKernel(*unused, "add_f32")) continue;
    Program program(_strata_driver);
    Value device = program.Must("device.default", {})[0];
    REQUIRE(device.ref().get() == program.device());
    const hal::DeviceInfo& info = program.device()->info();

    auto query = [&](const char* category, const char* key) {
      std::vector<Value> r = program.Must("device.query_i64", {device, RefArg(Text(category)), RefArg(Text(key))});
      return std::make_pair(r[0].i32(), r[1].i64());
    };
    for (const char* format : {cpu::HostExecutableFormat(), "vulkan-spirv"}) {
      CHECK(query("hal.executable.format", format) ==
            std::make_pair(1, int64_t{program.device()->SupportsExecutableFormat(format)}));
    }
    // The spec may carry options ("vulkan?unified_memory=0").
    CHECK(query("hal.driver", DriverOf(_strata_driver).c_str()) == std::make_pair(1, int64_t{1}));
    CHECK(query("hal.device", "concurrency") ==
          std::make_pair(1, int64_t{program.device()->info().concurrency}));
    CHECK(query("hal.device", "min_binding_alignment") ==
          std::make_pair(1, static_cast<int64_t>(info.limits.min_binding_alignment)));
    CHECK(query("hal.device", "no-such-key") == std::make_pair(0, int64_t{0}));

    Value allocator = program.Must("device.allocator", {device})[0];
    CHECK(std::string(allocator.ref()->type_name()) == "hal.allocator");
    const int32_t visible = hal::kMemoryHostVisible;
    const int32_t usage = hal::kUsageAll;
    Value a = program.Must("allocator.allocate", {allocator, Value::I32(visible), Value::I32(usage), Value::I64(64)})[0];
    Value c = program.Must("allocator.allocate", {allocator, Value::I32(visible), Value::I32(usage), Value::I64(64)})[0];
    CHECK(program.Must("buffer.length", {a})[0].i64() == 64);

    // b aliases a vm.buffer (no copy) and keeps it alive.
    Ref<vm::Buffer> host = vm::Buffer::Allocate(64).value();
    for (int i = 0; i < 16; ++i) reinterpret_cast<float*>(host->data())[i] = 100.0f * i;
    const int32_t host_refs = host->ref_count();
    Value b = program.Must("allocator.import", {allocator, Value::I32(visible), Value::I32(usage), RefArg(host),
                                                Value::I64(0), Value::I64(-1)})[0];
    CHECK(host->ref_count() == host_refs + 1);

    // The update source: 16 floats 0..15.
    Ref<vm::Buffer> source = vm::Buffer::Allocate(64).value();
    for (int i = 0; i < 16; ++i) reinterpret_cast<float*>(source->data())[i] = float(i);

    Value executable = program.Must("executable.create", {device, program.Executable("kernels")})[0];
    CHECK(static_cast<hal::Executable*>(executable.ref().get())->format() == info.executable_formats[0]);
    // Prepared once, then shared.
    CHECK(program.Must("executable.create", {device, program.Executable("kernels")})[0].ref().get() ==
          executable.ref().get());

    Value command_buffer = program.Must("command_buffer.create", {device})[0];
    program.Must("command_buffer.begin", {command_buffer});
    program.Must("command_buffer.update", {command_buffer, RefArg(source), Value::I64(0), a, Value::I64(0),
                                           Value::I64(-1)});
    program.Must("command_buffer.barrier", {command_buffer});
    Ref<vm::List> constants = MakeList({Value::I32(16)});
    Ref<vm::List> bindings = MakeList({a, Value::I64(0), Value::I64(64), b, Value::I64(0), Value::I64(64), c,
                                       Value::I64(0), Value::I64(-1)});
    program.Must("command_buffer.dispatch", {command_buffer, executable, Value::I32(0), Value::I32(1), Value::I32(1),
                                             Value::I32(1), RefArg(constants), RefArg(bindings)});
    program.Must("command_buffer.barrier", {command_buffer});
    program.Must("command_buffer.fill", {command_buffer, a, Value::I64(0), Value::I64(16), Value::I32(0),
                                         Value::I32(4)});
    program.Must("command_buffer.copy", {command_buffer, c, Value::I64(60), a, Value::I64(60), Value::I64(4)});
    program.Must("command_buffer.end", {command_buffer});

    Value semaphore = program.Must("semaphore.create", {device, Value::I64(0)})[0];
    program.Must("queue.execute", {device, Value::FromRef(nullptr),
                                   RefArg(MakeList({semaphore, Value::I64(1)})),
                                   RefArg(MakeList({command_buffer}))});
    CHECK(program.Must("semaphore.wait", {semaphore, Value::I64(1), Value::I64(-1)})[0].i32() == 0);
    std::vector<Value> queried = program.Must("semaphore.query", {semaphore});
    CHECK(queried[0].i32() == 0);
    CHECK(queried[1].i64() == 1);

    Value mapped = program.Must("buffer.map", {c, Value::I64(0), Value::I64(-1)})[0];
    auto* view = RefCast<vm::Buffer>(mapped.ref().get());
    REQUIRE(view);
    REQUIRE(view->length() == 64);
    for (int i = 0; i < 16; ++i) CHECK(reinterpret_cast<const float*>(view->data())[i] == 101.0f * i);
    Value mapped_a = program.Must("buffer.map", {a, Value::I64(0), Value::I64(64)})[0];
    const float* a_values = reinterpret_cast<const float*>(RefCast<vm::Buffer>(mapped_a.ref().get())->data());
    CHECK(a_values[0] == 0.0f);
    CHECK(a_values[3] == 0.0f);
    CHECK(a_values[4] == 4.0f);
    CHECK(a_values[15] == 1515.0f);

    // Views over the result.
    Value shape = RefArg(MakeList({Value::I64(4), Value::I64(4)}));
    const int32_t f32 = static_cast<int32_t>(hal::ElementType::kFloat32);
    Value buffer_view = program.Must("buffer_view.create", {c, Value::I64(0), Value::I32(f32), shape})[0];
    CHECK(program.Must("buffer_view.rank", {buffer_view})[0].i32() == 2);
    CHECK(program.Must("buffer_view.dim", {buffer_view, Value::I32(1)})[0].i64() == 4);
    CHECK(program.Must("buffer_view.element_type", {buffer_view})[0].i32() == f32);
    CHECK(program.Must("buffer_view.byte_length", {buffer_view})[0].i64() == 64);
    CHECK(program.Must("buffer_view.byte_offset", {buffer_view})[0].i64() == 0);
    CHECK(program.Must("buffer_view.buffer", {buffer_view})[0].ref().get() == c.ref().get());
    CheckError(program.Call("buffer_view.dim", {buffer_view, Value::I32(2)}).status(), StatusCode::kOutOfRange,
               {"hal.buffer_view.dim: index 2 is out of range for 4x4xf32"});
    Value subspan = program.Must("buffer.subspan", {c, Value::I64(16), Value::I64(32)})[0];
    CHECK(program.Must("buffer.length", {subspan})[0].i64() == 32);
    CheckError(program.Call("buffer_view.create", {subspan, Value::I64(0), Value::I32(f32), shape}).status(),
               StatusCode::kOutOfRange, {"hal.buffer_view.create", "4x4xf32 needs 64 bytes", "has 32"});

    // Dropping the hal buffer releases the vm.buffer it aliased.
    b = Value();
    bindings = nullptr;
    command_buffer = Value();
    CHECK(host->ref_count() == host_refs);
  }
}

TEST_CASE("hal module: an indirect command buffer recorded once, run with two binding tables") {
  FOR_EACH_DRIVER(unused) {
    if (!PrepareTestKernel(*unused, "add_f32")) continue;
    Program program(_strata_driver);
    Value device = program.Must("device.default", {})[0];
    Value allocator = program.Must("device.allocator", {device})[0];
    const int32_t visible = hal::kMemoryHostVisible;
    const int32_t usage = hal::kUsageAll;
    auto allocate = [&](int64_t bytes) {
      return program.Must("allocator.allocate", {allocator, Value::I32(visible), Value::I32(usage), Value::I64(bytes)})[0];
    };
    auto fill = [&](Value buffer, float scale) {
      Value mapped = program.Must("buffer.map", {buffer, Value::I64(0), Value::I64(-1)})[0];
      auto* view = RefCast<vm::Buffer>(mapped.ref().get());
      for (size_t i = 0; i < view->length() / 4; ++i) reinterpret_cast<float*>(view->data())[i] = scale * i;
    };
    Value a = allocate(64), b1 = allocate(64), c1 = allocate(64), b2 = allocate(128), c2 = allocate(128);
    fill(a, 1.0f);
    fill(b1, 10.0f);
    fill(b2, 100.0f);
    Value executable = program.Must("executable.create", {device, program.Executable("kernels")})[0];
    Value command_buffer = program.Must("command_buffer.create_indirect", {device})[0];
    CHECK(static_cast<hal::CommandBuffer*>(command_buffer.ref().get())->indirect());
    program.Must("command_buffer.begin", {command_buffer});
    // c (slot 1) = a + b (slot 0).
    Ref<vm::List> constants = MakeList({Value::I32(16)});
    Ref<vm::List> bindings = MakeList({a, Value::I64(0), Value::I64(64), Value::I32(0), Value::I64(0), Value::I64(64),
                                       Value::I32(1), Value::I64(0), Value::I64(-1)});
    program.Must("command_buffer.dispatch", {command_buffer, executable, Value::I32(0), Value::I32(1), Value::I32(1),
                                             Value::I32(1), RefArg(constants), RefArg(bindings)});
    program.Must("command_buffer.end", {command_buffer});
    auto run = [&](std::initializer_list<Value> table) {
      Value semaphore = program.Must("semaphore.create", {device, Value::I64(0)})[0];
      STRATA_RETURN_IF_ERROR(program
                                 .Call("queue.execute_indirect", {device, Value::FromRef(nullptr),
                                                                  RefArg(MakeList({semaphore, Value::I64(1)})),
                                                                  command_buffer, RefArg(MakeList(table))})
                                 .status());
      CHECK(program.Must("semaphore.wait", {semaphore, Value::I64(1), Value::I64(-1)})[0].i32() == 0);
      return OkStatus();
    };
    auto read = [&](Value buffer, int64_t offset, int index) {
      Value mapped = program.Must("buffer.map", {buffer, Value::I64(offset), Value::I64(64)})[0];
      return reinterpret_cast<const float*>(RefCast<vm::Buffer>(mapped.ref().get())->data())[index];
    };
    REQUIRE(run({b1, Value::I64(0), Value::I64(-1), c1, Value::I64(0), Value::I64(-1)}).ok());
    CHECK(read(c1, 0, 5) == 55.0f);
    // The second halves of b2 and c2.
    REQUIRE(run({b2, Value::I64(64), Value::I64(64), c2, Value::I64(64), Value::I64(-1)}).ok());
    CHECK(read(c2, 64, 5) == 5.0f + 100.0f * 21);
    CheckError(run({b1, Value::I64(0), Value::I64(-1)}), StatusCode::kInvalidArgument,
               {"hal.queue.execute_indirect", "the binding table has 1 entry", "at least 2"});
    CheckError(run({b1, Value::I64(0)}), StatusCode::kInvalidArgument,
               {"hal.queue.execute_indirect: the binding table must hold", "(buffer, offset, length) triples, got 2"});
    CheckError(run({executable, Value::I64(0), Value::I64(-1), c1, Value::I64(0), Value::I64(-1)}),
               StatusCode::kInvalidArgument, {"binding table entry 0 must be a hal.buffer or null, got hal.executable"});
    // Slots in a command buffer that is not indirect.
    Value direct = program.Must("command_buffer.create", {device})[0];
    program.Must("command_buffer.begin", {direct});
    CheckError(program.Call("command_buffer.dispatch", {direct, executable, Value::I32(0), Value::I32(1),
                                                        Value::I32(1), Value::I32(1), RefArg(constants),
                                                        RefArg(bindings)})
                   .status(),
               StatusCode::kInvalidArgument, {"hal.command_buffer.dispatch", "names binding table slot 0", "not indirect"});
  }
}

TEST_CASE("hal module: constants are made once per device; results prefer mappable memory") {
  FOR_EACH_DRIVER(unused) {
    if (!PrepareTestKernel(*unused, "add_f32")) continue;
    Program program(_strata_driver);
    Value device = program.Must("device.default", {})[0];
    Value allocator = program.Must("device.allocator", {device})[0];
    hal::Device& hal_device = *program.device();

    // 16 floats of read-only bytes, as a module's rodata.
    std::vector<float> values(16);
    for (int i = 0; i < 16; ++i) values[i] = 0.5f * i - 3.0f;
    Ref<vm::Buffer> rodata =
        vm::Buffer::Wrap({reinterpret_cast<uint8_t*>(values.data()), values.size() * sizeof(float)}, nullptr,
                         /*writable=*/false);
    Value constant = program.Must("device.constant", {device, RefArg(rodata), Value::I64(0), Value::I64(-1)})[0];
    auto* buffer = static_cast<hal::Buffer*>(constant.ref().get());
    CHECK(buffer->byte_length() == 64);
    CHECK((buffer->usage() & hal::kUsageDispatchStorage));
    std::vector<float> read(16);
    REQUIRE(hal::ReadBuffer(hal_device, *buffer, 0, {reinterpret_cast<uint8_t*>(read.data()), 64}).ok());
    CHECK(read == values);
    // The second call (any context of the module) gets the same buffer.
    CHECK(program.Must("device.constant", {device, RefArg(rodata), Value::I64(0), Value::I64(-1)})[0].ref().get() ==
          buffer);
    // A different range of the same bytes is its own constant.
    Value tail = program.Must("device.constant", {device, RefArg(rodata), Value::I64(32), Value::I64(-1)})[0];
    CHECK(tail.ref().get() != buffer);
    CHECK(static_cast<hal::Buffer*>(tail.ref().get())->byte_length() == 32);
    // Where the device's first device-local heap is host-visible, the bytes
    // are used in place (the CPU) or copied into host-visible memory; on a
    // device whose device-local memory the host cannot map, the constant is
    // in device-local memory.
    const hal::MemoryHeap* fastest = nullptr;
    for (const hal::MemoryHeap& heap : hal_device.allocator()->heaps()) {
      if (heap.memory_types & hal::kMemoryDeviceLocal) {
        fastest = &heap;
        break;
      }
    }
    REQUIRE(fastest);
    if (fastest->memory_types & hal::kMemoryHostVisible) {
      CHECK((buffer->memory_types() & hal::kMemoryHostVisible));
    } else {
      CHECK((buffer->memory_types() & hal::kMemoryDeviceLocal));
      CHECK(!(buffer->memory_types() & hal::kMemoryHostVisible));
    }
    CheckError(program.Call("device.constant", {device, RefArg(rodata), Value::I64(60), Value::I64(8)}).status(),
               StatusCode::kOutOfRange, {"hal.device.constant: source"});

    // A result: device-local, and mappable exactly where that memory is
    // host-visible.
    const int32_t storage = hal::kUsageDispatchStorage | hal::kUsageTransferSource | hal::kUsageTransferTarget;
    Value result = program.Must("allocator.allocate_preferring",
                                {allocator, Value::I32(hal::kMemoryDeviceLocal), Value::I32(storage),
                                 Value::I32(hal::kUsageMapping), Value::I64(64)})[0];
    auto* result_buffer = static_cast<hal::Buffer*>(result.ref().get());
    CHECK((result_buffer->memory_types() & hal::kMemoryDeviceLocal));
    CHECK(bool(result_buffer->usage() & hal::kUsageMapping) == bool(fastest->memory_types & hal::kMemoryHostVisible));
    // The host program reads it either way (a staged copy where it cannot
    // be mapped).
    REQUIRE(hal::WriteBuffer(hal_device, *result_buffer, 0, {reinterpret_cast<const uint8_t*>(values.data()), 64}).ok());
    Value mapped = program.Must("buffer.map", {result, Value::I64(4), Value::I64(8)})[0];
    auto* bytes = static_cast<vm::Buffer*>(mapped.ref().get());
    REQUIRE(bytes->length() == 8);
    CHECK(std::memcmp(bytes->data(), values.data() + 1, 8) == 0);
    CheckError(program.Call("allocator.allocate_preferring",
                            {allocator, Value::I32(hal::kMemoryDeviceLocal), Value::I32(storage),
                             Value::I32(1 << 20), Value::I64(64)})
                   .status(),
               StatusCode::kInvalidArgument, {"unknown preferred usage bits"});
  }
}

TEST_CASE("hal module: errors name the function, the argument and the types") {
  FOR_EACH_DRIVER(unused) {
    if (!PrepareTestKernel(*unused, "add_f32")) continue;
    Program program(_strata_driver);
    Value device = program.Must("device.default", {})[0];
    Value allocator = program.Must("device.allocator", {device})[0];
    Value buffer = program.Must("allocator.allocate", {allocator, Value::I32(hal::kMemoryHostVisible),
                                                       Value::I32(hal::kUsageAll), Value::I64(64)})[0];
    Value command_buffer = program.Must("command_buffer.create", {device})[0];
    program.Must("command_buffer.begin", {command_buffer});

    CheckError(program.Call("command_buffer.dispatch",
                            {command_buffer, buffer, Value::I32(0), Value::I32(1), Value::I32(1), Value::I32(1),
                             Value::FromRef(nullptr), Value::FromRef(nullptr)})
                   .status(),
               StatusCode::kInvalidArgument,
               {"hal.command_buffer.dispatch: argument 1 must be a hal.executable, got hal.buffer"});
    CheckError(program.Call("buffer.length", {Value::FromRef(nullptr)}).status(), StatusCode::kInvalidArgument,
               {"hal.buffer.length: argument 0 must be a hal.buffer, got null"});
    // A module of format 1.1 named its executable.
    CheckError(program.Call("executable.create", {device, RefArg(Text("kernels"))}).status(),
               StatusCode::kIncompatible, {"names its executable (module format 1.1 and older)", "recompile"});
    CheckError(program.Call("executable.create", {device, Value::FromRef(nullptr)}).status(),
               StatusCode::kInvalidArgument,
               {"hal.executable.create: argument 1 must be a vm.executable, got null"});
    CheckError(program.Call("executable.create", {device, program.Executable("foreign")}).status(),
               StatusCode::kIncompatible,
               {"'foreign' is embedded as " + program.foreign_format(),
                "runs " + program.device()->info().executable_formats[0]});
    CheckError(program.Call("allocator.allocate", {allocator, Value::I32(hal::kMemoryHostCoherent),
                                                   Value::I32(hal::kUsageAll), Value::I64(64)})
                   .status(),
               StatusCode::kInvalidArgument, {"hal.allocator.allocate: ", "host-coherent requires host-visible"});
    CheckError(program.Call("command_buffer.fill", {command_buffer, buffer, Value::I64(0), Value::I64(128),
                                                    Value::I32(0), Value::I32(1)})
                   .status(),
               StatusCode::kOutOfRange, {"hal.command_buffer.fill: ", "[0, 128)", "64-byte buffer"});
    Value executable = program.Must("executable.create", {device, program.Executable("kernels")})[0];
    // One workgroup of entry point 0 with these constant and binding lists.
    auto dispatch = [&](std::initializer_list<Value> constants, std::initializer_list<Value> bindings) {
      return program
          .Call("command_buffer.dispatch",
                {command_buffer, executable, Value::I32(0), Value::I32(1), Value::I32(1), Value::I32(1),
                 RefArg(MakeList(constants)), RefArg(MakeList(bindings))})
          .status();
    };
    CheckError(dispatch({Value::I32(16)}, {buffer, Value::I64(0)}), StatusCode::kInvalidArgument,
               {"(buffer, offset, length) triples, got 2 elements"});
    CheckError(dispatch({Value::I32(16)}, {buffer, Value::I64(0), Value::I64(64)}), StatusCode::kInvalidArgument,
               {"expected 3 bindings, got 1"});
    // A mistyped element of either list, and a binding that is not a buffer.
    CheckError(dispatch({Value::I32(16)}, {buffer, Value::I32(0), Value::I64(64)}), StatusCode::kInvalidArgument,
               {"hal.command_buffer.dispatch: ", "list element 1: expected i64, got i32"});
    CheckError(dispatch({Value::I64(16)}, {buffer, Value::I64(0), Value::I64(64)}), StatusCode::kInvalidArgument,
               {"hal.command_buffer.dispatch: ", "list element 0: expected i32, got i64"});
    CheckError(dispatch({Value::I32(16)}, {executable, Value::I64(0), Value::I64(64)}), StatusCode::kInvalidArgument,
               {"binding 0 must be a hal.buffer or an i32 binding table slot, got hal.executable"});

    // Read-only bytes import as a read-only buffer.
    Ref<vm::Buffer> rodata = vm::Buffer::Wrap({}, nullptr, /*writable=*/false);
    CheckError(program.Call("allocator.import", {allocator, Value::I32(0), Value::I32(hal::kUsageAll),
                                                 RefArg(rodata), Value::I64(0), Value::I64(-1)})
                   .status(),
               StatusCode::kInvalidArgument, {"read-only buffer cannot have usage transfer-target"});
    CheckError(program.Call("allocator.import", {allocator, Value::I32(0), Value::I32(hal::kUsageAll),
                                                 RefArg(Text("abc")), Value::I64(2), Value::I64(8)})
                   .status(),
               StatusCode::kOutOfRange, {"hal.allocator.import: source"});

    // A wait that times out reports it; a failed semaphore fails the call
    // with the original error.
    Value semaphore = program.Must("semaphore.create", {device, Value::I64(0)})[0];
    CHECK(program.Must("semaphore.wait", {semaphore, Value::I64(5), Value::I64(1000)})[0].i32() ==
          static_cast<int32_t>(StatusCode::kDeadlineExceeded));
    Value failing = program.Must("executable.create", {device, program.Executable("failing")})[0];
    Value fail_buffer = program.Must("command_buffer.create", {device})[0];
    program.Must("command_buffer.begin", {fail_buffer});
    program.Must("command_buffer.dispatch", {fail_buffer, failing, Value::I32(0), Value::I32(2), Value::I32(1),
                                             Value::I32(1), RefArg(MakeList({Value::I32(3)})),
                                             Value::FromRef(nullptr)});
    program.Must("command_buffer.end", {fail_buffer});
    program.Must("queue.execute", {device, Value::FromRef(nullptr), RefArg(MakeList({semaphore, Value::I64(1)})),
                                   RefArg(MakeList({fail_buffer}))});
    CheckError(program.Call("semaphore.wait", {semaphore, Value::I64(1), Value::I64(-1)}).status(),
               StatusCode::kAborted, {"dispatch of 'fail_if'", "returned 3"});
    std::vector<Value> queried = program.Must("semaphore.query", {semaphore});
    CHECK(queried[0].i32() == static_cast<int32_t>(StatusCode::kAborted));
    CheckError(program.Call("queue.execute", {device, RefArg(MakeList({semaphore})), Value::FromRef(nullptr),
                                              Value::FromRef(nullptr)})
                   .status(),
               StatusCode::kInvalidArgument, {"waits must hold (semaphore, value) pairs, got 1 elements"});
  }
}

}  // namespace
}  // namespace strata::testing
