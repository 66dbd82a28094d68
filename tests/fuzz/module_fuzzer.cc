// libFuzzer target over the whole untrusted-input path: load (FlatBuffer and
// bytecode verification), link with the `check` module, and run every export
// with zero arguments under a step budget and a small call-depth limit.
// Any crash, sanitizer report, leak or hang is a bug.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tests/vm/check_module.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  static vm::Ref<vm::NativeModule> check = testing::CreateCheckModule();
  auto module = vm::BytecodeModule::LoadBytes({data, size});
  if (!module.ok()) return 0;
  auto context = vm::Context::Create({check, *module});
  if (!context.ok()) return 0;
  vm::InvocationOptions options;
  options.max_steps = 20000;
  options.max_call_depth = 64;
  options.max_allocation_bytes = 64 << 20;
  for (const auto& fn : (*module)->exports()) {
    auto handle = (*context)->LookupFunction(std::string(fn.name));
    if (!handle.ok()) continue;
    std::vector<vm::Value> args;
    std::string_view arg_types, result_types;
    vm::SplitSignature(fn.signature, &arg_types, &result_types);
    for (char c : arg_types) {
      switch (c) {
        case 'i': args.push_back(vm::Value::I32(7)); break;
        case 'I': args.push_back(vm::Value::I64(7)); break;
        case 'f': args.push_back(vm::Value::F32(7.0f)); break;
        case 'F': args.push_back(vm::Value::F64(7.0)); break;
        default: args.push_back(vm::Value::FromRef(nullptr)); break;
      }
    }
    (*context)->Invoke(*handle, args, options).status().IgnoreError();
  }
  return 0;
}
