// run-module: runs one function of a module and prints its results.
//
//   run-module --module=loop.smod --function=loop --input=i64=100
//   i64=5050
//
// Inputs and results use the same TYPE=VALUE syntax, so a printed result can
// be pasted back as an input. Every failure prints one clear message (with the
// VM backtrace when the program failed) and exits non-zero.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/common/tool_main.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"
#include "vm/value.h"

namespace strata::tools {
namespace {

using vm::Value;

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: run-module --module=FILE.smod --function=NAME [--input=TYPE=VALUE ...]\n"
               "                  [--max-steps=N] [--timeout-ms=N] [--list-functions]\n"
               "  TYPE is i32, i64, f32 or f64; results print in the same syntax.\n"
               "  --max-steps stops a program after N branches and calls (0 = no limit).\n");
}

StatusOr<Value> ParseScalar(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos) {
    return InvalidArgumentError("input '", text, "': expected TYPE=VALUE, e.g. i64=100 or f32=2.5");
  }
  std::string type = text.substr(0, eq);
  std::string literal = text.substr(eq + 1);
  const char* begin = literal.c_str();
  char* end = nullptr;
  errno = 0;
  auto bad = [&](const char* what) {
    return InvalidArgumentError("input '", text, "': cannot parse '", literal, "' as ", type, what);
  };
  if (type == "i32" || type == "i64") {
    long long v = std::strtoll(begin, &end, 0);
    if (literal.empty() || *end || errno == ERANGE) return bad("");
    if (type == "i32") {
      if (v < INT32_MIN || v > INT32_MAX) return bad(" (out of range for i32)");
      return Value::I32(static_cast<int32_t>(v));
    }
    return Value::I64(v);
  }
  if (type == "f32" || type == "f64") {
    double v = std::strtod(begin, &end);
    if (literal.empty() || *end) return bad("");
    return type == "f32" ? Value::F32(static_cast<float>(v)) : Value::F64(v);
  }
  return InvalidArgumentError("input '", text, "': unknown type '", type,
                              "'; expected one of i32, i64, f32, f64");
}

bool ParseFlag(const std::string& arg, const char* name, std::string* value) {
  std::string prefix = std::string("--") + name + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  *value = arg.substr(prefix.size());
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

Status Run(int argc, char** argv) {
  std::string module_path, function;
  std::vector<std::string> inputs;
  vm::InvocationOptions options;
  bool list_functions = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      PrintUsage(stdout);
      return OkStatus();
    } else if (ParseFlag(arg, "module", &value)) {
      module_path = value;
    } else if (ParseFlag(arg, "function", &value)) {
      function = value;
    } else if (ParseFlag(arg, "input", &value)) {
      inputs.push_back(value);
    } else if (ParseFlag(arg, "max-steps", &value)) {
      STRATA_ASSIGN_OR_RETURN(options.max_steps, ParseCount("max-steps", value));
    } else if (ParseFlag(arg, "timeout-ms", &value)) {
      STRATA_ASSIGN_OR_RETURN(uint64_t ms, ParseCount("timeout-ms", value));
      options.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    } else if (arg == "--list-functions") {
      list_functions = true;
    } else {
      PrintUsage(stderr);
      return InvalidArgumentError("unknown argument '", arg, "'");
    }
  }
  if (module_path.empty()) return InvalidArgumentError("missing --module=FILE.smod");

  STRATA_ASSIGN_OR_RETURN(auto module, vm::BytecodeModule::LoadFile(module_path));
  if (list_functions) {
    for (const auto& fn : module->exports()) std::printf("%.*s(%.*s)\n", int(fn.name.size()), fn.name.data(),
                                                          int(fn.signature.size()), fn.signature.data());
    return OkStatus();
  }
  if (function.empty()) return InvalidArgumentError("missing --function=NAME");

  std::vector<Value> args;
  for (const std::string& input : inputs) {
    STRATA_ASSIGN_OR_RETURN(Value v, ParseScalar(input));
    args.push_back(std::move(v));
  }
  STRATA_ASSIGN_OR_RETURN(auto context, vm::Context::Create({module}));
  STRATA_ASSIGN_OR_RETURN(auto handle, context->LookupFunction(function));
  STRATA_ASSIGN_OR_RETURN(auto results, context->Invoke(handle, args, options));
  for (const Value& result : results) std::printf("%s\n", result.ToString().c_str());
  return OkStatus();
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  return strata::tools::ToolMain("run-module", strata::tools::Run, argc, argv);
}
