// The loader and verifier reject each kind of broken module with its own
// clear message, and never crash.
#include <doctest/doctest.h>

#include <string>

#include "tests/vm/module_builder.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"
#include "vm/native_module.h"

namespace strata::testing {
namespace {

using bytecode::kRefTag;
using bytecode::Opcode;

// add(i64, i64) -> i64 and a caller main(i64) -> i64 = add(x, x).
TestModule ValidModule() {
  TestModule m;
  Assembler add;
  add.Op(Opcode::ADD_I64).U16(2).U16(0).U16(1).Op(Opcode::RETURN).List({2});
  Assembler main;
  main.Op(Opcode::CALL).U16(0).List({0, 0}).List({1}).Op(Opcode::RETURN).List({1});
  m.functions = {{"add", "II_I", add.bytes(), 3, 0}, {"main", "I_I", main.bytes(), 2, 0}};
  m.exports = {{"add", 0}, {"main", 1}};
  return m;
}

// The checks behind the integrity record: these tests change modules after
// they were sealed, which the digest alone would catch.
Status LoadStatus(const std::vector<uint8_t>& bytes) {
  auto module = vm::BytecodeModule::LoadOwned(bytes, {.verify = false});
  return module.ok() ? OkStatus() : module.status();
}

Status LoadVerified(const std::vector<uint8_t>& bytes) {
  auto module = vm::BytecodeModule::LoadOwned(bytes);
  return module.ok() ? OkStatus() : module.status();
}

void ExpectRejected(const std::vector<uint8_t>& bytes, StatusCode code, const std::string& fragment) {
  Status status = LoadStatus(bytes);
  INFO("status: " << status.ToString());
  REQUIRE_FALSE(status.ok());
  CHECK(status.code() == code);
  CHECK(status.message().find(fragment) != std::string::npos);
}

TEST_CASE("a valid module loads and runs") {
  auto module = vm::BytecodeModule::LoadOwned(BuildModule(ValidModule()));
  REQUIRE(module.ok());
  auto context = vm::Context::Create({*module});
  REQUIRE(context.ok());
  auto fn = (*context)->LookupFunction("main");
  REQUIRE(fn.ok());
  vm::Value arg = vm::Value::I64(21);
  auto results = (*context)->Invoke(*fn, {&arg, 1});
  REQUIRE(results.ok());
  CHECK(results->at(0).i64() == 42);
}

TEST_CASE("truncated file") {
  TestModule m = ValidModule();
  m.seal = false;
  auto bytes = BuildModule(m);
  bytes.resize(bytes.size() / 2);
  Seal(bytes);
  CHECK(LoadVerified(bytes).message().find("truncated module") != std::string::npos);
}

TEST_CASE("every truncation is rejected without a crash") {
  auto bytes = BuildModule(ValidModule());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    Status status = LoadVerified(prefix);
    CHECK_FALSE(status.ok());
    CHECK(status.code() == StatusCode::kDataLoss);
    // Without the integrity check, only trailing zero padding and the
    // record itself may be cut without harm.
    if (LoadStatus(prefix).ok()) CHECK(n >= bytes.size() - 32 - 40 - bytecode::kExternalAlignment);
  }
}

TEST_CASE("integrity: a changed byte anywhere is found before the module is read") {
  auto bytes = BuildModule(ValidModule());
  REQUIRE(LoadVerified(bytes).ok());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> changed = bytes;
    changed[i] ^= 0x10;
    Status status = LoadVerified(changed);
    INFO("byte " << i << ": " << status.ToString());
    REQUIRE_FALSE(status.ok());
    CHECK(status.code() == StatusCode::kDataLoss);
  }
  std::vector<uint8_t> changed = bytes;
  changed[20] ^= 1;
  Status status = LoadVerified(changed);
  CHECK(status.message().find("the module is damaged: the module description (header, bytecode, metadata) (bytes "
                              "0 to ") == 0);
  CHECK(status.message().find(", the module records ") != std::string::npos);
}

