// vm-bench: times one exported function of a module in-process, the way the
// Lua scripts in lua/ time themselves, so the two compare like for like.
//
//   vm-bench MODULE.smod FUNCTION TYPE=VALUE REPEATS
//
// Prints "result seconds" per repetition (load and link are not timed).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "vm/bytecode_module.h"
#include "vm/context.h"

int main(int argc, char** argv) {
  using namespace strata;
  if (argc != 5) {
    std::fprintf(stderr, "usage: vm-bench MODULE.smod FUNCTION (i32|i64)=VALUE REPEATS\n");
    return 2;
  }
  std::string input = argv[3];
  vm::Value arg;
  if (input.rfind("i32=", 0) == 0) {
    arg = vm::Value::I32(std::atoi(input.c_str() + 4));
  } else if (input.rfind("i64=", 0) == 0) {
    arg = vm::Value::I64(std::atoll(input.c_str() + 4));
  } else {
    std::fprintf(stderr, "vm-bench: input must be i32=N or i64=N, got '%s'\n", input.c_str());
    return 2;
  }
  int repeats = std::atoi(argv[4]);
  auto module = vm::BytecodeModule::LoadFile(argv[1]);
  if (!module.ok()) {
    std::fprintf(stderr, "vm-bench: %s\n", module.status().ToString().c_str());
    return 1;
  }
  auto context = vm::Context::Create({*module});
  auto fn = context.ok() ? (*context)->LookupFunction(argv[2]) : context.status();
  if (!fn.ok()) {
    std::fprintf(stderr, "vm-bench: %s\n", fn.status().ToString().c_str());
    return 1;
  }
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto results = (*context)->Invoke(*fn, {&arg, 1});
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!results.ok()) {
      std::fprintf(stderr, "vm-bench: %s\n", results.status().ToString().c_str());
      return 1;
    }
    std::printf("%s %.9f\n", results->at(0).ToString().c_str(), seconds);
  }
  return 0;
}
