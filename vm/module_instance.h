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
    uint32_t ordinal;
    const uint8_t* pc;  // a caller's pc rests on its call instruction
    uint64_t* scalars;
    RefObject** refs;
  };
  static constexpr size_t kScalarSlots = 1 << 16;
  static constexpr size_t kRefSlots = 1 << 14;
  std::unique_ptr<uint64_t[]> scalars{new uint64_t[kScalarSlots]};
  std::unique_ptr<RefObject*[]> refs{new RefObject*[kRefSlots]};
  std::vector<Frame> frames;
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
