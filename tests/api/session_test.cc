// The runtime's session layer (drivers/runtime/session.h), below the C API:
// the recorded source types it parses and the input checks it makes for the
// C API and the tools.
#include "drivers/runtime/session.h"

#include <doctest/doctest.h>

#include "drivers/registry.h"
#include "hal/allocator.h"
#include "hal/buffer_view.h"

namespace strata::runtime {
namespace {

TEST_CASE("source types: tensors, scalars and what stays unknown") {
  SourceType t = ParseSourceType("tensor<?x784xf32>");
  CHECK(t.known);
  CHECK(t.tensor);
  CHECK(t.element_type == ElementType::kFloat32);
  CHECK(std::vector<int64_t>(t.dims().begin(), t.dims().end()) == std::vector<int64_t>{-1, 784});

  SourceType rank0 = ParseSourceType("tensor<bf16>");
  CHECK(rank0.known);
  CHECK(rank0.tensor);
  CHECK(rank0.element_type == ElementType::kBFloat16);
  CHECK(rank0.rank == 0);

  SourceType scalar = ParseSourceType("i1");
  CHECK(scalar.known);
  CHECK_FALSE(scalar.tensor);
  CHECK(scalar.element_type == ElementType::kBool8);

  // Unknown element types, malformed or overlong dimensions, too many
  // dimensions: unknown, never a wrong type.
  for (const char* text : {"", "tensor<", "tensor<>", "tensor<2xq7>", "tensor<2x>", "tensor<x2xf32>",
                           "tensor<-1x2xf32>", "tensor<1234567890123456789x2xf32>", "tensor<2x3xf32",
                           "!hal.buffer_view", "tensor<1x1x1x1x1x1x1x1x1xf32>"}) {
    CAPTURE(text);
    CHECK_FALSE(ParseSourceType(text).known);
  }
}

TEST_CASE("tensor inputs are checked against the recorded type") {
  Function fn;
  fn.name = "predict";
  fn.arg_types = "r";
  fn.input_types = {"tensor<?x4xf32>"};
  fn.inputs = {ParseSourceType("tensor<?x4xf32>")};
  vm::FunctionInfo info;
  info.arg_types = "r";
  info.source_arg_types = {"tensor<?x4xf32>"};
  fn.info = &info;

  auto device = drivers::DefaultRegistry().CreateDevice("cpu-sync");
  REQUIRE(device.ok());
  auto view_of = [&](ElementType type, std::vector<int64_t> shape) {
    hal::BufferParams params;
    params.memory_types = hal::kMemoryHostVisible;
    params.usage = hal::kUsageAll;
    uint64_t bytes = ElementTypeByteSize(type);
    for (int64_t d : shape) bytes *= static_cast<uint64_t>(d);
    auto buffer = (*device)->allocator()->Allocate(params, bytes);
    REQUIRE(buffer.ok());
    auto view = hal::BufferView::Create(*buffer, 0, type, shape);
    REQUIRE(view.ok());
    return *view;
  };
  CHECK(Session::CheckTensorInput(fn, 0, *view_of(ElementType::kFloat32, {3, 4})).ok());
  CHECK(Session::CheckTensorInput(fn, 0, *view_of(ElementType::kFloat32, {0, 4})).ok());
  Status shape = Session::CheckTensorInput(fn, 0, *view_of(ElementType::kFloat32, {3, 5}));
  CHECK(shape.code() == StatusCode::kInvalidArgument);
  CHECK(shape.message() == "predict: input 0: expected tensor<?x4xf32>, got tensor<3x5xf32>");
  Status type = Session::CheckTensorInput(fn, 0, *view_of(ElementType::kFloat16, {3, 4}));
  CHECK(type.message() == "predict: input 0: expected tensor<?x4xf32>, got tensor<3x4xf16>");
  Status rank = Session::CheckTensorInput(fn, 0, *view_of(ElementType::kFloat32, {12}));
  CHECK(rank.message() == "predict: input 0: expected tensor<?x4xf32>, got tensor<12xf32>");

  CHECK(Session::CheckInputCount(fn, 1).ok());
  CHECK(Session::CheckInputCount(fn, 2).message() == "function predict(tensor<?x4xf32>) -> () expects 1 input, got 2");
}

}  // namespace
}  // namespace strata::runtime
