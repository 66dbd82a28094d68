#include "vm/module.h"

#include "schemas/bytecode.h"

namespace strata::vm {

const RefTypeInfo Module::kType = {"vm.module"};

std::optional<ExportedFunction> Module::LookupExport(std::string_view name) const {
  for (const ExportedFunction& fn : exports()) {
    if (fn.name == name) return fn;
  }
  return std::nullopt;
}

bool SplitSignature(std::string_view signature, std::string_view* args, std::string_view* results) {
  size_t split = signature.find('_');
  if (split == std::string_view::npos) return false;
  for (size_t i = 0; i < signature.size(); ++i) {
    if (i != split && !bytecode::IsSignatureChar(signature[i])) return false;
  }
  *args = signature.substr(0, split);
  *results = signature.substr(split + 1);
  return true;
}

}  // namespace strata::vm
