// The C API (strata.h) through libstrata.so, as an embedder uses it: devices,
// modules from files and memory, function signatures, tensors, calls, the
// errors each of them reports, and calls from many threads at once.
//
// Small programs are assembled here (tests/vm/module_builder.h); the sample
// MLP compiled by compile-module is used where the build has it
// (STRATA_TEST_MLP_MODULE names the file; its cases skip with a message
// otherwise).
#include <doctest/doctest.h>
#include <strata/strata.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/vm/module_builder.h"

namespace strata::testing {
namespace {

using bytecode::kRefTag;
using bytecode::Opcode;

// Takes the status; returns "" for success, else "CODE: message".
std::string Take(strata_status* status) {
  if (!status) return "";
  std::string out = std::string(strata_code_name(strata_status_code(status))) + ": " + strata_status_message(status);
  strata_status_free(status);
  return out;
}

#define EXPECT_OK(expr) REQUIRE(Take(expr) == "")

// The drivers this library offers.
std::vector<std::string> Drivers(strata_instance* instance) {
  std::vector<std::string> names;
  for (size_t i = 0; i < strata_instance_driver_count(instance); ++i) {
    names.push_back(strata_instance_driver_name(instance, i));
  }
  return names;
}

// One instance and one device of `driver` for a test case.
struct Fixture {
  explicit Fixture(const char* driver = "cpu-sync", const char* options = nullptr) {
    EXPECT_OK(strata_instance_create(&instance));
    EXPECT_OK(strata_device_open(instance, driver, options, &device));
  }
  ~Fixture() {
    strata_device_release(device);
    strata_instance_release(instance);
  }
  strata_instance* instance = nullptr;
  strata_device* device = nullptr;
};

// Module bytes in 64-byte aligned memory that records when the module lets
// go of them.
struct ModuleBytes {
  explicit ModuleBytes(const std::vector<uint8_t>& bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64))), size(bytes.size()) {
    std::memcpy(data, bytes.data(), bytes.size());
  }
  ~ModuleBytes() { std::free(data); }
  static void Release(void* user_data) { static_cast<ModuleBytes*>(user_data)->released++; }

  uint8_t* data;
  size_t size;
  std::atomic<int> released{0};
};

// sum(n: i64) -> i64: 1 + 2 + ... + n (for n >= 1).
// div(a: i64, b: i64) -> i64: a / b, failing on b == 0.
// identity(t: ref) -> ref: its argument.
// swap(a: i32, b: f32) -> (f32, i32).
TestModule ScalarModule() {
  TestModule m;
  Assembler sum;
  sum.Op(Opcode::CONST_I64).U16(1).U64(0);
  sum.Op(Opcode::CONST_I64).U16(2).U64(1);
  sum.Op(Opcode::CONST_I64).U16(3).U64(1);
  uint32_t loop = sum.pc();
  sum.Op(Opcode::ADD_I64).U16(1).U16(1).U16(2);
  sum.Op(Opcode::ADD_I64).U16(2).U16(2).U16(3);
  sum.Op(Opcode::BR_LE_I64_S).U16(2).U16(0).U32(loop);
  sum.Op(Opcode::RETURN).List({1});
  Assembler div;
  div.Op(Opcode::DIV_I64_S).U16(2).U16(0).U16(1);
  div.Op(Opcode::RETURN).List({2});
  Assembler identity;
  identity.Op(Opcode::RETURN).List({kRefTag | 0});
  Assembler swap;
  swap.Op(Opcode::RETURN).List({1, 0});
  m.functions = {
      {"sum", "I_I", sum.bytes(), 4, 0},
      {"div", "II_I", div.bytes(), 3, 0},
      {"identity", "r_r", identity.bytes(), 0, 1},
      {"swap", "if_fi", swap.bytes(), 2, 0},
  };
  m.exports = {{"sum", 0}, {"div", 1}, {"identity", 2}, {"swap", 3}};
  return m;
}

// A device with ScalarModule loaded from memory; the module goes with the
// fixture unless a test releases it first (ReleaseModule).
struct ScalarFixture : Fixture {
  ScalarFixture() {
    EXPECT_OK(strata_module_load_memory(device, bytes.data, bytes.size, ModuleBytes::Release, &bytes, &module));
  }
  ~ScalarFixture() { ReleaseModule(); }
  strata_function* Function(const char* name) {
    strata_function* function = nullptr;
    EXPECT_OK(strata_module_lookup_function(module, name, &function));
    return function;
  }
  void ReleaseModule() {
    strata_module_release(module);
    module = nullptr;
  }
  ModuleBytes bytes{BuildModule(ScalarModule())};
  strata_module* module = nullptr;
};