TEST_CASE("integrity: a module without a record is refused unless the check is off") {
  TestModule m = ValidModule();
  m.seal = false;
  auto bytes = BuildModule(m);
  Status status = LoadVerified(bytes);
  CHECK(status.code() == StatusCode::kDataLoss);
  CHECK(status.message().find("the module has no integrity record") == 0);
  CHECK(LoadStatus(bytes).ok());
}

TEST_CASE("too short to be a module") {
  ExpectRejected({1, 2, 3}, StatusCode::kDataLoss, "too short to be a Strata module");
}

TEST_CASE("wrong file identifier") {
  auto bytes = BuildModule(ValidModule());
  bytes[8] = 'E', bytes[9] = 'L', bytes[10] = 'F', bytes[11] = '!';
  ExpectRejected(bytes, StatusCode::kInvalidArgument, "file identifier is 'ELF!', expected 'SMOD'");
}

TEST_CASE("newer major version") {
  TestModule m = ValidModule();
  m.version_major = bytecode::kVersionMajor + 1;
  ExpectRejected(BuildModule(m), StatusCode::kIncompatible, "is newer than this runtime supports");
}

TEST_CASE("register out of range") {
  TestModule m = ValidModule();
  m.functions[0].scalar_registers = 2;  // add writes s2
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument,
                 "uses scalar register 2 but the function declares 2");
}

TEST_CASE("branch into the middle of an instruction") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::CONST_I32).U16(0).U32(7);       // pc 0, 7 bytes
  a.Op(Opcode::BR).U32(3).U16(0);              // pc 7 -> 3 is inside const.i32
  m.functions = {{"f", "_", a.bytes(), 1, 0}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "branch target 3 is in the middle of an instruction");
}

TEST_CASE("branch past the end") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::BR).U32(1000).U16(0);
  m.functions = {{"f", "_", a.bytes(), 0, 0}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "branch target 1000 is past the end");
}

TEST_CASE("call with the wrong signature") {
  TestModule m = ValidModule();
  Assembler main;
  main.Op(Opcode::CALL).U16(0).List({0}).List({1}).Op(Opcode::RETURN).List({1});
  m.functions[1].code = main.bytes();
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "arguments of 'add' (signature 'II'): expected 2, got 1");
}

TEST_CASE("call passing a ref where a scalar is expected") {
  TestModule m = ValidModule();
  Assembler main;
  main.Op(Opcode::CALL).U16(0).List({0, uint16_t(kRefTag | 0)}).List({1}).Op(Opcode::RETURN).List({1});
  m.functions[1].code = main.bytes();
  m.functions[1].ref_registers = 1;
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "expected a scalar register, got r0");
}

TEST_CASE("return with the wrong count") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::RETURN).List({});
  m.functions = {{"f", "_I", a.bytes(), 1, 0}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "returned values of 'f' (signature 'I'): expected 1, got 0");
}

TEST_CASE("rodata past the end of the file") {
  TestModule m = ValidModule();
  m.rodata.push_back({"weights", std::vector<uint8_t>(128, 1), true, /*forced_length=*/4096});
  ExpectRejected(BuildModule(m), StatusCode::kDataLoss, "rodata 'weights' spans external bytes [0, 4096)");
}

TEST_CASE("functions without any bytecode") {
  TestModule m;
  m.functions = {{"f", "_", {}, 0, 0}};
  m.omit_bytecode = true;
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "function has no bytecode");
}

TEST_CASE("unknown opcode") {
  TestModule m;
  m.functions = {{"f", "_", {0xEE}, 0, 0}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "unknown opcode 0xee");
}

TEST_CASE("operand runs past the end of the function") {
  TestModule m;
  m.functions = {{"f", "_", {static_cast<uint8_t>(Opcode::CONST_I64), 0, 0, 1}, 1, 0}};
  ExpectRejected(BuildModule(m), StatusCode::kDataLoss, "runs past the end of the function");
}

