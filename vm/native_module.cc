#include "vm/native_module.h"

namespace strata::vm {

Status NativeModule::AddFunction(std::string name, std::string signature, NativeFunction fn) {
  std::string_view args, results;
  if (!SplitSignature(signature, &args, &results)) {
    return InvalidArgumentError("native function '", name_, ".", name, "': malformed signature '",
                                signature, "' (expected argument chars, '_', result chars from iIfFr)");
  }
  for (const Function& existing : functions_) {
    if (existing.name == name) {
      return InvalidArgumentError("native module '", name_, "' already has a function '", name, "'");
    }
  }
  functions_.push_back(Function{std::move(name), signature, std::string(args), std::string(results),
                                std::move(fn)});
  return OkStatus();
}

std::vector<ExportedFunction> NativeModule::exports() const {
  std::vector<ExportedFunction> out;
  out.reserve(functions_.size());
  for (uint32_t i = 0; i < functions_.size(); ++i) {
    out.push_back({functions_[i].name, functions_[i].signature, i});
  }
  return out;
}

}  // namespace strata::vm