strata_tensor* Scalar(strata_device* device, int64_t value) {
  strata_tensor* tensor = nullptr;
  EXPECT_OK(strata_tensor_create(device, STRATA_ELEMENT_TYPE_I64, nullptr, 0, &value, sizeof(value), &tensor));
  return tensor;
}

int64_t ReadI64(strata_tensor* tensor) {
  int64_t value = 0;
  EXPECT_OK(strata_tensor_copy_out(tensor, &value, sizeof(value)));
  return value;
}

std::string Describe(const strata_tensor* tensor) {
  char text[64];
  strata_tensor_describe(tensor, text, sizeof(text));
  return text;
}

// The compiled sample MLP, when the build made one.
const char* MlpPath() {
  const char* path = std::getenv("STRATA_TEST_MLP_MODULE");
  return path && *path ? path : nullptr;
}

// Says why a case does not run, on its own line of the test's output.
void Skip(const char* why) {
  std::printf("skipped: %s: %s\n", doctest::getContextOptions()->currentTest->m_name, why);
}

#define REQUIRE_MLP()                                                                   \
  if (!MlpPath()) {                                                                     \
    Skip("STRATA_TEST_MLP_MODULE is not set (the build has no compiler to make it)"); \
    return;                                                                             \
  }

// A deterministic input image for the MLP, different per seed.
std::vector<float> MlpInput(int seed) {
  std::vector<float> pixels(784);
  for (int i = 0; i < 784; ++i) pixels[i] = static_cast<float>((i * 37 + seed * 101) % 256) / 255.0f;
  return pixels;
}

std::vector<float> Predict(strata_function* predict, strata_device* device, const std::vector<float>& pixels) {
  const int64_t shape[2] = {1, 784};
  strata_tensor* input = nullptr;
  strata_tensor* output = nullptr;
  EXPECT_OK(strata_tensor_wrap(device, STRATA_ELEMENT_TYPE_F32, shape, 2, pixels.data(), pixels.size() * 4, nullptr,
                               nullptr, &input));
  EXPECT_OK(strata_function_call(predict, &input, 1, &output, 1));
  std::vector<float> scores(10);
  const void* data = nullptr;
  EXPECT_OK(strata_tensor_data(output, &data));
  std::memcpy(scores.data(), data, 40);
  strata_tensor_release(output);
  strata_tensor_release(input);
  return scores;
}

TEST_CASE("the version of the library is the header's") {
  CHECK(std::string(strata_version()) == STRATA_VERSION_STRING);
  CHECK(STRATA_VERSION_MAJOR == 0);
}

TEST_CASE("a null status is success") {
  CHECK(strata_status_code(nullptr) == STRATA_OK);
  CHECK(std::string(strata_status_message(nullptr)) == "");
  strata_status_free(nullptr);
  CHECK(std::string(strata_code_name(STRATA_DATA_LOSS)) == "DATA_LOSS");
  CHECK(std::string(strata_code_name(static_cast<strata_code>(99))) == "UNKNOWN");
}

TEST_CASE("the instance lists the drivers and opens devices") {
  strata_instance* instance = nullptr;
  EXPECT_OK(strata_instance_create(&instance));
  std::vector<std::string> drivers = Drivers(instance);
  REQUIRE(!drivers.empty());
  CHECK(drivers[0] == "cpu-sync");
  CHECK(strata_instance_driver_name(instance, drivers.size()) == nullptr);
  CHECK(std::string(strata_instance_driver_description(instance, 0)).size() > 0);

  strata_device* device = nullptr;
  EXPECT_OK(strata_device_open(instance, "cpu-sync", nullptr, &device));
  CHECK(std::string(strata_device_name(device)) == "cpu-sync");
  strata_device_release(device);
  strata_instance_release(instance);
}

