// Session: a program on a device, ready to call. What the C API's
// strata_module and the tools' Program (run-module, benchmark-module) both
// are, assembled one way:
//
//   the program      a bytecode module, loaded and verified by the caller
//                    (from a file or from memory, with its integrity options)
//   the device       from the driver registry (drivers/registry.h)
//   the hal module   made for that device and program (hal/module/)
//   its functions    each export with its signature and the source types the
//                    compiler recorded ("tensor<1x784xf32>"), parsed
//
// A session creates contexts that link the program against its hal module
// (one context per concurrent call: a context runs one call at a time), finds
// functions by name with an error that lists those that exist, and checks a
// call's inputs against the recorded types before anything runs, with errors
// naming the function, the input, what was expected and what was given.
//
// Thread safety: a Session is immutable once created; every method may be
// called from any thread. The contexts it creates are not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/buffer_view.h"
#include "hal/device.h"
#include "vm/base/status.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"
#include "vm/native_module.h"

namespace strata::runtime {

// A source type recorded by the compiler, parsed: "tensor<?x784xf32>" is a
// tensor of f32 with dimensions {-1, 784}; "i64" a scalar. Anything else
// stays unknown (and unchecked before a call; the program checks its inputs
// itself).
struct SourceType {
  bool known = false;  // false: no type recorded, or one this parser does not read
  bool tensor = false;
  ElementType element_type = ElementType::kFloat32;
  uint32_t rank = 0;
  int64_t shape[hal::BufferView::kMaxRank] = {};  // -1 for a dynamic dimension

  std::span<const int64_t> dims() const { return {shape, rank}; }
};
SourceType ParseSourceType(std::string_view text);

// One exported function of the program.
struct Function {
  std::string name;
  std::string signature;
  std::string arg_types, result_types;  // VM signature characters
  // Each input's and output's recorded source type, or its VM type's name
  // ("i64", "ref") where none was recorded.
  std::vector<std::string> input_types, output_types;
  std::vector<SourceType> inputs, outputs;
  const vm::FunctionInfo* info;  // in the program

  // "main(tensor<1x784xf32>) -> (tensor<1x10xf32>)", for messages.
  std::string Describe() const;
};

// "main(tensor<1x784xf32>) -> (tensor<1x10xf32>)" with the recorded source
// types, "scale(i64, f32) -> (i64, f32)" from the signature otherwise.
std::string DescribeFunction(std::string_view name, const vm::FunctionInfo& fn);

class Session {
 public:
  // Makes the hal module for `device` and `program` and describes the
  // program's exports.
  static StatusOr<std::unique_ptr<Session>> Create(Ref<hal::Device> device, Ref<vm::BytecodeModule> program);

  const Ref<hal::Device>& device() const { return device_; }
  const Ref<vm::BytecodeModule>& program() const { return program_; }
  const std::vector<Function>& functions() const { return functions_; }

  // The exported function `name`; NOT_FOUND listing those that exist.
  StatusOr<const Function*> FindFunction(std::string_view name) const;
  // "main(tensor<1x784xf32>) -> (tensor<1x10xf32>), ..." or "none".
  std::string ListFunctions() const;

  // A context of the program linked with the hal module, and the handle of
  // each of functions() in it, in the same order. Linking reports a program
  // that imports what this runtime lacks, so callers create their first
  // context as they load.
  struct CallContext {
    std::unique_ptr<vm::Context> context;
    std::vector<vm::FunctionHandle> handles;
  };
  StatusOr<std::unique_ptr<CallContext>> CreateContext() const;

  // INVALID_ARGUMENT unless `count` inputs is what `fn` takes.
  static Status CheckInputCount(const Function& fn, size_t count) {
    if (count == fn.arg_types.size()) return OkStatus();
    return CheckInputCount(STRATA_FOR_MESSAGE(fn.Describe()), fn.arg_types, count);
  }
  // The same for any function: `description` names it in the message,
  // `arg_types` are its VM signature characters (a hal module function's
  // too).
  static Status CheckInputCount(std::string_view description, std::string_view arg_types, size_t count);
  // INVALID_ARGUMENT unless `view` has the element type and shape recorded
  // for input `index` of `fn` (a dynamic dimension matches any size).
  static Status CheckTensorInput(const Function& fn, size_t index, const hal::BufferView& view);

 private:
  Session() = default;

  Ref<hal::Device> device_;
  Ref<vm::BytecodeModule> program_;
  Ref<vm::NativeModule> hal_module_;
  std::vector<Function> functions_;
};

// "tensor<2x784xf32>", "tensor<f32>": of a shape and an element type known
// to be valid, and of a buffer view.
std::string DescribeTensorType(std::span<const int64_t> shape, ElementType element_type);
std::string DescribeTensor(const hal::BufferView& view);

}  // namespace strata::runtime
