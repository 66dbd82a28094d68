// run-module: runs one function of a module on a device and prints its
// results.
//
//   run-module --module=mnist.smod --function=main --input=@image.npy
//   1x10xf32=[[-2.1 0.3 ... ]]
//   run-module --module=loop.smod --function=loop --input=i64=100
//   i64=5050
//
// The program runs in a context of two modules, the `hal` module on the
// device named by --device and the program itself. Inputs, printed results
// and expected outputs share one syntax (tools/common/tensor_io.h), so a
// printed result can be pasted back as an input; tensors travel as buffer
// views. A bare TYPE=VALUE is a scalar, except for an argument whose recorded
// source type is that 0-d tensor (f32=2.5 for a tensor<f32>). Flags also
// accept IREE's spelling with underscores (--expected_output). Every failure
// prints one clear message (with the VM backtrace when the program failed)
// and exits non-zero.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "drivers/registry.h"
#include "hal/hal_module.h"
#include "tools/common/tensor_io.h"
#include "tools/common/tool_main.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"
#include "vm/value.h"

namespace strata::tools {
namespace {

using vm::Value;

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: run-module --module=FILE.smod [--function=NAME] [--device=SPEC]\n"
               "                  [--input=VALUE ...] [--output=@FILE.npy ...]\n"
               "                  [--expected-output=VALUE ...] [--rtol=X] [--atol=X]\n"
               "                  [--print-max-elements=N] [--max-steps=N] [--timeout-ms=N]\n"
               "       run-module --module=FILE.smod --list-functions\n"
               "       run-module --list-devices\n"
               "\n"
               "  VALUE is a scalar (i32=5, i64=100, f32=2.5, f64=1e-3), a tensor\n"
               "  (2x3xf32=1 2 3 4 5 6, 2x3xf32=[[1 2 3][4 5 6]], 1000x1000xf32=0.5 fills it),\n"
               "  a NumPy file (@x.npy) or raw bytes (2x3xf32=@x.bin). Element types: f16 bf16\n"
               "  f32 f64 i1 i8 i16 i32 i64 ui8 ui16 ui32 ui64. Results print in the same syntax.\n"
               "  --device        the device to run on (default cpu-task; e.g. cpu-sync,\n"
               "                  cpu-task?threads=2; --list-devices shows them)\n"
               "  --function      may be left out when the module exports one function\n"
               "  --output        one per result, in order: @FILE.npy writes a NumPy file, @FILE\n"
               "                  raw bytes, an empty value skips the result (bf16 is saved as <u2)\n"
               "  --expected-output  one per result, in order, or (ignore); floats match within\n"
               "                  atol + rtol * |expected| (defaults 1e-6, 1e-5), integers exactly\n"
               "  --print-max-elements  elide printed tensors larger than this (default 1024,\n"
               "                  0 prints everything)\n"
               "  --max-steps     stops a program after N branches and calls (0 = no limit)\n");
}

// "--name=value"; '_' in the name reads as '-' (IREE's --expected_output).
bool ParseFlag(const std::string& arg, const char* name, std::string* value) {
  size_t eq = arg.find('=');
  if (arg.rfind("--", 0) != 0 || eq == std::string::npos) return false;
  std::string flag = arg.substr(2, eq - 2);
  for (char& c : flag) c = c == '_' ? '-' : c;
  if (flag != name) return false;
  *value = arg.substr(eq + 1);
  return true;
}

StatusOr<uint64_t> ParseCount(const char* flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || text[0] == '-') {
    return InvalidArgumentError("--", flag, "='", text, "': expected a non-negative integer");
  }
  return static_cast<uint64_t>(v);
}

StatusOr<double> ParseTolerance(const char* flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v) || v < 0) {
    return InvalidArgumentError("--", flag, "='", text, "': expected a non-negative number");
  }
  return v;
}

std::string Times(size_t n) { return n == 1 ? std::string("once") : StrCat(n, " times"); }

// "i64, f32" from signature characters, or the source types when recorded.
std::string DescribeTypes(std::string_view vm_types, const std::vector<std::string_view>& source_types) {
  std::string out;
  if (!source_types.empty()) {
    for (std::string_view type : source_types) out += StrCat(out.empty() ? "" : ", ", type);
    return out;
  }
  for (char c : vm_types) {
    vm::ValueType type = vm::ValueTypeFromSignatureChar(c);
    out += StrCat(out.empty() ? "" : ", ", vm::ValueTypeName(type));
  }
  return out;
}

// "main(tensor<1x784xf32>) -> (tensor<1x10xf32>)", "scale(i64, f32) -> (i64, f32)".
std::string DescribeFunction(std::string_view name, const vm::FunctionInfo& fn) {
  return StrCat(name, "(", DescribeTypes(fn.arg_types, fn.source_arg_types), ") -> (",
                DescribeTypes(fn.result_types, fn.source_result_types), ")");
}

