// vm-test-runner: runs the test functions of a module compiled from a VM op
// test (.mlir), with the `check` module linked in.
//
//   vm-test-runner ops.smod                  every export named test_* with signature "_"
//   vm-test-runner ops.smod --function=NAME  just NAME (e.g. a fail_* expected to fail)
//   vm-test-runner ops.smod --device=SPEC    also link the `hal` module on a device
//                                            (e.g. cpu-sync, cpu-task?threads=2)
//
// Prints one line per test and exits non-zero if any failed.
#include <cstdio>
#include <string>

#include "drivers/registry.h"
#include "hal/module/hal_module.h"
#include "tests/vm/check_module.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"

int main(int argc, char** argv) {
  using namespace strata;
  std::string path, only, device_spec;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--function=", 0) == 0) {
      only = arg.substr(11);
    } else if (arg.rfind("--device=", 0) == 0) {
      device_spec = arg.substr(9);
    } else if (path.empty() && arg[0] != '-') {
      path = arg;
    } else {
      std::fprintf(stderr, "usage: vm-test-runner MODULE.smod [--function=NAME] [--device=SPEC]\n");
      return 2;
    }
  }
  auto module = vm::BytecodeModule::LoadFile(path);
  if (!module.ok()) {
    std::fprintf(stderr, "vm-test-runner: %s\n", module.status().ToString().c_str());
    return 1;
  }
  std::vector<Ref<vm::Module>> modules = {testing::CreateCheckModule()};
  if (!device_spec.empty()) {
    auto device = drivers::DefaultRegistry().CreateDevice(device_spec);
    auto hal_module = device.ok() ? hal::CreateHalModule(*device) : device.status();
    if (!hal_module.ok()) {
      std::fprintf(stderr, "vm-test-runner: %s\n", hal_module.status().ToString().c_str());
      return 1;
    }
    modules.push_back(*hal_module);
  }
  modules.push_back(*module);
  auto context = vm::Context::Create(modules);
  if (!context.ok()) {
    std::fprintf(stderr, "vm-test-runner: %s\n", context.status().ToString().c_str());
    return 1;
  }
  int passed = 0, failed = 0;
  vm::InvocationOptions options;
  options.max_steps = 100000000;  // a broken test must not hang the suite
  for (const auto& fn : (*module)->exports()) {
    bool selected = only.empty() ? fn.name.rfind("test_", 0) == 0 : fn.name == only;
    if (fn.signature != "_" || !selected) continue;
    std::string name(fn.name);
    std::printf("[ RUN      ] %s\n", name.c_str());
    auto handle = (*context)->LookupFunction(name);
    auto result = handle.ok() ? (*context)->Invoke(*handle, {}, options) : handle.status();
    if (result.ok()) {
      std::printf("[       OK ] %s\n", name.c_str());
      ++passed;
    } else {
      std::printf("[  FAILED  ] %s\n", name.c_str());
      std::fflush(stdout);
      std::fprintf(stderr, "%s: %s\n", name.c_str(), result.status().ToString().c_str());
      ++failed;
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  if (passed + failed == 0) {
    std::fprintf(stderr, "vm-test-runner: no test functions (exports with signature '_' named %s)\n",
                 only.empty() ? "test_*" : only.c_str());
    return 1;
  }
  return failed ? 1 : 0;
}