TEST_CASE("cpu-task takes a thread count") {
  strata_instance* instance = nullptr;
  EXPECT_OK(strata_instance_create(&instance));
  std::vector<std::string> drivers = Drivers(instance);
  if (std::find(drivers.begin(), drivers.end(), "cpu-task") == drivers.end()) {
    Skip("this build has no cpu-task driver");
    strata_instance_release(instance);
    return;
  }
  strata_device* device = nullptr;
  EXPECT_OK(strata_device_open(instance, "cpu-task", "threads=2", &device));
  CHECK(std::string(strata_device_name(device)) == "cpu-task?threads=2");
  CHECK(std::string(strata_device_description(device)).find("2 worker threads") != std::string::npos);
  strata_device_release(device);
  EXPECT_OK(strata_device_open(instance, "cpu-task?threads=1", nullptr, &device));
  strata_device_release(device);
  strata_instance_release(instance);
}

TEST_CASE("opening a device reports what is wrong") {
  strata_instance* instance = nullptr;
  EXPECT_OK(strata_instance_create(&instance));
  strata_device* device = nullptr;
  std::string error = Take(strata_device_open(instance, "gpu", nullptr, &device));
  CHECK(error.rfind("NOT_FOUND: ", 0) == 0);
  CHECK(error.find("cpu-sync") != std::string::npos);  // the drivers that exist
  error = Take(strata_device_open(instance, "cpu-sync", "threads=2", &device));
  CHECK(error.rfind("INVALID_ARGUMENT: ", 0) == 0);
  CHECK(error.find("threads") != std::string::npos);
  error = Take(strata_device_open(instance, "cpu-sync?x=1", "y=2", &device));
  CHECK(error.find("pass the options in one place") != std::string::npos);
  CHECK(Take(strata_device_open(nullptr, "cpu-sync", nullptr, &device)) ==
        "INVALID_ARGUMENT: strata_device_open: instance is null");
  CHECK(Take(strata_device_open(instance, "cpu-sync", nullptr, nullptr)) ==
        "INVALID_ARGUMENT: strata_device_open: out_device is null");
  CHECK(device == nullptr);
  strata_instance_release(instance);
}

TEST_CASE("a module from memory: functions, signatures and the release callback") {
  ScalarFixture f;
  strata_module* module = f.module;
  CHECK(std::string(strata_module_name(module)) == "test");
  REQUIRE(strata_module_function_count(module) == 4);
  CHECK(std::string(strata_function_name(strata_module_function(module, 0))) == "sum");
  CHECK(strata_module_function(module, 4) == nullptr);

  strata_function* swap = f.Function("swap");
  CHECK(std::string(strata_function_signature(swap)) == "if_fi");
  CHECK(strata_function_input_count(swap) == 2);
  CHECK(strata_function_output_count(swap) == 2);
  CHECK(std::string(strata_function_input_type(swap, 0)) == "i32");  // no source types recorded: VM types
  CHECK(std::string(strata_function_input_type(swap, 1)) == "f32");
  CHECK(strata_function_input_type(swap, 2) == nullptr);
  strata_function* identity = f.Function("identity");
  CHECK(std::string(strata_function_output_type(identity, 0)) == "ref");

  strata_function* missing = nullptr;
  CHECK(Take(strata_module_lookup_function(module, "predict", &missing)) ==
        "NOT_FOUND: function 'predict' not found in module 'test'; available: sum(i64) -> (i64), "
        "div(i64, i64) -> (i64), identity(ref) -> (ref), swap(i32, f32) -> (f32, i32)");

  // The bytes stay in use until the module goes.
  strata_module_retain(module);
  strata_module_release(module);
  CHECK(f.bytes.released == 0);
  f.ReleaseModule();
  CHECK(f.bytes.released == 1);
}

