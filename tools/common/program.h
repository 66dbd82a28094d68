// program: what run-module and benchmark-module share — the flags that name
// a function of a module, the device to call it on and its inputs, and
// turning them into something to call.
//
//   --module=FILE.smod   the program
//   --function=NAME      may be left out when the module exports one function;
//                        MODULE.NAME names a function of another module of
//                        the context (the hal module: hal.device.query_i64)
//   --device=SPEC        a driver with options (default cpu-task where the
//                        build has it, e.g. cpu-sync, cpu-task?threads=2)
//   --input=VALUE        one per argument, in the syntax of tensor_text.h
//   --list-functions     prints the module's exports with their types
//   --list-devices       prints every driver of the build, whether it can
//                        create a device here and, if so, the device with
//                        its memory, limits and features
//
// A Program is a session (drivers/runtime/session.h: the module loaded in
// place and verified, a device, the `hal` module on that device, as the C API
// assembles them) and a context of it with the function resolved. Every
// failure names what was expected and what was found: an unknown function
// lists those that exist, a wrong number of inputs names the function with
// its types. A tensor of the wrong shape is left to the program's own check
// (hal.buffer_view.assert), whose error carries the backtrace to the line of
// the model; the C API checks shapes before the call instead
// (Session::CheckTensorInput), as an application has no use for a backtrace.
//
// Thread safety: a Program is one context, so one call at a time.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/runtime/session.h"
#include "hal/device.h"
#include "vm/base/status.h"
#include "vm/context.h"
#include "vm/value.h"

namespace strata::tools {

struct ProgramOptions {
  std::string module_path;
  std::string function;  // empty: the module's only export
  std::string device;    // empty: DefaultDevice()
  std::vector<std::string> inputs;
  std::string trusted_key_path;  // --trusted-key: the module must be signed by it
  bool list_functions = false;
  bool list_devices = false;
};

// Help text for the shared flags and the VALUE syntax, for the tools' usage.
extern const char* const kProgramFlagsHelp;

// Takes `arg` when it is one of the shared flags (true), else leaves it.
bool ParseProgramFlag(const std::string& arg, ProgramOptions* options);

// Handles --list-devices and --list-functions: prints the list and returns
// true; returns false when neither was given.
StatusOr<bool> PrintListing(const ProgramOptions& options);

// cpu-task where the build has it, else the first driver registered.
std::string DefaultDevice();

struct Program {
  // Loads --module, creates --device (or takes `device`, another program's)
  // and links them, resolving --function.
  static StatusOr<std::unique_ptr<Program>> Load(const ProgramOptions& options, Ref<hal::Device> device = {});

  // The call's arguments from --input values, one per argument of the
  // function (counted here, before anything runs); tensors become buffer
  // views allocated from the device. A bare f32=2.5 is a scalar, unless the
  // function's recorded source type for that argument is tensor<f32>.
  StatusOr<std::vector<vm::Value>> ParseInputs(std::span<const std::string> inputs) const;

  std::unique_ptr<runtime::Session> session;
  Ref<hal::Device> device;  // the session's
  std::unique_ptr<runtime::Session::CallContext> call;
  vm::Context* context = nullptr;  // call's
  vm::FunctionHandle function;
  std::string_view arg_types, result_types;  // signature characters
  // The program's export; null for a function of the hal module.
  const runtime::Function* exported = nullptr;
  // What the module recorded about the function (source types, transient
  // bytes); null for a function of the hal module.
  const vm::FunctionInfo* info = nullptr;
  // "main(tensor<1x784xf32>) -> (tensor<1x10xf32>)", for messages.
  std::string description;
};

}  // namespace strata::tools
