// Invocation API behaviour that .mlir op tests cannot reach: argument
// checking, step budgets, deadlines, the call-depth limit, native imports,
// backtraces and ref-count balance.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/vm/module_builder.h"
#include "vm/buffer.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"
#include "vm/list.h"
#include "vm/native_module.h"
#include "vm/base/trace.h"

namespace strata::testing {
namespace {

using bytecode::kRefTag;
using bytecode::Opcode;
using vm::Value;

struct Loaded {
  std::unique_ptr<vm::Context> context;
  vm::FunctionHandle fn;
};

Loaded Load(const TestModule& m, const char* function, std::vector<Ref<vm::Module>> natives = {}) {
  auto module = vm::BytecodeModule::LoadOwned(BuildModule(m));
  REQUIRE_MESSAGE(module.ok(), module.status().ToString());
  natives.push_back(*module);
  auto context = vm::Context::Create(natives);
  REQUIRE_MESSAGE(context.ok(), context.status().ToString());
  auto fn = (*context)->LookupFunction(function);
  REQUIRE_MESSAGE(fn.ok(), fn.status().ToString());
  return {std::move(*context), *fn};
}

TestModule SpinModule() {
  TestModule m;
  Assembler a;
  a.Op(Opcode::BR).U32(0).U16(0);
  m.functions = {{"spin", "_", a.bytes(), 0, 0}};
  m.exports = {{"spin", 0}};
  return m;
}

TEST_CASE("arguments are checked against the signature") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::RETURN).List({0});
  m.functions = {{"id", "I_I", a.bytes(), 1, 0}};
  m.exports = {{"id", 0}};
  Loaded l = Load(m, "id");
  auto r = l.context->Invoke(l.fn, {});
  CHECK(r.status().message() == "function 'id' (signature I_I) expects 1 argument, got 0");
  Value f = Value::F32(1.0f);
  r = l.context->Invoke(l.fn, {&f, 1});
  CHECK(r.status().message() == "function 'id' argument 0: expected i64, got f32");
}

TEST_CASE("unknown function lists what exists") {
  Loaded l = Load(SpinModule(), "spin");
  auto fn = l.context->LookupFunction("spun");
  REQUIRE_FALSE(fn.ok());
  CHECK(fn.status().message() == "function 'spun' not found in module 'test'; available: spin(_)");
}

TEST_CASE("a step budget stops a runaway loop") {
  Loaded l = Load(SpinModule(), "spin");
  vm::InvocationOptions options;
  options.max_steps = 1000000;
  auto r = l.context->Invoke(l.fn, {}, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
  CHECK(r.status().message().find("step budget of 1000000") != std::string::npos);
  REQUIRE(r.status().backtrace().size() == 1);
  CHECK(r.status().backtrace()[0] == "test.spin@0");
}

TEST_CASE("a deadline stops a runaway loop") {
  Loaded l = Load(SpinModule(), "spin");
  vm::InvocationOptions options;
  options.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  auto r = l.context->Invoke(l.fn, {}, options);
  CHECK(r.status().code() == StatusCode::kDeadlineExceeded);
}

TEST_CASE("unbounded recursion hits the depth limit") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::CALL).U16(0).List({}).List({}).Op(Opcode::RETURN).List({});
  m.functions = {{"down", "_", a.bytes(), 0, 0}};
  m.exports = {{"down", 0}};
  Loaded l = Load(m, "down");
  vm::InvocationOptions options;
  options.max_call_depth = 100;
  auto r = l.context->Invoke(l.fn, {}, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "call depth limit of 100 exceeded");
  CHECK(r.status().backtrace().size() == 100);
  // The context stays usable after a failure.
  r = l.context->Invoke(l.fn, {}, options);
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
}

TEST_CASE("native imports receive arguments and their failures carry the VM backtrace") {
  auto native = vm::NativeModule::Create("host");
  int64_t seen = 0;
  REQUIRE(native->AddFunction("twice", "I_I", [&](vm::CallArgs args, vm::CallResults results) {
    seen = args[0].i64();
    results[0] = Value::I64(args[0].i64() * 2);
    return OkStatus();
  }).ok());
  REQUIRE(native->AddFunction("refuse", "_", [](vm::CallArgs, vm::CallResults) {
    return InvalidArgumentError("refused");
  }).ok());
  TestModule m;
  m.imports = {{"host", "twice", "I_I"}, {"host", "refuse", "_"}};
  Assembler a;  // main(x) = twice(x) + 1
  a.Op(Opcode::CALL_IMPORT).U16(0).List({0}).List({1});
  a.Op(Opcode::CONST_I64).U16(2).U64(1);
  a.Op(Opcode::ADD_I64).U16(1).U16(1).U16(2);
  a.Op(Opcode::RETURN).List({1});
  Assembler b;
  b.Op(Opcode::CALL_IMPORT).U16(1).List({}).List({}).Op(Opcode::RETURN).List({});
  m.functions = {{"main", "I_I", a.bytes(), 3, 0}, {"bad", "_", b.bytes(), 0, 0}};
  m.exports = {{"main", 0}, {"bad", 1}};
  Loaded l = Load(m, "main", {native});
  Value x = Value::I64(20);
  auto r = l.context->Invoke(l.fn, {&x, 1});
  REQUIRE(r.ok());
  CHECK(seen == 20);
  CHECK(r->at(0).i64() == 41);

  auto bad = l.context->LookupFunction("bad");
  REQUIRE(bad.ok());
  r = l.context->Invoke(*bad, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "in host.refuse: refused");
  CHECK(r.status().backtrace().at(0) == "test.bad@0");
}