TEST_CASE("loading a module reports what is wrong") {
  Fixture f;
  strata_module* module = nullptr;
  std::string error = Take(strata_module_load_file(f.device, "/nonexistent/model.smod", &module));
  CHECK(error.rfind("NOT_FOUND: cannot open module file '/nonexistent/model.smod'", 0) == 0);

  ModuleBytes garbage(std::vector<uint8_t>(256, 0x5a));
  error = Take(strata_module_load_memory(f.device, garbage.data, garbage.size, ModuleBytes::Release, &garbage,
                                         &module));
  CHECK(error.find("not a Strata module") != std::string::npos);
  CHECK(garbage.released == 1);  // told at once: the module never came to be

  std::vector<uint8_t> file = BuildModule(ScalarModule());
  ModuleBytes truncated(std::vector<uint8_t>(file.begin(), file.begin() + file.size() / 2));
  error = Take(strata_module_load_memory(f.device, truncated.data, truncated.size, nullptr, nullptr, &module));
  CHECK(error.rfind("DATA_LOSS: ", 0) == 0);

  ModuleBytes whole(file);
  error = Take(strata_module_load_memory(f.device, whole.data + 8, whole.size - 8, nullptr, nullptr, &module));
  CHECK(error.find("is not 64-byte aligned") != std::string::npos);

  // A module importing a module this runtime does not have fails to load.
  TestModule imports = ScalarModule();
  imports.imports = {{"check", "expect_true", "i_"}};
  ModuleBytes importing(BuildModule(imports));
  error = Take(strata_module_load_memory(f.device, importing.data, importing.size, nullptr, nullptr, &module));
  CHECK(error.find("imports 'check.expect_true' but no module named 'check'") != std::string::npos);
  CHECK(module == nullptr);
}

TEST_CASE("calls are bounded by a step budget and a deadline, per module and per call") {
  Fixture f;
  ModuleBytes bytes{BuildModule(ScalarModule())};
  strata_module_options options = {};
  options.call_limits.max_steps = 1000;  // the module's default
  strata_module* module = nullptr;
  EXPECT_OK(strata_module_load_memory_with_options(f.device, bytes.data, bytes.size, nullptr, nullptr, &options,
                                                   &module));
  strata_function* sum = nullptr;
  EXPECT_OK(strata_module_lookup_function(module, "sum", &sum));
  // sum(n) loops n times: 10^15 iterations never end within a test.
  strata_tensor* endless = Scalar(f.device, 1000000000000000);
  strata_tensor* result = nullptr;
  std::string error = Take(strata_function_call(sum, &endless, 1, &result, 1));
  CHECK(error.rfind("RESOURCE_EXHAUSTED: ", 0) == 0);
  CHECK(error.find("step budget of 1000") != std::string::npos);
  CHECK(result == nullptr);

  // A call's own limits replace the module's: a deadline of 50 ms.
  strata_call_limits limits = {0, 50000};
  auto begin = std::chrono::steady_clock::now();
  error = Take(strata_function_call_with_limits(sum, &endless, 1, &result, 1, &limits));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  CHECK(error.rfind("DEADLINE_EXCEEDED: ", 0) == 0);
  CHECK(ms >= 50);
  MESSAGE("a 50 ms deadline stopped the program after " << ms << " ms");
  CHECK(ms < 2000);

  // The module stays usable within its budget.
  strata_tensor* n = Scalar(f.device, 100);
  EXPECT_OK(strata_function_call(sum, &n, 1, &result, 1));
  CHECK(ReadI64(result) == 5050);
  strata_tensor_release(result);
  strata_tensor_release(n);
  strata_tensor_release(endless);
  strata_module_release(module);
}

TEST_CASE("a trusted key refuses modules it did not sign") {
  Fixture f;
  ModuleBytes bytes{BuildModule(ScalarModule())};
  uint8_t key[32] = {1, 2, 3};
  strata_module_options options = {};
  options.trusted_public_key = key;
  strata_module* module = nullptr;
  std::string error = Take(
      strata_module_load_memory_with_options(f.device, bytes.data, bytes.size, nullptr, nullptr, &options, &module));
  CHECK(error == "PERMISSION_DENIED: the module is not signed, and a trusted key requires a signature");
  CHECK(module == nullptr);

  // Without the record, the module is damaged or foreign: refused either way.
  TestModule unsealed = ScalarModule();
  unsealed.seal = false;
  ModuleBytes plain{BuildModule(unsealed)};
  error = Take(strata_module_load_memory(f.device, plain.data, plain.size, nullptr, nullptr, &module));
  CHECK(error.rfind("DATA_LOSS: the module has no integrity record", 0) == 0);
}

