// libFuzzer target over the whole path a module file takes: load (FlatBuffer
// and bytecode verification), link with the `hal` module of a cpu-sync device
// and the `check` module, prepare every executable (the CPU executable
// metadata and the ELF loader), and run every export with inputs of its
// declared types under a step budget, a call-depth limit, an allocation limit
// and a deadline. Any crash, sanitizer report, leak or hang is a bug.
//
// The integrity record is not checked: whoever edits an unsigned file can
// rewrite its digest too, so everything behind the digest must hold on its
// own. Machine code is the exception: a module's kernels run as the app's own
// code, and the digest or signature is what decides which code that is. So
// exports run only when every executable's code is byte-identical to code of
// a module given in a corpus directory on the command line (the compiled
// samples); a mutated executable is still prepared, never run.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "drivers/cpu/cpu_device.h"
#include "hal/driver_registry.h"
#include "hal/module/hal_module.h"
#include "tests/vm/check_module.h"
#include "tests/vm/default_inputs.h"
#include "tools/common/file_io.h"
#include "tools/common/numpy_io.h"
#include "tools/common/tensor_compare.h"
#include "tools/common/tensor_text.h"
#include "tools/common/tensor_values.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"

namespace {

using namespace strata;
using tools::ParseTensor;
using tools::ReadFile;
using tools::Tensor;
using tools::TensorToValue;

std::set<std::string>& TrustedCode() {
  static std::set<std::string> code;
  return code;
}

std::string CodeOf(const vm::ExecutableInfo& executable) {
  return std::string(executable.format) + '\0' +
         std::string(reinterpret_cast<const char*>(executable.data.data()), executable.data.size());
}

Ref<hal::Device> Device() {
  static Ref<hal::Device> device = [] {
    hal::DriverRegistry registry;
    cpu::RegisterSyncDriver(registry).IgnoreError();
    // Device allocations stay far below the fuzzer's memory limit.
    auto created = registry.CreateDevice("cpu-sync?max_allocation=268435456");
    if (!created.ok()) __builtin_trap();
    return *created;
  }();
  return device;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Code from the corpus directories' modules (checked against their
  // digests) is what may run.
  for (int i = 1; i < *argc; ++i) {
    std::error_code error;
    if (!std::filesystem::is_directory((*argv)[i], error)) continue;
    for (const auto& entry : std::filesystem::directory_iterator((*argv)[i], error)) {
      auto bytes = ReadFile(entry.path().string());
      if (!bytes.ok()) continue;
      auto module = vm::BytecodeModule::LoadOwned(std::move(*bytes));
      if (!module.ok()) continue;
      for (const auto& executable : (*module)->executables()) TrustedCode().insert(CodeOf(executable));
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Ref<vm::NativeModule> check = testing::CreateCheckModule();
  vm::IntegrityOptions integrity;
  integrity.verify = false;
  auto module = vm::BytecodeModule::LoadBytes({data, size}, nullptr, integrity);
  if (!module.ok()) return 0;
  Ref<hal::Device> device = Device();
  bool trusted = true;
  for (const auto& executable : (*module)->executables()) {
    if (TrustedCode().count(CodeOf(executable))) continue;
    trusted = false;
    // Prepared (parsed, mapped, relocated) but never run.
    hal::ExecutableParams params;
    params.name = executable.name;
    params.format = executable.format;
    params.data = executable.data;
    params.metadata = executable.metadata;
    device->PrepareExecutable(params).status().IgnoreError();
  }
  if (!trusted) return 0;
  auto hal_module = hal::CreateHalModule(device);
  if (!hal_module.ok()) return 0;
  auto context = vm::Context::Create({check, *hal_module, *module});
  if (!context.ok()) return 0;
  vm::InvocationOptions options;
  options.max_steps = 20000;
  options.max_call_depth = 64;
  options.max_allocation_bytes = 64 << 20;
  options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (const auto& fn : (*module)->exports()) {
    auto handle = (*context)->LookupFunction(std::string(fn.name));
    if (!handle.ok()) continue;
    std::vector<vm::Value> args;
    std::string_view arg_types, result_types;
    vm::SplitSignature(fn.signature, &arg_types, &result_types);
    const vm::FunctionInfo* info = fn.ordinal < (*module)->functions().size() ? &(*module)->functions()[fn.ordinal] : nullptr;
    for (size_t i = 0; i < arg_types.size(); ++i) {
      switch (arg_types[i]) {
        case 'i': args.push_back(vm::Value::I32(2)); break;
        case 'I': args.push_back(vm::Value::I64(2)); break;
        case 'f': args.push_back(vm::Value::F32(2.0f)); break;
        case 'F': args.push_back(vm::Value::F64(2.0)); break;
        default: {
          vm::Value value = vm::Value::FromRef(nullptr);
          if (info && i < info->source_arg_types.size()) {
            std::string text = testing::DefaultInputText(info->source_arg_types[i]);
            auto tensor = text.empty() ? StatusOr<Tensor>(InvalidArgumentError("")) : ParseTensor(text);
            if (tensor.ok()) {
              auto made = TensorToValue(*tensor, 'r', *device);
              if (made.ok()) value = *made;
            }
          }
          args.push_back(std::move(value));
        }
      }
    }
    (*context)->Invoke(*handle, args, options).status().IgnoreError();
  }
  return 0;
}