TEST_CASE("a tracer receives the invocation and each native call, nested") {
  struct Event {
    std::string category, name;
    uint64_t begin, end;
  };
  struct Recorder final : Tracer {
    std::vector<Event> events;
    void Record(const TraceEvent& event) override {
      events.push_back({std::string(event.category), std::string(event.name), event.begin_ns, event.end_ns});
    }
  } recorder;
  auto native = vm::NativeModule::Create("host");
  REQUIRE(native->AddFunction("inc", "I_I", [](vm::CallArgs args, vm::CallResults results) {
    results[0] = Value::I64(args[0].i64() + 1);
    return OkStatus();
  }).ok());
  TestModule m;
  m.imports = {{"host", "inc", "I_I"}};
  Assembler a;  // main(x) = inc(inc(x))
  a.Op(Opcode::CALL_IMPORT).U16(0).List({0}).List({0});
  a.Op(Opcode::CALL_IMPORT).U16(0).List({0}).List({0});
  a.Op(Opcode::RETURN).List({0});
  m.functions = {{"main", "I_I", a.bytes(), 1, 0}};
  m.exports = {{"main", 0}};
  Loaded l = Load(m, "main", {native});
  Value x = Value::I64(1);
  vm::InvocationOptions options;
  options.tracer = &recorder;
  auto r = l.context->Invoke(l.fn, {&x, 1}, options);
  REQUIRE(r.ok());
  CHECK(r->at(0).i64() == 3);
  REQUIRE(recorder.events.size() == 3);
  const Event& call = recorder.events[2];  // recorded when it ends
  CHECK(call.category == "vm");
  CHECK(call.name == "test.main");
  for (int i = 0; i < 2; ++i) {
    CHECK(recorder.events[i].category == "import");
    CHECK(recorder.events[i].name == "host.inc");
    CHECK(recorder.events[i].begin >= call.begin);
    CHECK(recorder.events[i].end <= call.end);
  }
  CHECK(recorder.events[0].end <= recorder.events[1].begin);
  // Without a tracer nothing is recorded.
  recorder.events.clear();
  REQUIRE(l.context->Invoke(l.fn, {&x, 1}).ok());
  CHECK(recorder.events.empty());
}

TEST_CASE("refs are balanced across calls, lists, selects and failures") {
  // keep(buf) -> buf: stores buf in a list, reads it back, selects it,
  // passes it through a call, and returns it.
  TestModule m;
  Assembler pass;
  pass.Op(Opcode::RETURN).List({uint16_t(kRefTag | 0)});
  Assembler keep;
  keep.Op(Opcode::CONST_I32).U16(0).U32(1);
  keep.Op(Opcode::LIST_ALLOC).U16(1).U16(0);
  keep.Op(Opcode::LIST_RESIZE).U16(1).U16(0);
  keep.Op(Opcode::CONST_I32).U16(1).U32(0);
  keep.Op(Opcode::LIST_SET_REF).U16(1).U16(1).U16(0);
  keep.Op(Opcode::LIST_GET_REF).U16(2).U16(1).U16(1);
  keep.Op(Opcode::SELECT_REF).U16(3).U16(0).U16(2).U16(0);
  keep.Op(Opcode::CALL).U16(0).List({uint16_t(kRefTag | 3)}).List({uint16_t(kRefTag | 4)});
  keep.Op(Opcode::RETURN).List({uint16_t(kRefTag | 4)});
  m.functions = {{"pass", "r_r", pass.bytes(), 0, 1}, {"keep", "r_r", keep.bytes(), 2, 5}};
  m.exports = {{"keep", 1}};
  Loaded l = Load(m, "keep");
  auto buffer = vm::Buffer::Allocate(16);
  REQUIRE(buffer.ok());
  Ref<vm::Buffer> buf = std::move(buffer).value();
  CHECK(buf->ref_count() == 1);
  {
    Value arg = Value::FromRef(buf);
    auto r = l.context->Invoke(l.fn, {&arg, 1});
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->at(0).ref().get() == buf.get());
    CHECK(buf->ref_count() == 3);  // buf, arg, result
  }
  CHECK(buf->ref_count() == 1);
}

TEST_CASE("a buffer type error names both types") {
  TestModule m;
  Assembler a;
  a.Op(Opcode::CONST_I32).U16(0).U32(0);
  a.Op(Opcode::LIST_ALLOC).U16(0).U16(0);
  a.Op(Opcode::BUFFER_LENGTH).U16(1).U16(0);
  a.Op(Opcode::RETURN).List({});
  m.functions = {{"f", "_", a.bytes(), 2, 1}};
  m.exports = {{"f", 0}};
  Loaded l = Load(m, "f");
  auto r = l.context->Invoke(l.fn, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "buffer.length: expected a vm.buffer, got vm.list");
  CHECK(r.status().backtrace().at(0) == "test.f@12");
}

TEST_CASE("lists cannot form reference cycles, so counting frees them") {
  auto a = vm::List::Create(1);
  auto b = vm::List::Create(1);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE((*a)->Resize(1).ok());
  REQUIRE((*b)->Resize(1).ok());
  Ref<vm::List> inner = *b;
  REQUIRE((*a)->Set(0, Value::FromRef(inner)).ok());
  CHECK(inner->ref_count() == 3);  // b, inner, a's element
  Status cycle = inner->Set(0, Value::FromRef(*a));
  CHECK(cycle.code() == StatusCode::kInvalidArgument);
  CHECK(cycle.message() == "list.set: storing a list into element 0 would make the list hold itself (a "
                           "reference cycle)");
  CHECK((*a)->ref_count() == 1);  // the refused store kept nothing
  a = vm::List::Create(0);        // releases the first a and its element
  b = vm::List::Create(0);
  CHECK(inner->ref_count() == 1);
}

}  // namespace
}  // namespace strata::testing
