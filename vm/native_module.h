// NativeModule: C++ functions that bytecode can import.
//
// A native module has a name ("hal", "check") and functions, each with a
// signature string and a callable. Bytecode imports them as
// "module.function"; the Context checks at creation that every import exists
// with exactly the signature the bytecode expects.
//
//   auto m = NativeModule::Create("check");
//   m->AddFunction("expect_eq_i64", "II_", [](CallArgs args, CallResults) {
//     if (args[0].i64() != args[1].i64()) return InvalidArgumentError(...);
//     return OkStatus();
//   });
//
// The callable receives arguments already type-checked against the signature
// and must set every result to a value of the declared type (the VM checks
// and reports a native function that does not). Native functions may be
// called from several threads at once when several contexts share the module;
// they must be thread-safe or document otherwise.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "vm/module.h"
#include "vm/base/status.h"
#include "vm/value.h"

namespace strata::vm {

using CallArgs = std::span<const Value>;
using CallResults = std::span<Value>;
using NativeFunction = std::function<Status(CallArgs args, CallResults results)>;

class NativeModule final : public Module {
 public:
  static Ref<NativeModule> Create(std::string name) {
    return Ref<NativeModule>::Adopt(new NativeModule(std::move(name)));
  }

  // Fails on a malformed signature or a duplicate name.
  Status AddFunction(std::string name, std::string signature, NativeFunction fn);

  std::string_view name() const override { return name_; }
  std::vector<ExportedFunction> exports() const override;

  struct Function {
    std::string name;
    std::string signature;
    std::string arg_types;     // signature chars before '_'
    std::string result_types;  // after '_'
    NativeFunction fn;
  };
  const Function& function(uint32_t ordinal) const { return functions_[ordinal]; }

 private:
  explicit NativeModule(std::string name) : Module(Kind::kNative), name_(std::move(name)) {}

  std::string name_;
  std::vector<Function> functions_;
};

}  // namespace strata::vm