TEST_CASE("scalars travel as 0-d tensors") {
  ScalarFixture f;
  strata_function* sum = f.Function("sum");
  strata_tensor* n = Scalar(f.device, 100);
  strata_tensor* result = nullptr;
  EXPECT_OK(strata_function_call(sum, &n, 1, &result, 1));
  CHECK(strata_tensor_rank(result) == 0);
  CHECK(strata_tensor_shape(result) == nullptr);
  CHECK(strata_tensor_element_type(result) == STRATA_ELEMENT_TYPE_I64);
  CHECK(ReadI64(result) == 5050);
  strata_tensor_release(result);
  strata_tensor_release(n);

  strata_function* swap = f.Function("swap");
  int32_t i = -7;
  float x = 2.5f;
  strata_tensor* inputs[2] = {nullptr, nullptr};
  EXPECT_OK(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_I32, nullptr, 0, &i, 4, &inputs[0]));
  EXPECT_OK(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, nullptr, 0, &x, 4, &inputs[1]));
  strata_tensor* outputs[2] = {nullptr, nullptr};
  EXPECT_OK(strata_function_call(swap, inputs, 2, outputs, 2));
  CHECK(Describe(outputs[0]) == "tensor<f32>");
  CHECK(Describe(outputs[1]) == "tensor<i32>");
  const void* data = nullptr;
  EXPECT_OK(strata_tensor_data(outputs[0], &data));
  CHECK(*static_cast<const float*>(data) == 2.5f);
  EXPECT_OK(strata_tensor_data(outputs[1], &data));
  CHECK(*static_cast<const int32_t*>(data) == -7);
  for (strata_tensor* t : {inputs[0], inputs[1], outputs[0], outputs[1]}) strata_tensor_release(t);
}

TEST_CASE("a call checks its inputs and outputs") {
  ScalarFixture f;
  strata_function* sum = f.Function("sum");
  strata_tensor* n = Scalar(f.device, 3);
  strata_tensor* result = nullptr;
  CHECK(Take(strata_function_call(sum, nullptr, 0, &result, 1)) == "INVALID_ARGUMENT: function sum(i64) -> (i64) expects 1 input, got 0");
  CHECK(Take(strata_function_call(sum, &n, 1, &result, 2)) ==
        "INVALID_ARGUMENT: sum: returns 1 output, got room for 2");
  strata_tensor* null_input = nullptr;
  CHECK(Take(strata_function_call(sum, &null_input, 1, &result, 1)) == "INVALID_ARGUMENT: sum: input 0 is null");
  CHECK(Take(strata_function_call(nullptr, &n, 1, &result, 1)) ==
        "INVALID_ARGUMENT: strata_function_call: function is null");

  const int64_t shape[1] = {2};
  const int64_t pair[2] = {1, 2};
  strata_tensor* vector = nullptr;
  EXPECT_OK(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_I64, shape, 1, pair, sizeof(pair), &vector));
  CHECK(Take(strata_function_call(sum, &vector, 1, &result, 1)) ==
        "INVALID_ARGUMENT: sum: input 0: expected i64 (a tensor<i64> of rank 0), got tensor<2xi64>");
  float x = 1;
  strata_tensor* f32 = nullptr;
  EXPECT_OK(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, nullptr, 0, &x, 4, &f32));
  CHECK(Take(strata_function_call(sum, &f32, 1, &result, 1)) ==
        "INVALID_ARGUMENT: sum: input 0: expected i64 (a tensor<i64> of rank 0), got tensor<f32>");
  CHECK(result == nullptr);

  strata_tensor_release(f32);
  strata_tensor_release(vector);
  strata_tensor_release(n);
}

TEST_CASE("a failure inside the program carries its backtrace") {
  ScalarFixture f;
  strata_function* div = f.Function("div");
  strata_tensor* inputs[2] = {Scalar(f.device, 7), Scalar(f.device, 0)};
  strata_tensor* result = nullptr;
  std::string error = Take(strata_function_call(div, inputs, 2, &result, 1));
  CHECK(error.rfind("INVALID_ARGUMENT: ", 0) == 0);
  CHECK(error.find("division by zero") != std::string::npos);
  CHECK(error.find("\n  at test.div@0") != std::string::npos);
  // The module stays usable.
  strata_tensor_release(inputs[1]);
  inputs[1] = Scalar(f.device, 2);
  EXPECT_OK(strata_function_call(div, inputs, 2, &result, 1));
  CHECK(ReadI64(result) == 3);
  strata_tensor_release(result);
  strata_tensor_release(inputs[0]);
  strata_tensor_release(inputs[1]);
}

