// Context: a set of modules linked together, with their mutable state, ready
// to run.
//
// Creating a context resolves every import of every bytecode module against
// the other modules by "module.function" and checks the signatures; a missing
// module or function, or a signature mismatch, fails creation with a message
// naming the import and what was found instead. Each bytecode module gets its
// own globals, initialised from the module.
//
//   auto context = Context::Create({check_module, program});
//   auto fn = context->LookupFunction("loop");
//   auto results = context->Invoke(*fn, {Value::I64(100)});
//
// Thread safety: a Context runs one invocation at a time (globals and the VM
// stack are per context). Threads that run the same module concurrently each
// create their own Context over the shared, immutable Module objects.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "vm/module.h"
#include "vm/base/status.h"
#include "vm/base/trace.h"
#include "vm/value.h"

namespace strata::vm {

struct ModuleInstance;  // internal: module + globals + resolved imports
struct VMStack;         // internal: frames and register banks

struct InvocationOptions {
  // Stops the program with RESOURCE_EXHAUSTED after this many steps (branches
  // taken or not, and calls); 0 means no limit. Straight-line code between
  // steps is bounded by the function's size, so this bounds the run time.
  uint64_t max_steps = 0;
  // Stops the program with DEADLINE_EXCEEDED once this time has passed
  // (checked every 65536 steps).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Calls nested deeper than this fail with RESOURCE_EXHAUSTED.
  uint32_t max_call_depth = 1024;
  // Bytes the program may allocate during the invocation (buffer.alloc,
  // list.alloc, list.resize; counted as asked, not net of frees); beyond it
  // the program fails with RESOURCE_EXHAUSTED instead of exhausting memory.
  uint64_t max_allocation_bytes = uint64_t{1} << 34;
  // Receives an event for the invoked function and for each call into a
  // native module (vm/base/trace.h); null (the default) traces nothing.
  Tracer* tracer = nullptr;
};

struct FunctionHandle {
  ModuleInstance* instance = nullptr;
  uint32_t ordinal = 0;
  std::string_view name;
  std::string_view signature;
};

// The deadline of the invocation running on the calling thread
// (time_point::max() outside any, or when it has none). Native functions use
// it to bound what they start for the program: the hal module gives it to the
// device work it submits and to its waits.
std::chrono::steady_clock::time_point CurrentInvocationDeadline();

class Context {
 public:
  // Links `modules`; their names must be unique.
  static StatusOr<std::unique_ptr<Context>> Create(std::vector<Ref<Module>> modules);
  ~Context();

  // "fn" looks in the last bytecode module (the program); "module.fn" in the
  // named module. A miss lists the functions that exist.
  StatusOr<FunctionHandle> LookupFunction(std::string_view name) const;

  // Checks `args` against the signature (count and types), runs the function
  // and returns its results.
  StatusOr<std::vector<Value>> Invoke(const FunctionHandle& function, std::span<const Value> args,
                                      const InvocationOptions& options = {});

  const std::vector<Ref<Module>>& modules() const { return modules_; }

 private:
  Context() = default;
  Status Link();

  std::vector<Ref<Module>> modules_;
  std::vector<std::unique_ptr<ModuleInstance>> instances_;
  std::unique_ptr<VMStack> stack_;
};

}  // namespace strata::vm
