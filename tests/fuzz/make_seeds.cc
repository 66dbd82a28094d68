// Writes a seed corpus of small valid modules for module_fuzzer: arithmetic,
// calls, loops, globals, rodata, buffers and lists, so mutations start from
// inputs that reach deep into the verifier and interpreter.
#include <cstdio>
#include <cstring>
#include <string>

#include "tests/vm/module_builder.h"

namespace strata::testing {
namespace {

using bytecode::kRefTag;
using bytecode::Opcode;

bool Write(const std::string& dir, const char* name, const TestModule& m) {
  std::vector<uint8_t> bytes = BuildModule(m);
  std::string path = dir + "/" + name + ".smod";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace
}  // namespace strata::testing

int main(int argc, char** argv) {
  using namespace strata::testing;
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-fuzz-seeds DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  bool ok = true;

  {  // loop(n): sum 1..n with a fused compare-branch latch.
    TestModule m;
    Assembler a;
    a.Op(Opcode::CONST_I64).U16(1).U64(0);  // sum
    a.Op(Opcode::CONST_I64).U16(2).U64(1);  // i
    a.Op(Opcode::CONST_I64).U16(3).U64(1);  // one
    uint32_t loop = a.pc();
    a.Op(Opcode::ADD_I64).U16(1).U16(1).U16(2);
    a.Op(Opcode::ADD_I64).U16(2).U16(2).U16(3);
    a.Op(Opcode::BR_LE_I64_S).U16(2).U16(0).U32(loop);
    a.Op(Opcode::RETURN).List({1});
    m.functions = {{"loop", "I_I", a.bytes(), 4, 0}};
    m.exports = {{"loop", 0}};
    ok &= Write(dir, "loop", m);
  }
  {  // fib(n), recursive, with cond_br and calls.
    TestModule m;
    Assembler a;
    a.Op(Opcode::CONST_I32).U16(1).U32(2);
    a.Op(Opcode::CMP_LT_I32_S).U16(2).U16(0).U16(1);
    uint32_t cond = a.pc();
    a.Op(Opcode::COND_BR).U16(2).U32(0).U32(0);  // patched below
    uint32_t base = a.pc();
    a.Op(Opcode::RETURN).List({0});
    uint32_t rec = a.pc();
    a.Op(Opcode::CONST_I32).U16(1).U32(1);
    a.Op(Opcode::SUB_I32).U16(2).U16(0).U16(1);
    a.Op(Opcode::CALL).U16(0).List({2}).List({3});
    a.Op(Opcode::SUB_I32).U16(2).U16(2).U16(1);
    a.Op(Opcode::CALL).U16(0).List({2}).List({4});
    a.Op(Opcode::ADD_I32).U16(3).U16(3).U16(4);
    a.Op(Opcode::RETURN).List({3});
    std::vector<uint8_t> code = a.bytes();
    std::memcpy(&code[cond + 3], &base, 4);
    std::memcpy(&code[cond + 7], &rec, 4);
    m.functions = {{"fib", "i_i", code, 5, 0}};
    m.exports = {{"fib", 0}};
    ok &= Write(dir, "fib", m);
  }
  {  // buffers, rodata, lists, globals, fail and check imports.
    TestModule m;
    m.imports = {{"check", "expect_eq_i32", "ii_"}};
    m.strings = {"unreachable"};
    m.rodata = {{"small", {1, 2, 3, 4}, false}, {"big", std::vector<uint8_t>(200, 9), true}};
    m.global_scalar_bytes = 16;
    m.global_ref_count = 1;
    Assembler a;
    a.Op(Opcode::CONST_REF_RODATA).U16(0).U32(1);
    a.Op(Opcode::CONST_I64).U16(0).U64(4);
    a.Op(Opcode::BUFFER_LOAD_I32).U16(1).U16(0).U16(0);
    a.Op(Opcode::BUFFER_ALLOC).U16(1).U16(0);
    a.Op(Opcode::BUFFER_STORE_I32).U16(1).U16(0).U16(1);
    a.Op(Opcode::GLOBAL_STORE_REF).U16(1).U32(0);
    a.Op(Opcode::GLOBAL_STORE_I32).U16(1).U32(4);
    a.Op(Opcode::GLOBAL_LOAD_I32).U16(2).U32(4);
    a.Op(Opcode::CALL_IMPORT).U16(0).List({1, 2}).List({});
    a.Op(Opcode::LIST_ALLOC).U16(2).U16(2);
    a.Op(Opcode::LIST_RESIZE).U16(2).U16(2);
    a.Op(Opcode::CONST_I32).U16(3).U32(0);
    a.Op(Opcode::LIST_SET_REF).U16(2).U16(3).U16(1);
    a.Op(Opcode::LIST_GET_REF).U16(0).U16(2).U16(3);
    a.Op(Opcode::COND_FAIL).U16(3).U32(0);
    a.Op(Opcode::RETURN).List({uint16_t(kRefTag | 2)});
    m.functions = {{"mix", "_r", a.bytes(), 4, 3}};
    m.exports = {{"mix", 0}};
    ok &= Write(dir, "mix", m);
  }
  if (!ok) {
    std::fprintf(stderr, "make-fuzz-seeds: cannot write to '%s'\n", dir.c_str());
    return 1;
  }
  return 0;
}
