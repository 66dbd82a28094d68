#include "vm/instruction.h"

#include <cstring>

namespace strata::vm {

using bytecode::ReadLE;

Status DecodeInstruction(const uint8_t* code, uint32_t length, uint32_t pc, DecodedInstruction* out) {
  switch (bytecode::Decode(code, length, pc, out)) {
    case bytecode::DecodeResult::kOk:
      return OkStatus();
    case bytecode::DecodeResult::kPastEnd:
      return OutOfRangeError("pc ", pc, " is past the end (", length, " bytes)");
    case bytecode::DecodeResult::kUnknownOpcode:
      return InvalidArgumentError("unknown opcode 0x", Hex(code[pc]), " at pc ", pc, " (this runtime knows ",
                                  bytecode::kOpcodeCount, " opcodes)");
    case bytecode::DecodeResult::kTruncated:
      break;
  }
  return DataLossError("instruction ", bytecode::Mnemonic(out->opcode), " at pc ", pc,
                       " runs past the end of the function (", length, " bytes)");
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
      case 'e': out += StrCat("executable#", o.value); break;
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