TEST_CASE("tensors: copies, wrapped memory and their checks") {
  Fixture f;
  const int64_t shape[2] = {2, 3};
  float values[6] = {1, 2, 3, 4, 5, 6};
  strata_tensor* copy = nullptr;
  EXPECT_OK(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, shape, 2, values, sizeof(values), &copy));
  values[0] = 100;  // the copy does not see it
  CHECK(Describe(copy) == "tensor<2x3xf32>");
  CHECK(strata_tensor_element_count(copy) == 6);
  CHECK(strata_tensor_byte_length(copy) == 24);
  CHECK(strata_tensor_shape(copy)[1] == 3);
  float out[6] = {};
  EXPECT_OK(strata_tensor_copy_out(copy, out, sizeof(out)));
  CHECK(out[0] == 1);
  CHECK(Take(strata_tensor_copy_out(copy, out, 20)) ==
        "INVALID_ARGUMENT: strata_tensor_copy_out: the tensor<2x3xf32> is 24 bytes, the buffer has room for 20");

  struct Released {
    static void Count(void* user_data) { ++*static_cast<int*>(user_data); }
  };
  int released = 0;
  strata_tensor* wrapped = nullptr;
  EXPECT_OK(strata_tensor_wrap(f.device, STRATA_ELEMENT_TYPE_F32, shape, 2, values, sizeof(values), Released::Count,
                               &released, &wrapped));
  const void* data = nullptr;
  EXPECT_OK(strata_tensor_data(wrapped, &data));
  CHECK(data == values);  // zero-copy
  CHECK(static_cast<const float*>(data)[0] == 100);
  CHECK(released == 0);
  strata_tensor_release(wrapped);
  CHECK(released == 1);

  strata_tensor* t = nullptr;
  CHECK(Take(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, shape, 2, values, 20, &t)) ==
        "INVALID_ARGUMENT: strata_tensor_create: tensor<2x3xf32> needs 24 bytes, got 20");
  const int64_t negative[2] = {2, -3};
  CHECK(Take(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, negative, 2, values, 24, &t)) ==
        "INVALID_ARGUMENT: strata_tensor_create: dimension 1 is negative (-3)");
  const int64_t deep[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(Take(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, deep, 9, values, 4, &t)) ==
        "INVALID_ARGUMENT: strata_tensor_create: rank 9 exceeds the maximum of 8");
  CHECK(Take(strata_tensor_create(f.device, static_cast<strata_element_type>(0x999), shape, 2, values, 24, &t)) ==
        "INVALID_ARGUMENT: strata_tensor_create: unknown element type 0x999");
  const int64_t huge[2] = {int64_t{1} << 40, int64_t{1} << 40};
  CHECK(Take(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, huge, 2, values, 24, &t)) ==
        "INVALID_ARGUMENT: strata_tensor_create: the byte size of the shape overflows 64 bits");
  CHECK(Take(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F32, shape, 2, nullptr, 24, &t)) ==
        "INVALID_ARGUMENT: strata_tensor_create: data is null for 24 bytes");
  std::string error = Take(strata_tensor_wrap(f.device, STRATA_ELEMENT_TYPE_F32, shape, 1,
                                              reinterpret_cast<const char*>(values) + 1, 8, Released::Count,
                                              &released, &t));
  CHECK(error.find("is not aligned to the 4-byte elements of f32") != std::string::npos);
  CHECK(released == 1);  // a failed wrap does not call back
  CHECK(t == nullptr);
  CHECK(std::string(strata_element_type_name(STRATA_ELEMENT_TYPE_BOOL)) == "i1");
  CHECK(strata_element_type_size(STRATA_ELEMENT_TYPE_BF16) == 2);
  strata_tensor_release(copy);
}

TEST_CASE("a tensor passes through a function and outlives the module") {
  ScalarFixture f;
  strata_function* identity = f.Function("identity");
  const int64_t shape[1] = {3};
  const int32_t values[3] = {7, 8, 9};
  strata_tensor* input = nullptr;
  EXPECT_OK(strata_tensor_wrap(f.device, STRATA_ELEMENT_TYPE_I32, shape, 1, values, sizeof(values), nullptr, nullptr,
                               &input));
  strata_tensor* output = nullptr;
  EXPECT_OK(strata_function_call(identity, &input, 1, &output, 1));
  strata_tensor_release(input);
  f.ReleaseModule();
  const void* data = nullptr;
  EXPECT_OK(strata_tensor_data(output, &data));
  CHECK(data == values);
  strata_tensor_release(output);
}

