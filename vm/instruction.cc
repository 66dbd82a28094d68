#include "vm/instruction.h"

#include <cstring>

namespace strata::vm {

using bytecode::ReadLE;

Status DecodeInstruction(const uint8_t* code, uint32_t length, uint32_t pc, DecodedInstruction* out) {
  if (pc >= length) return OutOfRangeError("pc ", pc, " is past the end (", length, " bytes)");
  uint8_t op = code[pc];
  if (op >= bytecode::kOpcodeCount) {
    return InvalidArgumentError("unknown opcode 0x", Hex(op), " at pc ", pc,
                                " (this runtime knows ", bytecode::kOpcodeCount, " opcodes)");
  }
  out->opcode = static_cast<bytecode::Opcode>(op);
  out->pc = pc;
  out->operand_count = 0;
  const char* letters = bytecode::kOpInfo[op].operands;
  uint64_t cursor = pc + 1;
  auto truncated = [&]() {
    return DataLossError("instruction ", bytecode::kOpInfo[op].mnemonic, " at pc ", pc,
                         " runs past the end of the function (", length, " bytes)");
  };
  for (const char* l = letters; *l; ++l) {
    DecodedOperand& operand = out->operands[out->operand_count++];
    operand.kind = *l;
    operand.list = nullptr;
    size_t fixed = bytecode::FixedOperandSize(*l);
    if (fixed) {
      if (cursor + fixed > length) return truncated();
      operand.value = fixed == 2 ? ReadLE<uint16_t>(code + cursor)
                    : fixed == 4 ? ReadLE<uint32_t>(code + cursor)
                                 : ReadLE<uint64_t>(code + cursor);
      cursor += fixed;
      continue;
    }
    // Lists: u16 count then entries of 2 bytes ('v', 'V') or 4 ('x').
    if (cursor + 2 > length) return truncated();
    operand.value = ReadLE<uint16_t>(code + cursor);
    cursor += 2;
    operand.list = code + cursor;
    cursor += operand.value * (*l == 'x' ? 4 : 2);
    if (cursor > length) return truncated();
  }
  out->size = static_cast<uint32_t>(cursor - pc);
  return OkStatus();
}

std::string FormatTaggedRegister(uint16_t tagged) {
  return (tagged & bytecode::kRefTag) ? StrCat("r", tagged & ~bytecode::kRefTag) : StrCat("s", tagged);
}

std::string FormatInstruction(const DecodedInstruction& inst) {
  std::string out = inst.info().mnemonic;
  for (int i = 0; i < inst.operand_count; ++i) {
    const DecodedOperand& o = inst.operands[i];
    out += i == 0 ? " " : ", ";
    switch (o.kind) {
      case 'i': case 'I': case 'l': case 'L': case 'f': case 'F': case 'd': case 'D':
        out += StrCat("s", o.value);
        break;
      case 'r': case 'R':
        out += StrCat("r", o.value);
        break;
      case '4': {
        uint32_t bits = static_cast<uint32_t>(o.value);
        if (inst.opcode == bytecode::Opcode::CONST_F32) {
          float f;
          std::memcpy(&f, &bits, 4);
          out += StrCat(f);
        } else {
          out += StrCat(static_cast<int32_t>(bits));
        }
        break;
      }
      case '8':
        if (inst.opcode == bytecode::Opcode::CONST_F64) {
          double d;
          std::memcpy(&d, &o.value, 8);
          out += StrCat(d);
        } else {
          out += StrCat(static_cast<int64_t>(o.value));
        }
        break;
      case 'b': out += StrCat("@", o.value); break;
      case 'k': out += StrCat("func#", o.value); break;
      case 'm': out += StrCat("import#", o.value); break;
      case 's': out += StrCat("string#", o.value); break;
      case 'o': out += StrCat("rodata#", o.value); break;
      case 'g': out += StrCat("global+", o.value); break;
      case 'h': out += StrCat("refglobal#", o.value); break;
      case 'v': case 'V': {
        out += "(";
        for (uint32_t k = 0; k < o.value; ++k) {
          if (k) out += ", ";
          out += FormatTaggedRegister(inst.ListEntry(i, k));
        }
        out += ")";
        break;
      }
      case 'x': {
        out += "[";
        for (uint32_t k = 0; k < o.value; ++k) {
          if (k) out += ", ";
          out += FormatTaggedRegister(ReadLE<uint16_t>(o.list + 4 * k)) + "->" +
                 FormatTaggedRegister(ReadLE<uint16_t>(o.list + 4 * k + 2));
        }
        out += "]";
        break;
      }
      default: out += "?";
    }
  }
  return out;
}

}  // namespace strata::vm
