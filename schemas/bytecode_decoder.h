// The one decoder of the bytecode: one instruction at a time, read with the
// operand letters of bytecode_ops.def. The runtime's verifier and
// disassembler (vm/instruction.h, dump-module) and the compiler's listing
// (compile-module --emit=bytecode-listing) all decode with it; the
// interpreter reads operands inline at the offsets the same table gives,
// trusting what the verifier proved with this decoder.
//
// Header-only, no allocation, no dependencies beyond the C++ standard
// library, so both sides include it.
#pragma once

#include <cstdint>

#include "schemas/bytecode.h"

namespace strata::bytecode {

struct DecodedOperand {
  char kind;             // operand letter from bytecode_ops.def
  uint64_t value;        // register, immediate, index, target, or list count
  const uint8_t* list;   // for 'v', 'V', 'x': the first entry
};

// The most operands any row of the table has.
constexpr int MaxOperandCount() {
  int most = 0;
  for (int op = 0; op < kOpcodeCount; ++op) {
    int count = 0;
    for (const char* c = kOpInfo[op].operands; *c; ++c) ++count;
    most = count > most ? count : most;
  }
  return most;
}

struct DecodedInstruction {
  static constexpr int kMaxOperands = MaxOperandCount();
  Opcode opcode;
  uint32_t pc;
  uint32_t size;
  int operand_count;
  DecodedOperand operands[kMaxOperands];

  OpInfo info() const { return kOpInfo[static_cast<int>(opcode)]; }
  // Entry `index` of list operand `operand` ('v', 'V': the register; 'x': the
  // pair's source at 2 * index, its target at 2 * index + 1).
  uint16_t ListEntry(int operand, uint32_t index) const {
    return ReadLE<uint16_t>(operands[operand].list + 2 * index);
  }
};

enum class DecodeResult {
  kOk,
  kPastEnd,         // pc is at or past the end of the code
  kUnknownOpcode,   // the byte at pc is no row of the table
  kTruncated,       // an operand runs past the end of the code
};

// Decodes the instruction at `pc` of `code` (`length` bytes) into `out`.
// On kUnknownOpcode and kTruncated, out->pc is set (and out->opcode for
// kTruncated).
inline DecodeResult Decode(const uint8_t* code, uint32_t length, uint32_t pc, DecodedInstruction* out) {
  out->pc = pc;
  out->operand_count = 0;
  if (pc >= length) return DecodeResult::kPastEnd;
  const uint8_t op = code[pc];
  if (op >= kOpcodeCount) return DecodeResult::kUnknownOpcode;
  out->opcode = static_cast<Opcode>(op);
  uint64_t cursor = pc + 1;
  for (const char* letter = op_table_internal::OperandsOf(op); *letter; ++letter) {
    DecodedOperand& operand = out->operands[out->operand_count++];
    operand.kind = *letter;
    operand.list = nullptr;
    const size_t fixed = FixedOperandSize(*letter);
    if (fixed) {
      if (cursor + fixed > length) return DecodeResult::kTruncated;
      operand.value = fixed == 2 ? ReadLE<uint16_t>(code + cursor)
                    : fixed == 4 ? ReadLE<uint32_t>(code + cursor)
                                 : ReadLE<uint64_t>(code + cursor);
      cursor += fixed;
      continue;
    }
    // Lists: u16 count then entries of 2 bytes ('v', 'V') or 4 ('x').
    if (cursor + 2 > length) return DecodeResult::kTruncated;
    operand.value = ReadLE<uint16_t>(code + cursor);
    cursor += 2;
    operand.list = code + cursor;
    cursor += operand.value * (*letter == 'x' ? 4 : 2);
    if (cursor > length) return DecodeResult::kTruncated;
  }
  out->size = static_cast<uint32_t>(cursor - pc);
  return DecodeResult::kOk;
}

}  // namespace strata::bytecode
