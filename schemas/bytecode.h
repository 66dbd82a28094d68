// The bytecode format in C++ terms: opcode enum, per-opcode operand strings
// (from bytecode_ops.def), the module format version and little helpers shared
// by the compiler's emitter and the runtime's verifier, interpreter and
// disassembler. Header-only, no dependencies beyond the C++ standard library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata::bytecode {

// Module format version written by this compiler and accepted by this
// runtime. A runtime refuses modules with a newer major version.
inline constexpr uint16_t kVersionMajor = 1;
inline constexpr uint16_t kVersionMinor = 2;

// External data (rodata, executables) is aligned to this many bytes.
inline constexpr uint64_t kExternalAlignment = 64;

enum class Opcode : uint8_t {
#define STRATA_OP(name, mnemonic, operands) name,
#include "schemas/bytecode_ops.def"
#undef STRATA_OP
};

inline constexpr int kOpcodeCount = 0
#define STRATA_OP(name, mnemonic, operands) +1
#include "schemas/bytecode_ops.def"
#undef STRATA_OP
    ;
static_assert(kOpcodeCount <= 256, "opcodes are one byte");

struct OpInfo {
  const char* mnemonic;
  const char* operands;  // see bytecode_ops.def for the letters
  // Formed by the emitter from adjacent instructions; no dialect op.
  bool superinstruction;
};

inline constexpr OpInfo kOpInfo[] = {
#define STRATA_OP(name, mnemonic, operands) {mnemonic, operands, false},
#define STRATA_SUPER_OP(name, mnemonic, operands) {mnemonic, operands, true},
#include "schemas/bytecode_ops.def"
#undef STRATA_SUPER_OP
#undef STRATA_OP
};

constexpr const char* Mnemonic(Opcode op) { return kOpInfo[static_cast<size_t>(op)].mnemonic; }

// Bit 15 of a register in a list or remap marks the ref bank.
inline constexpr uint16_t kRefTag = 0x8000;
inline constexpr uint16_t kMaxRegistersPerBank = 0x8000;

// Fixed encoded size of one operand letter; lists ('v', 'V', 'x') are
// variable and return 0 here.
constexpr size_t FixedOperandSize(char c) {
  switch (c) {
    case 'i': case 'I': case 'l': case 'L': case 'f': case 'F':
    case 'd': case 'D': case 'r': case 'R': case 'k': case 'm':
      return 2;
    case '4': case 'b': case 's': case 'o': case 'g': case 'h': case 'e':
      return 4;
    case '8':
      return 8;
    default:
      return 0;
  }
}

// Byte offset of operand `index` of `op` from the opcode byte, when every
// operand before it has a fixed size; 0 when a list comes first or there is
// no such operand. Read from the table, so nothing restates an offset.
constexpr size_t OperandOffset(Opcode op, size_t index) {
  const char* operands = kOpInfo[static_cast<size_t>(op)].operands;
  size_t offset = 1;
  for (size_t i = 0; i < index; ++i) {
    if (operands[i] == '\0') return 0;
    const size_t size = FixedOperandSize(operands[i]);
    if (size == 0) return 0;
    offset += size;
  }
  return operands[index] == '\0' ? 0 : offset;
}

// The operand letter at `index` of `op`, or '\0' past the last.
constexpr char OperandLetter(Opcode op, size_t index) {
  const char* operands = kOpInfo[static_cast<size_t>(op)].operands;
  for (size_t i = 0; i < index; ++i) {
    if (operands[i] == '\0') return '\0';
  }
  return operands[index];
}

// The encoded size of `op` when it has no list operand; 0 when it has one
// (its size is known only from the instruction's bytes).
constexpr size_t FixedInstructionSize(Opcode op) {
  size_t size = 1;
  for (const char* c = kOpInfo[static_cast<size_t>(op)].operands; *c; ++c) {
    const size_t operand = FixedOperandSize(*c);
    if (operand == 0) return 0;
    size += operand;
  }
  return size;
}

// Signature characters (see module.fbs).
enum class SigType : char { kI32 = 'i', kI64 = 'I', kF32 = 'f', kF64 = 'F', kRef = 'r' };

inline bool IsSignatureChar(char c) {
  return c == 'i' || c == 'I' || c == 'f' || c == 'F' || c == 'r';
}

template <typename T>
inline T ReadLE(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // x86_64 and aarch64 are little-endian
  return v;
}

}  // namespace strata::bytecode
