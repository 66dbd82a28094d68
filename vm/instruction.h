// Table-driven decoding of one instruction, shared by the verifier and the
// disassembler. The interpreter does not use it: it decodes inline, trusting
// what the verifier proved with this decoder.
#pragma once

#include <cstdint>
#include <string>

#include "schemas/bytecode.h"
#include "vm/base/status.h"

namespace strata::vm {

struct DecodedOperand {
  char kind;              // operand letter from bytecode_ops.def
  uint64_t value;         // register, immediate, index, target, or list count
  const uint8_t* list;    // for 'v', 'V', 'x': the first entry
};

struct DecodedInstruction {
  static constexpr int kMaxOperands = 8;
  bytecode::Opcode opcode;
  uint32_t pc;
  uint32_t size;
  int operand_count;
  DecodedOperand operands[kMaxOperands];

  const bytecode::OpInfo& info() const { return bytecode::kOpInfo[static_cast<int>(opcode)]; }
  uint16_t ListEntry(int operand, uint32_t index) const {
    return bytecode::ReadLE<uint16_t>(operands[operand].list + 2 * index);
  }
};

// Decodes the instruction at `pc`; fails if the opcode is unknown or an
// operand runs past `length`.
Status DecodeInstruction(const uint8_t* code, uint32_t length, uint32_t pc, DecodedInstruction* out);

// "add.i64 s3, s1, s2" style text; `strings` resolves 's' operands when given.
std::string FormatInstruction(const DecodedInstruction& inst);

// Register text for tagged list entries: "s3" or "r1".
std::string FormatTaggedRegister(uint16_t tagged);

}  // namespace strata::vm
