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

// One row of bytecode_ops.def.
struct OpInfo {
  const char* mnemonic;
  const char* operands;  // see bytecode_ops.def for the letters
  // Formed by the emitter from adjacent instructions; no dialect op.
  bool superinstruction;
};

namespace op_table_internal {

// The rows as written; read only while compiling, to build the columns.
inline constexpr OpInfo kRows[] = {
#define STRATA_OP(name, mnemonic, operands) {mnemonic, operands, false},
#define STRATA_SUPER_OP(name, mnemonic, operands) {mnemonic, operands, true},
#include "schemas/bytecode_ops.def"
#undef STRATA_SUPER_OP
#undef STRATA_OP
};

constexpr size_t Length(const char* text) {
  size_t n = 0;
  while (text[n]) ++n;
  return n;
}

constexpr bool Equal(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

// The strings of one column of the rows (mnemonics or operand letters), each
// distinct string once.
template <const char* OpInfo::*kColumn>
constexpr size_t FirstSame(size_t row) {
  for (size_t i = 0; i < row; ++i) {
    if (Equal(kRows[i].*kColumn, kRows[row].*kColumn)) return i;
  }
  return row;
}

template <const char* OpInfo::*kColumn>
constexpr size_t PoolSize() {
  size_t size = 0;
  for (size_t i = 0; i < kOpcodeCount; ++i) {
    if (FirstSame<kColumn>(i) == i) size += Length(kRows[i].*kColumn) + 1;
  }
  return size;
}

// One column as the runtime holds it: its strings in one pool, rows as
// 16-bit offsets into it -- no pointers, so nothing for the dynamic linker
// to relocate. Mnemonics and operands are separate objects, so a runtime
// that prints no mnemonic (no status messages) links none.
template <const char* OpInfo::*kColumn>
struct Column {
  char pool[PoolSize<kColumn>()];
  uint16_t offset[kOpcodeCount];
  static_assert(sizeof(pool) <= 0x10000, "offsets are 16 bits");
};

template <const char* OpInfo::*kColumn>
constexpr Column<kColumn> BuildColumn() {
  Column<kColumn> column{};
  size_t at = 0;
  for (size_t i = 0; i < kOpcodeCount; ++i) {
    const size_t first = FirstSame<kColumn>(i);
    if (first != i) {
      column.offset[i] = column.offset[first];
      continue;
    }
    column.offset[i] = static_cast<uint16_t>(at);
    const char* text = kRows[i].*kColumn;
    for (size_t k = 0; text[k]; ++k) column.pool[at++] = text[k];
    column.pool[at++] = '\0';
  }
  return column;
}

inline constexpr Column<&OpInfo::mnemonic> kMnemonics = BuildColumn<&OpInfo::mnemonic>();
inline constexpr Column<&OpInfo::operands> kOperands = BuildColumn<&OpInfo::operands>();

constexpr bool IsSuperinstruction(size_t op) {
  switch (op) {
#define STRATA_OP(name, mnemonic, operands)
#define STRATA_SUPER_OP(name, mnemonic, operands) case static_cast<size_t>(Opcode::name): return true;
#include "schemas/bytecode_ops.def"
#undef STRATA_SUPER_OP
#undef STRATA_OP
    default: return false;
  }
}

constexpr const char* MnemonicOf(size_t op) { return kMnemonics.pool + kMnemonics.offset[op]; }
constexpr const char* OperandsOf(size_t op) { return kOperands.pool + kOperands.offset[op]; }

// kOpInfo[op]: the row of `op`.
struct OpInfoTable {
  constexpr OpInfo operator[](size_t op) const { return {MnemonicOf(op), OperandsOf(op), IsSuperinstruction(op)}; }
};

}  // namespace op_table_internal

// The rows of bytecode_ops.def by opcode: kOpInfo[op].mnemonic, .operands,
// .superinstruction.
inline constexpr op_table_internal::OpInfoTable kOpInfo{};

constexpr const char* Mnemonic(Opcode op) { return op_table_internal::MnemonicOf(static_cast<size_t>(op)); }

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
  const char* operands = op_table_internal::OperandsOf(static_cast<size_t>(op));
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
  const char* operands = op_table_internal::OperandsOf(static_cast<size_t>(op));
  for (size_t i = 0; i < index; ++i) {
    if (operands[i] == '\0') return '\0';
  }
  return operands[index];
}

// The encoded size of `op` when it has no list operand; 0 when it has one
// (its size is known only from the instruction's bytes).
constexpr size_t FixedInstructionSize(Opcode op) {
  size_t size = 1;
  for (const char* c = op_table_internal::OperandsOf(static_cast<size_t>(op)); *c; ++c) {
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