std::string ListFunctions(const vm::BytecodeModule& module) {
  std::string out;
  for (const auto& fn : module.exports()) {
    out += StrCat(out.empty() ? "" : ", ", DescribeFunction(fn.name, module.functions()[fn.ordinal]));
  }
  return out.empty() ? "none" : out;
}

// Every driver of the build, and whether it can create a device here.
void ListDevices() {
  hal::DriverRegistry& registry = drivers::DefaultRegistry();
  for (const auto& [name, description] : registry.List()) {
    auto device = registry.CreateDevice(name);
    std::string state = device.ok() ? "available" : device.status().code() == StatusCode::kUnavailable
                                                        ? "unavailable: " + device.status().message()
                                                        : "failed: " + device.status().message();
    std::printf("%-10s %s\n           %s\n", name.c_str(), description.c_str(), state.c_str());
  }
}

// cpu-task where the build has it, else the first driver registered.
std::string DefaultDevice() {
  auto drivers = drivers::DefaultRegistry().List();
  for (const auto& driver : drivers) {
    if (driver.first == "cpu-task") return driver.first;
  }
  return drivers.empty() ? "cpu-task" : drivers.front().first;
}

struct Options {
  std::string module_path, function, device;
  std::vector<std::string> inputs, outputs, expected_outputs;
  Tolerance tolerance;
  PrintOptions print;
  vm::InvocationOptions invocation;
  bool list_functions = false, list_devices = false;
};

StatusOr<bool> ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      PrintUsage(stdout);
      return false;
    } else if (ParseFlag(arg, "module", &value)) {
      options->module_path = value;
    } else if (ParseFlag(arg, "function", &value)) {
      options->function = value;
    } else if (ParseFlag(arg, "device", &value)) {
      options->device = value;
    } else if (ParseFlag(arg, "input", &value)) {
      options->inputs.push_back(value);
    } else if (ParseFlag(arg, "output", &value)) {
      if (!value.empty() && (value[0] != '@' || value.size() == 1)) {
        return InvalidArgumentError("--output='", value, "': expected @FILE.npy, @FILE or nothing");
      }
      options->outputs.push_back(value);
    } else if (ParseFlag(arg, "expected-output", &value)) {
      options->expected_outputs.push_back(value);
    } else if (ParseFlag(arg, "rtol", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->tolerance.rtol, ParseTolerance("rtol", value));
    } else if (ParseFlag(arg, "atol", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->tolerance.atol, ParseTolerance("atol", value));
    } else if (ParseFlag(arg, "print-max-elements", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->print.max_elements, ParseCount("print-max-elements", value));
    } else if (ParseFlag(arg, "max-steps", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->invocation.max_steps, ParseCount("max-steps", value));
    } else if (ParseFlag(arg, "timeout-ms", &value)) {
      STRATA_ASSIGN_OR_RETURN(uint64_t ms, ParseCount("timeout-ms", value));
      options->invocation.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    } else if (arg == "--list-functions" || arg == "--list_functions") {
      options->list_functions = true;
    } else if (arg == "--list-devices" || arg == "--list_devices") {
      options->list_devices = true;
    } else {
      PrintUsage(stderr);
      return InvalidArgumentError("unknown argument '", arg, "'");
    }
  }
  return true;
}

