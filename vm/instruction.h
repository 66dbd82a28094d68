// Decoding one instruction with status errors, and its text, for the
// verifier and the disassembler (dump-module). The decoding itself is
// schemas/bytecode_decoder.h, which the compiler's listing uses too.
#pragma once

#include <cstdint>
#include <string>

#include "schemas/bytecode_decoder.h"
#include "vm/base/status.h"

namespace strata::vm {

using bytecode::DecodedInstruction;
using bytecode::DecodedOperand;

// Decodes the instruction at `pc`; fails if the opcode is unknown or an
// operand runs past `length`.
Status DecodeInstruction(const uint8_t* code, uint32_t length, uint32_t pc, DecodedInstruction* out);

// "add.i64 s3, s1, s2" style text; `strings` resolves 's' operands when given.
std::string FormatInstruction(const DecodedInstruction& inst);

// Register text for tagged list entries: "s3" or "r1".
std::string FormatTaggedRegister(uint16_t tagged);

}  // namespace strata::vm
