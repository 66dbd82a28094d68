#include "tools/common/program.h"

#include <cstdio>

#include "drivers/registry.h"
#include "hal/module/hal_module.h"
#include "schemas/integrity.h"
#include "tools/common/flags.h"
#include "tools/common/file_io.h"
#include "tools/common/numpy_io.h"
#include "tools/common/tensor_compare.h"
#include "tools/common/tensor_text.h"
#include "tools/common/tensor_values.h"

namespace strata::tools {

const char* const kProgramFlagsHelp =
    "  VALUE is a scalar (i32=5, i64=100, f32=2.5, f64=1e-3), a tensor\n"
    "  (2x3xf32=1 2 3 4 5 6, 2x3xf32=[[1 2 3][4 5 6]], 1000x1000xf32=0.5 fills it),\n"
    "  a NumPy file (@x.npy) or raw bytes (2x3xf32=@x.bin). Element types: f16 bf16\n"
    "  f32 f64 i1 i8 i16 i32 i64 ui8 ui16 ui32 ui64. Results print in the same syntax.\n"
    "  --device        the device to run on (default cpu-task; e.g. cpu-sync,\n"
    "                  cpu-task?threads=2; --list-devices shows them)\n"
    "  --function      may be left out when the module exports one function\n"
    "  --trusted-key   FILE.pub from compile-module --generate-sign-key: refuse\n"
    "                  modules not signed with its secret key\n";

namespace {

// Every driver of the build, and whether it can create a device here.
void ListDevices() {
  hal::DriverRegistry& registry = drivers::DefaultRegistry();
  for (const auto& [name, description] : registry.List()) {
    auto device = registry.CreateDevice(name);
    std::string state = device.ok() ? "available" : device.status().code() == StatusCode::kUnavailable
                                                        ? "unavailable: " + device.status().message()
                                                        : "failed: " + device.status().message();
    std::printf("%-10s %s\n           %s\n", name.c_str(), description.c_str(), state.c_str());
    if (!device.ok()) continue;
    const hal::DeviceInfo& info = device.value()->info();
    std::printf("           %s\n", info.description.c_str());
    for (const std::string& line : info.details) std::printf("           %s\n", line.c_str());
  }
}

}  // namespace

bool ParseProgramFlag(const std::string& arg, ProgramOptions* options) {
  std::string value;
  if (ParseFlag(arg, "module", &value)) {
    options->module_path = value;
  } else if (ParseFlag(arg, "function", &value)) {
    options->function = value;
  } else if (ParseFlag(arg, "device", &value)) {
    options->device = value;
  } else if (ParseFlag(arg, "input", &value)) {
    options->inputs.push_back(value);
  } else if (ParseFlag(arg, "trusted-key", &value)) {
    options->trusted_key_path = value;
  } else if (ParseSwitch(arg, "list-functions")) {
    options->list_functions = true;
  } else if (ParseSwitch(arg, "list-devices")) {
    options->list_devices = true;
  } else {
    return false;
  }
  return true;
}

// The module of --module, checked against --trusted-key when given.
static StatusOr<Ref<vm::BytecodeModule>> LoadModule(const ProgramOptions& options) {
  if (options.module_path.empty()) return InvalidArgumentError("missing --module=FILE.smod");
  vm::IntegrityOptions integrity;
  if (!options.trusted_key_path.empty()) {
    auto text = ReadFile(options.trusted_key_path);
    if (!text.ok()) {
      Status status = text.status();
      status.Annotate("--trusted-key: ");
      return status;
    }
    std::string_view hex(reinterpret_cast<const char*>(text->data()), text->size());
    if (!integrity::ParseHexKey(hex, integrity::kPublicKeyBytes, &integrity.trusted_public_key)) {
      return InvalidArgumentError("--trusted-key='", options.trusted_key_path, "' does not hold an Ed25519 public key: expected ",
                                  2 * integrity::kPublicKeyBytes, " hex digits (compile-module --generate-sign-key writes one)");
    }
  }
  return vm::BytecodeModule::LoadFile(options.module_path, integrity);
}

StatusOr<bool> PrintListing(const ProgramOptions& options) {
  if (options.list_devices) {
    ListDevices();
    return true;
  }
  if (!options.list_functions) return false;
  STRATA_ASSIGN_OR_RETURN(Ref<vm::BytecodeModule> module, LoadModule(options));
  for (const auto& fn : module->exports()) {
    std::printf("%s\n", runtime::DescribeFunction(fn.name, module->functions()[fn.ordinal]).c_str());
  }
  return true;
}

std::string DefaultDevice() {
  auto drivers = drivers::DefaultRegistry().List();
  for (const auto& driver : drivers) {
    if (driver.first == "cpu-task") return driver.first;
  }
  return drivers.empty() ? "cpu-task" : drivers.front().first;
}

StatusOr<std::unique_ptr<Program>> Program::Load(const ProgramOptions& options, Ref<hal::Device> device) {
  auto program = std::make_unique<Program>();
  STRATA_ASSIGN_OR_RETURN(Ref<vm::BytecodeModule> module, LoadModule(options));
  if (device) {
    program->device = std::move(device);
  } else {
    const std::string spec = options.device.empty() ? DefaultDevice() : options.device;
    STRATA_ASSIGN_OR_RETURN(program->device, drivers::DefaultRegistry().CreateDevice(spec));
  }
  STRATA_ASSIGN_OR_RETURN(program->session, runtime::Session::Create(program->device, std::move(module)));
  const runtime::Session& session = *program->session;
  std::string function = options.function;
  if (function.empty()) {
    if (session.functions().size() != 1) {
      return InvalidArgumentError("missing --function=NAME; the module exports ", session.ListFunctions());
    }
    function = session.functions().front().name;
  }
  STRATA_ASSIGN_OR_RETURN(program->call, session.CreateContext());
  program->context = program->call->context.get();
  if (function.find('.') == std::string::npos) {
    STRATA_ASSIGN_OR_RETURN(program->exported, session.FindFunction(function));
    program->function = program->call->handles[program->exported - session.functions().data()];
    program->info = program->exported->info;
    program->description = program->exported->Describe();
  } else {
    // MODULE.NAME: a function of another module of the context.
    STRATA_ASSIGN_OR_RETURN(program->function, program->context->LookupFunction(function));
    program->description = std::string(program->function.name);
  }
  vm::SplitSignature(program->function.signature, &program->arg_types, &program->result_types);
  return program;
}

StatusOr<std::vector<vm::Value>> Program::ParseInputs(std::span<const std::string> inputs) const {
  STRATA_RETURN_IF_ERROR(runtime::Session::CheckInputCount(description, arg_types, inputs.size()));
  std::vector<vm::Value> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string_view source_type =
        info && i < info->source_arg_types.size() ? info->source_arg_types[i] : std::string_view();
    auto tensor = ParseTensor(inputs[i]);
    // f32=2.5 is a scalar, unless the function says it takes a tensor<f32>.
    if (tensor.ok() && tensor->scalar && arg_types[i] == 'r' &&
        source_type == StrCat("tensor<", tensor->DescribeType(), ">")) {
      tensor->scalar = false;
    }
    auto value = tensor.ok() ? TensorToValue(*tensor, arg_types[i], *device) : tensor.status();
    if (!value.ok()) {
      Status status = value.status();
      return status.Annotate("input ", i, source_type.empty() ? "" : StrCat(" (", source_type, ")"), ": ");
    }
    args.push_back(std::move(value).value());
  }
  return args;
}

}  // namespace strata::tools
