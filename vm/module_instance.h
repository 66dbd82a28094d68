// Internal to the VM: a module linked into a context, and the interpreter's
// entry point. Not part of the public API.
#pragma once

#include <memory>
#include <vector>

#include "vm/bytecode_module.h"
#include "vm/context.h"
#include "vm/native_module.h"

namespace strata::vm {

struct ModuleInstance;

// Where a call.import goes: a function of another linked module.
struct ImportTarget {
  ModuleInstance* instance;
  uint32_t ordinal;
};

struct ModuleInstance {
  Ref<Module> module;
  BytecodeModule* bytecode = nullptr;  // exactly one of these two is set
  NativeModule* native = nullptr;
  std::unique_ptr<uint64_t[]> globals;  // scalar globals, 8-byte aligned
  // Views the interpreter reads directly.
  uint8_t* globals_bytes = nullptr;
  const FunctionInfo* functions = nullptr;
  std::vector<RefObject*> ref_globals;  // owned references
  std::vector<ImportTarget> imports;    // parallel to bytecode->imports()

  ~ModuleInstance() {
    for (RefObject* ref : ref_globals) ReleaseRef(ref);
  }
};

// Frames and register banks of one context, reused across invocations.
struct VMStack {
  struct Frame {
    ModuleInstance* instance;
    const FunctionInfo* fn;
    const uint8_t* pc;       // a caller's pc rests on its call instruction
    const uint8_t* results;  // a caller's: the result list of that call
    uint64_t* scalars;
    RefObject** refs;
  };
  // Each bank is large enough for the biggest possible frame plus room for
  // deep recursion; exhausting it is an error, not a crash.
  static constexpr size_t kScalarSlots = 1 << 17;
  static constexpr size_t kRefSlots = 1 << 16;
  std::unique_ptr<uint64_t[]> scalars{new uint64_t[kScalarSlots]};
  std::unique_ptr<RefObject*[]> refs{new RefObject*[kRefSlots]};
  std::vector<Frame> frames;  // sized to the deepest max_call_depth seen
  std::vector<Value> native_args, native_results;
};

// Runs a bytecode function. `args` were already checked against its signature.
Status Execute(VMStack& stack, ModuleInstance* instance, uint32_t ordinal, std::span<const Value> args,
               std::vector<Value>* results, const InvocationOptions& options);

// Calls a native function with signature-checked arguments and checks the
// types of what it returns.
Status CallNative(const NativeModule::Function& fn, std::span<const Value> args,
                  std::vector<Value>* results);

}  // namespace strata::vm