Status Run(int argc, char** argv) {
  Options options;
  STRATA_ASSIGN_OR_RETURN(bool run, ParseOptions(argc, argv, &options));
  if (!run) return OkStatus();
  if (options.list_devices) {
    ListDevices();
    return OkStatus();
  }
  if (options.module_path.empty()) return InvalidArgumentError("missing --module=FILE.smod");

  STRATA_ASSIGN_OR_RETURN(vm::Ref<vm::BytecodeModule> module, vm::BytecodeModule::LoadFile(options.module_path));
  if (options.list_functions) {
    for (const auto& fn : module->exports()) {
      std::printf("%s\n", DescribeFunction(fn.name, module->functions()[fn.ordinal]).c_str());
    }
    return OkStatus();
  }
  if (options.function.empty()) {
    if (module->exports().size() != 1) {
      return InvalidArgumentError("missing --function=NAME; the module exports ", ListFunctions(*module));
    }
    options.function = std::string(module->exports().front().name);
  }
  if (options.function.find('.') == std::string::npos && !module->LookupExport(options.function)) {
    return NotFoundError("function '", options.function, "' not found in module '", module->name(),
                         "'; available: ", ListFunctions(*module));
  }

  if (options.device.empty()) options.device = DefaultDevice();
  STRATA_ASSIGN_OR_RETURN(vm::Ref<hal::Device> device, drivers::DefaultRegistry().CreateDevice(options.device));
  STRATA_ASSIGN_OR_RETURN(vm::Ref<vm::NativeModule> hal_module, hal::CreateHalModule(device, {module}));
  STRATA_ASSIGN_OR_RETURN(auto context, vm::Context::Create({hal_module, module}));
  STRATA_ASSIGN_OR_RETURN(vm::FunctionHandle handle, context->LookupFunction(options.function));
  std::string_view arg_types, result_types;
  vm::SplitSignature(handle.signature, &arg_types, &result_types);
  const vm::FunctionInfo* info = nullptr;
  if (auto fn = module->LookupExport(handle.name); fn && fn->signature == handle.signature) {
    info = &module->functions()[fn->ordinal];
  }
  const std::string described = info ? DescribeFunction(handle.name, *info) : std::string(handle.name);

  // Everything that can be checked before running is.
  if (options.inputs.size() != arg_types.size()) {
    return InvalidArgumentError("function ", described, " expects ", arg_types.size(), " input",
                                arg_types.size() == 1 ? "" : "s", ", got ", options.inputs.size());
  }
  if (options.outputs.size() > result_types.size()) {
    return InvalidArgumentError("--output is given ", Times(options.outputs.size()), ", but function ", described,
                                " returns ", result_types.size(), " result", result_types.size() == 1 ? "" : "s");
  }
  if (!options.expected_outputs.empty() && options.expected_outputs.size() != result_types.size()) {
    return InvalidArgumentError("--expected-output is given ", Times(options.expected_outputs.size()),
                                ", but function ", described, " returns ", result_types.size(), " result",
                                result_types.size() == 1 ? "" : "s", " (give one per result, or (ignore))");
  }
  std::vector<std::optional<Tensor>> expected(options.expected_outputs.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (options.expected_outputs[i] == "(ignore)") continue;
    auto tensor = ParseTensor(options.expected_outputs[i]);
    if (!tensor.ok()) {
      Status status = tensor.status();
      return status.Annotate(StrCat("expected output ", i, ": "));
    }
    expected[i] = std::move(tensor).value();
  }
  std::vector<Value> args;
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string_view source_type =
        info && i < info->source_arg_types.size() ? info->source_arg_types[i] : std::string_view();
    auto tensor = ParseTensor(options.inputs[i]);
    // f32=2.5 is a scalar, unless the function says it takes a tensor<f32>.
    if (tensor.ok() && tensor->scalar && arg_types[i] == 'r' &&
        source_type == StrCat("tensor<", tensor->DescribeType(), ">")) {
      tensor->scalar = false;
    }
    auto value = tensor.ok() ? TensorToValue(*tensor, arg_types[i], *device->allocator()) : tensor.status();
    if (!value.ok()) {
      Status status = value.status();
      return status.Annotate(StrCat("input ", i, source_type.empty() ? "" : StrCat(" (", source_type, ")"), ": "));
    }
    args.push_back(std::move(value).value());
  }

  STRATA_ASSIGN_OR_RETURN(std::vector<Value> results, context->Invoke(handle, args, options.invocation));

  std::vector<std::optional<Tensor>> tensors(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    auto tensor = TensorFromValue(results[i], *device);
    if (tensor.ok()) {
      std::printf("%s\n", FormatTensor(*tensor, options.print).c_str());
      tensors[i] = std::move(tensor).value();
    } else if (results[i].type() == vm::ValueType::kRef && !vm::RefCast<hal::BufferView>(results[i].ref().get())) {
      std::printf("%s\n", results[i].ToString().c_str());  // a ref that is no tensor
    } else {
      Status status = tensor.status();
      return status.Annotate(StrCat("result ", i, ": "));
    }
  }
  std::fflush(stdout);

  for (size_t i = 0; i < options.outputs.size(); ++i) {
    if (options.outputs[i].empty()) continue;
    const std::string path = options.outputs[i].substr(1);
    if (!tensors[i]) {
      return InvalidArgumentError("--output=@", path, ": result ", i, " is ", results[i].ToString(),
                                  ", not a tensor or scalar");
    }
    const bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    STRATA_RETURN_IF_ERROR(npy ? WriteNpyFile(path, *tensors[i]) : WriteFile(path, tensors[i]->bytes));
  }

  std::string mismatches;
  size_t mismatch_count = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!expected[i]) continue;
    Comparison comparison;
    if (tensors[i]) {
      comparison = CompareTensors(*expected[i], *tensors[i], options.tolerance);
    } else {
      comparison.message = StrCat("expected ", expected[i]->DescribeType(), ", got ", results[i].ToString());
    }
    if (comparison.match) {
      std::printf("expected output %zu: match (%llu element%s, max abs diff %.2g)\n", i,
                  static_cast<unsigned long long>(comparison.element_count),
                  comparison.element_count == 1 ? "" : "s", comparison.max_abs_diff);
    } else {
      mismatches += StrCat(mismatches.empty() ? "" : "\n", "expected output ", i, ": ", comparison.message);
      ++mismatch_count;
    }
  }
  if (mismatch_count == 1) return InvalidArgumentError(mismatches);
  if (mismatch_count > 1) {
    return InvalidArgumentError(mismatch_count, " of ", expected.size(), " expected outputs differ:\n", mismatches);
  }
  return OkStatus();
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  return strata::tools::ToolMain("run-module", strata::tools::Run, argc, argv);
}
