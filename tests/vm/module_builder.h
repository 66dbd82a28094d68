// Test-only: builds module files byte by byte, without the compiler, so the
// loader and verifier can be fed exactly the broken inputs a test needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schemas/bytecode.h"

namespace strata::testing {

// Appends instructions in the encoding of bytecode_ops.def.
class Assembler {
 public:
  Assembler& Op(bytecode::Opcode op) { bytes_.push_back(static_cast<uint8_t>(op)); return *this; }
  Assembler& U16(uint16_t v) { return Raw(&v, 2); }
  Assembler& U32(uint32_t v) { return Raw(&v, 4); }
  Assembler& U64(uint64_t v) { return Raw(&v, 8); }
  // A register list: count, then tagged registers.
  Assembler& List(std::initializer_list<uint16_t> regs) {
    U16(static_cast<uint16_t>(regs.size()));
    for (uint16_t r : regs) U16(r);
    return *this;
  }
  uint32_t pc() const { return static_cast<uint32_t>(bytes_.size()); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  Assembler& Raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  std::vector<uint8_t> bytes_;
};

struct TestFunction {
  std::string name;
  std::string signature;
  std::vector<uint8_t> code;
  uint16_t scalar_registers = 0;
  uint16_t ref_registers = 0;
  // (pc, "file:line:col") entries, written in this order.
  std::vector<std::pair<uint32_t, std::string>> locations = {};
};

struct TestImport {
  std::string module_name;
  std::string function_name;
  std::string signature;
};

struct TestRodata {
  std::string name;
  std::vector<uint8_t> bytes;
  bool external = true;
  // Overrides the recorded external range when nonzero (to corrupt it).
  uint64_t forced_length = 0;
};

struct TestModule {
  std::string name = "test";
  uint16_t version_major = bytecode::kVersionMajor;
  uint16_t version_minor = bytecode::kVersionMinor;
  std::vector<TestFunction> functions;
  std::vector<std::pair<std::string, uint16_t>> exports;
  std::vector<TestImport> imports;
  std::vector<std::string> strings;
  std::vector<TestRodata> rodata;
  // Leaves the bytecode vector out of the FlatBuffer entirely.
  bool omit_bytecode = false;
  uint32_t global_scalar_bytes = 0;
  uint32_t global_ref_count = 0;
  // Ends the file in an integrity record (schemas/integrity.h), as
  // compile-module does; a test of the loader's other checks corrupts the
  // module first and seals it after.
  bool seal = true;
};

// Serialises `module` to the on-disk format (size-prefixed FlatBuffer, padding,
// 64-byte aligned external data, integrity record).
std::vector<uint8_t> BuildModule(const TestModule& module);

// Appends an integrity record whose one part is the whole file.
void Seal(std::vector<uint8_t>& file);

}  // namespace strata::testing
