// Modules: the units a Context links together.
//
// A Module offers functions by name with signatures (see module.fbs for the
// signature syntax). Two kinds exist:
//   - BytecodeModule (bytecode_module.h): a loaded .smod file whose functions
//     the interpreter runs and which may import functions of other modules;
//   - NativeModule (native_module.h): C++ functions, such as the `hal` module
//     through which programs reach devices, or `check` in tests.
//
// Modules are immutable after creation and ref-counted; one module may be
// shared by many contexts on many threads. Per-context mutable state (globals)
// lives in the Context.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/base/ref.h"

namespace strata::vm {

struct ExportedFunction {
  std::string_view name;
  std::string_view signature;  // "iI_f"
  uint32_t ordinal;            // module-specific function ordinal
};

class Module : public RefObject {
 public:
  static const RefTypeInfo kType;
  enum class Kind { kBytecode, kNative };

  Kind kind() const { return kind_; }
  virtual std::string_view name() const = 0;
  // Functions other modules may import and hosts may call.
  virtual std::vector<ExportedFunction> exports() const = 0;
  std::optional<ExportedFunction> LookupExport(std::string_view name) const;

 protected:
  explicit Module(Kind kind) : RefObject(&kType), kind_(kind) {}

 private:
  Kind kind_;
};

// Splits a signature "iI_f" into argument and result parts; false if it is
// malformed (no '_' or an unknown type character).
bool SplitSignature(std::string_view signature, std::string_view* args, std::string_view* results);

}  // namespace strata::vm