TEST_CASE("the compiled MLP: signature, a call and shape errors") {
  REQUIRE_MLP();
  Fixture f;
  strata_module* module = nullptr;
  EXPECT_OK(strata_module_load_file(f.device, MlpPath(), &module));
  strata_function* predict = nullptr;
  EXPECT_OK(strata_module_lookup_function(module, "predict", &predict));
  CHECK(std::string(strata_function_input_type(predict, 0)) == "tensor<1x784xf32>");
  CHECK(std::string(strata_function_output_type(predict, 0)) == "tensor<1x10xf32>");

  std::vector<float> scores = Predict(predict, f.device, MlpInput(0));
  for (float s : scores) CHECK(std::isfinite(s));

  std::vector<float> pixels(2 * 784, 0.5f);
  const int64_t batch2[2] = {2, 784};
  strata_tensor* input = nullptr;
  EXPECT_OK(strata_tensor_wrap(f.device, STRATA_ELEMENT_TYPE_F32, batch2, 2, pixels.data(), pixels.size() * 4,
                               nullptr, nullptr, &input));
  strata_tensor* output = nullptr;
  CHECK(Take(strata_function_call(predict, &input, 1, &output, 1)) ==
        "INVALID_ARGUMENT: predict: input 0: expected tensor<1x784xf32>, got tensor<2x784xf32>");
  strata_tensor_release(input);
  std::vector<double> doubles(784, 0.5);
  const int64_t one[2] = {1, 784};
  EXPECT_OK(strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_F64, one, 2, doubles.data(), doubles.size() * 8,
                                 &input));
  CHECK(Take(strata_function_call(predict, &input, 1, &output, 1)) ==
        "INVALID_ARGUMENT: predict: input 0: expected tensor<1x784xf32>, got tensor<1x784xf64>");
  CHECK(output == nullptr);
  strata_tensor_release(input);

  // The same file from the caller's memory computes the same scores.
  FILE* file = std::fopen(MlpPath(), "rb");
  REQUIRE(file != nullptr);
  std::vector<uint8_t> contents;
  uint8_t chunk[65536];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0;) {
    contents.insert(contents.end(), chunk, chunk + n);
  }
  std::fclose(file);
  ModuleBytes bytes(contents);
  strata_module* from_memory = nullptr;
  EXPECT_OK(strata_module_load_memory(f.device, bytes.data, bytes.size, ModuleBytes::Release, &bytes, &from_memory));
  strata_function* predict_from_memory = nullptr;
  EXPECT_OK(strata_module_lookup_function(from_memory, "predict", &predict_from_memory));
  CHECK(Predict(predict_from_memory, f.device, MlpInput(0)) == scores);
  strata_module_release(from_memory);
  CHECK(bytes.released == 1);
  strata_module_release(module);
}

// Eight threads call one module at once, each with inputs of its own, and
// compare with what one thread computed alone.
constexpr int kThreads = 8;

TEST_CASE("concurrent calls on one module: a program of scalars") {
  ScalarFixture f;
  strata_function* sum = f.Function("sum");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int64_t n = 1000 + 37 * t + i;
        strata_tensor* input = nullptr;
        strata_tensor* output = nullptr;
        int64_t result = -1;
        strata_status* status = strata_tensor_create(f.device, STRATA_ELEMENT_TYPE_I64, nullptr, 0, &n, 8, &input);
        if (!status) status = strata_function_call(sum, &input, 1, &output, 1);
        if (!status) status = strata_tensor_copy_out(output, &result, 8);
        if (status || result != n * (n + 1) / 2) wrong++;
        strata_status_free(status);
        strata_tensor_release(output);
        strata_tensor_release(input);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(wrong == 0);
}