TEST_CASE("code that falls off the end") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::CONST_I32).U16(0).U32(1);
  m.functions = {{"f", "_", a.bytes(), 1, 0}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "can fall off the end of the function");
}

TEST_CASE("string index out of range") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::FAIL).U32(3);
  m.functions = {{"f", "_", a.bytes(), 0, 0}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "string 3 but the module has 0");
}

TEST_CASE("executable index out of range") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::CONST_REF_EXECUTABLE).U16(0).U32(2);
  a.Op(Opcode::RETURN).U16(0);
  m.functions = {{"f", "_", a.bytes(), 0, 1}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "executable 2 but the module embeds 0");
}

TEST_CASE("global access out of range") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::GLOBAL_LOAD_I64).U16(0).U32(4).Op(Opcode::RETURN).List({});
  m.functions = {{"f", "_", a.bytes(), 1, 0}};
  m.global_scalar_bytes = 8;
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "accesses global bytes [4, 12) but globals are 8 bytes");
}

TEST_CASE("source locations name the frame, and must come in pc order") {
  TestModule m = ValidModule();
  m.functions[0].locations = {{0, "add.mlir:1:1"}, {5, "add.mlir:2:1"}};
  auto module = vm::BytecodeModule::LoadOwned(BuildModule(m));
  REQUIRE(module.ok());
  CHECK((*module)->DescribeLocation(0, 0) == "test.add@0 (add.mlir:1:1)");
  CHECK((*module)->DescribeLocation(0, 7) == "test.add@7 (add.mlir:2:1)");

  m.functions[0].locations = {{5, "add.mlir:2:1"}, {0, "add.mlir:1:1"}};
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument,
                 "function 'add' lists source location 1 at pc 0 after one at pc 5; locations must be in pc order");
}

TEST_CASE("export of a missing function") {
  TestModule m = ValidModule();
  m.exports.push_back({"ghost", 7});
  ExpectRejected(BuildModule(m), StatusCode::kInvalidArgument, "export 'ghost' names function 7 but the module has 2");
}

TEST_CASE("missing import module") {
  TestModule m = ValidModule();
  m.imports.push_back({"check", "expect_true", "i_"});
  auto module = vm::BytecodeModule::LoadOwned(BuildModule(m));
  REQUIRE(module.ok());
  auto context = vm::Context::Create({*module});
  REQUIRE_FALSE(context.ok());
  CHECK(context.status().code() == StatusCode::kNotFound);
  CHECK(context.status().message().find("imports 'check.expect_true' but no module named 'check'") !=
        std::string::npos);
}

TEST_CASE("missing import function and signature mismatch") {
  auto native = vm::NativeModule::Create("check");
  REQUIRE(native->AddFunction("expect_true", "i_", [](vm::CallArgs, vm::CallResults) { return OkStatus(); }).ok());
  TestModule m = ValidModule();
  m.imports.push_back({"check", "expect_false", "i_"});
  auto module = vm::BytecodeModule::LoadOwned(BuildModule(m));
  REQUIRE(module.ok());
  auto context = vm::Context::Create({native, *module});
  REQUIRE_FALSE(context.ok());
  CHECK(context.status().message().find("has no such function (it has: expect_true(i_))") != std::string::npos);

  m.imports[0] = {"check", "expect_true", "I_"};
  module = vm::BytecodeModule::LoadOwned(BuildModule(m));
  REQUIRE(module.ok());
  context = vm::Context::Create({native, *module});
  REQUIRE_FALSE(context.ok());
  CHECK(context.status().message().find("signature mismatch, the module expects 'I_' but 'check.expect_true' has 'i_'") !=
        std::string::npos);
}

TEST_CASE("missing file") {
  auto module = vm::BytecodeModule::LoadFile("/nonexistent/dir/model.smod");
  REQUIRE_FALSE(module.ok());
  CHECK(module.status().code() == StatusCode::kNotFound);
  CHECK(module.status().message().find("cannot open module file '/nonexistent/dir/model.smod'") != std::string::npos);
}

}  // namespace
}  // namespace strata::testing
