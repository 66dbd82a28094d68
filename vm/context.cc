#include "vm/context.h"

#include <cstring>

#include "vm/module_instance.h"

namespace strata::vm {

static std::string ListExports(const Module& module) {
  std::string out;
  for (const ExportedFunction& fn : module.exports()) {
    out += out.empty() ? "" : ", ";
    out += StrCat(fn.name, "(", fn.signature, ")");
  }
  return out.empty() ? "none" : out;
}

StatusOr<std::unique_ptr<Context>> Context::Create(std::vector<Ref<Module>> modules) {
  std::unique_ptr<Context> context(new Context());
  context->modules_ = std::move(modules);
  STRATA_RETURN_IF_ERROR(context->Link());
  return context;
}

Context::~Context() = default;

Status Context::Link() {
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (!modules_[i]) return InvalidArgumentError("module ", i, " is null");
    for (size_t j = 0; j < i; ++j) {
      if (modules_[j]->name() == modules_[i]->name()) {
        return InvalidArgumentError("two modules are named '", modules_[i]->name(),
                                    "'; module names in a context must be unique");
      }
    }
    auto instance = std::make_unique<ModuleInstance>();
    instance->module = modules_[i];
    if (modules_[i]->kind() == Module::Kind::kBytecode) {
      instance->bytecode = static_cast<BytecodeModule*>(modules_[i].get());
      uint32_t bytes = instance->bytecode->global_scalar_bytes();
      instance->globals.reset(new uint64_t[(bytes + 7) / 8]());
      auto init = instance->bytecode->global_scalar_init();
      if (!init.empty()) std::memcpy(instance->globals.get(), init.data(), init.size());
      instance->ref_globals.assign(instance->bytecode->global_ref_count(), nullptr);
      instance->globals_bytes = reinterpret_cast<uint8_t*>(instance->globals.get());
      instance->functions = instance->bytecode->functions().data();
    } else {
      instance->native = static_cast<NativeModule*>(modules_[i].get());
    }
    instances_.push_back(std::move(instance));
  }

  for (auto& instance : instances_) {
    if (!instance->bytecode) continue;
    for (const ImportInfo& imp : instance->bytecode->imports()) {
      ModuleInstance* target = nullptr;
      for (auto& candidate : instances_) {
        if (candidate->module->name() == imp.module_name) target = candidate.get();
      }
      const std::string full = STRATA_FOR_MESSAGE(StrCat(imp.module_name, ".", imp.function_name));
      if (!target) {
        return NotFoundError("module '", instance->module->name(), "' imports '", full,
                             "' but no module named '", imp.module_name, "' is in the context (modules: ",
                             JoinNames(modules_, [](const auto& m) { return m->name(); }), ")");
      }
      auto fn = target->module->LookupExport(imp.function_name);
      if (!fn) {
        return NotFoundError("module '", instance->module->name(), "' imports '", full, "' but module '",
                             imp.module_name, "' has no such function (it has: ",
                             ListExports(*target->module), ")");
      }
      if (fn->signature != imp.signature) {
        return InvalidArgumentError("import '", full, "' of module '", instance->module->name(),
                                    "': signature mismatch, the module expects '", imp.signature,
                                    "' but '", full, "' has '", fn->signature, "'");
      }
      instance->imports.push_back({target, fn->ordinal});
    }
  }
  return OkStatus();
}

StatusOr<FunctionHandle> Context::LookupFunction(std::string_view name) const {
  ModuleInstance* instance = nullptr;
  std::string_view function_name = name;
  size_t dot = name.find('.');
  if (dot != std::string_view::npos) {
    std::string_view module_name = name.substr(0, dot);
    for (auto& candidate : instances_) {
      if (candidate->module->name() == module_name) instance = candidate.get();
    }
    if (instance) function_name = name.substr(dot + 1);
  }
  if (!instance) {
    for (auto& candidate : instances_) {
      if (candidate->bytecode) instance = candidate.get();
    }
  }
  if (!instance) return NotFoundError("no bytecode module in the context to look up '", name, "' in");
  auto fn = instance->module->LookupExport(function_name);
  if (!fn) {
    return NotFoundError("function '", function_name, "' not found in module '",
                         instance->module->name(), "'; available: ", ListExports(*instance->module));
  }
  return FunctionHandle{instance, fn->ordinal, fn->name, fn->signature};
}

namespace {
thread_local std::chrono::steady_clock::time_point current_deadline = std::chrono::steady_clock::time_point::max();
}  // namespace

std::chrono::steady_clock::time_point CurrentInvocationDeadline() { return current_deadline; }

StatusOr<std::vector<Value>> Context::Invoke(const FunctionHandle& function, std::span<const Value> args,
                                             const InvocationOptions& options) {
  if (!function.instance) return InvalidArgumentError("invoking a null function handle");
  std::string_view arg_types, result_types;
  SplitSignature(function.signature, &arg_types, &result_types);
  if (args.size() != arg_types.size()) {
    return InvalidArgumentError("function '", function.name, "' (signature ", function.signature,
                                ") expects ", arg_types.size(), " argument", arg_types.size() == 1 ? "" : "s",
                                ", got ", args.size());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    ValueType expected = ValueTypeFromSignatureChar(arg_types[i]);
    if (args[i].type() != expected) {
      return InvalidArgumentError("function '", function.name, "' argument ", i, ": expected ",
                                  ValueTypeName(expected), ", got ", ValueTypeName(args[i].type()));
    }
  }
  std::vector<Value> results;
  if (function.instance->native) {
    STRATA_RETURN_IF_ERROR(CallNative(function.instance->native->function(function.ordinal), args, &results));
    return results;
  }
  if (!stack_) stack_ = std::make_unique<VMStack>();
  Tracer* const tracer = ActiveTracer(options.tracer);
  const uint64_t trace_begin = tracer ? Tracer::Now() : 0;
  // Nested invocations (a native function calling back into a context) keep
  // the earlier of the two deadlines.
  const auto outer_deadline = current_deadline;
  current_deadline = std::min(outer_deadline, options.deadline);
  Status status = Execute(*stack_, function.instance, function.ordinal, args, &results, options);
  current_deadline = outer_deadline;
  if (tracer) {
    const std::string name = StrCat(function.instance->module->name(), ".", function.name);
    tracer->Record({"vm", name, trace_begin, Tracer::Now(), {}});
  }
  STRATA_RETURN_IF_ERROR(status);
  return results;
}

Status CallNative(const NativeModule::Function& fn, std::span<const Value> args, std::vector<Value>* results) {
  results->assign(fn.result_types.size(), Value());
  STRATA_RETURN_IF_ERROR(fn.fn(args, *results));
  for (size_t i = 0; i < results->size(); ++i) {
    ValueType expected = ValueTypeFromSignatureChar(fn.result_types[i]);
    if ((*results)[i].type() != expected) {
      return InternalError("native function '", fn.name, "' set result ", i, " to ",
                           ValueTypeName((*results)[i].type()), ", its signature '", fn.signature,
                           "' declares ", ValueTypeName(expected));
    }
  }
  return OkStatus();
}

}  // namespace strata::vm