void ConcurrentMlp(const char* driver) {
  Fixture f(driver);
  strata_module* module = nullptr;
  EXPECT_OK(strata_module_load_file(f.device, MlpPath(), &module));
  strata_function* predict = nullptr;
  EXPECT_OK(strata_module_lookup_function(module, "predict", &predict));
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < kThreads; ++t) expected.push_back(Predict(predict, f.device, MlpInput(t)));
  // Different inputs give different scores, so a mix-up between threads shows.
  CHECK(expected[0] != expected[1]);

  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<float> pixels = MlpInput(t);
      const int64_t shape[2] = {1, 784};
      for (int i = 0; i < 20; ++i) {
        strata_tensor* input = nullptr;
        strata_tensor* output = nullptr;
        float scores[10] = {};
        strata_status* status = strata_tensor_wrap(f.device, STRATA_ELEMENT_TYPE_F32, shape, 2, pixels.data(),
                                                   pixels.size() * 4, nullptr, nullptr, &input);
        if (!status) status = strata_function_call(predict, &input, 1, &output, 1);
        if (!status) status = strata_tensor_copy_out(output, scores, sizeof(scores));
        if (status || std::memcmp(scores, expected[t].data(), sizeof(scores)) != 0) wrong++;
        if (status) std::fprintf(stderr, "%s\n", strata_status_message(status));
        strata_status_free(status);
        strata_tensor_release(output);
        strata_tensor_release(input);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(wrong == 0);
  strata_module_release(module);
}

// 1000 random single-bit changes over the compiled MLP, each loaded from
// memory as an app would: a change must never crash, hang or silently change
// the scores. Every outcome is counted and printed.
TEST_CASE("1000 random bit flips over a compiled module: each refused or harmless") {
  REQUIRE_MLP();
  Fixture f;
  FILE* file = std::fopen(MlpPath(), "rb");
  REQUIRE(file != nullptr);
  std::vector<uint8_t> contents;
  uint8_t chunk[65536];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0;) contents.insert(contents.end(), chunk, chunk + n);
  std::fclose(file);

  ModuleBytes pristine(contents);
  strata_module* module = nullptr;
  EXPECT_OK(strata_module_load_memory(f.device, pristine.data, pristine.size, nullptr, nullptr, &module));
  strata_function* predict = nullptr;
  EXPECT_OK(strata_module_lookup_function(module, "predict", &predict));
  const std::vector<float> expected = Predict(predict, f.device, MlpInput(3));
  strata_module_release(module);

  uint64_t state = 0x9E3779B97F4A7C15ull;  // a fixed seed: the same flips every run
  auto next = [&state] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  int refused = 0, same = 0, changed = 0;
  std::map<std::string, int> reasons;
  ModuleBytes flipped(contents);
  for (int trial = 0; trial < 1000; ++trial) {
    size_t at = next() % contents.size();
    uint8_t bit = static_cast<uint8_t>(1u << (next() % 8));
    flipped.data[at] ^= bit;
    strata_module* damaged = nullptr;
    strata_status* status =
        strata_module_load_memory(f.device, flipped.data, flipped.size, nullptr, nullptr, &damaged);
    if (status) {
      ++refused;
      std::string message = strata_status_message(status);
      reasons[std::string(strata_code_name(strata_status_code(status))) + ": " +
              message.substr(0, message.find(" (bytes"))]++;
      strata_status_free(status);
    } else {
      strata_function* fn = nullptr;
      EXPECT_OK(strata_module_lookup_function(damaged, "predict", &fn));
      (Predict(fn, f.device, MlpInput(3)) == expected ? same : changed)++;
      strata_module_release(damaged);
    }
    flipped.data[at] ^= bit;
  }
  MESSAGE("1000 flips over " << contents.size() << " bytes: " << refused << " refused at load, " << same
                             << " loaded with unchanged results, " << changed << " loaded with changed results");
  for (const auto& [reason, count] : reasons) MESSAGE("  " << count << " x " << reason);
  CHECK(changed == 0);
  CHECK(refused + same == 1000);
}

TEST_CASE("concurrent calls on one module: the MLP on cpu-sync") {
  REQUIRE_MLP();
  ConcurrentMlp("cpu-sync");
}

TEST_CASE("concurrent calls on one module: the MLP on cpu-task") {
  REQUIRE_MLP();
  strata_instance* instance = nullptr;
  EXPECT_OK(strata_instance_create(&instance));
  std::vector<std::string> drivers = Drivers(instance);
  strata_instance_release(instance);
  if (std::find(drivers.begin(), drivers.end(), "cpu-task") == drivers.end()) {
    Skip("this build has no cpu-task driver");
    return;
  }
  ConcurrentMlp("cpu-task");
}

}  // namespace
}  // namespace strata::testing
