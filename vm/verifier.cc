#include "vm/verifier.h"

#include <vector>

#include "vm/bytecode_module.h"
#include "vm/instruction.h"

namespace strata::vm {
namespace {

using bytecode::kRefTag;
using bytecode::Opcode;

class FunctionVerifier {
 public:
  FunctionVerifier(const BytecodeModule& module, uint32_t ordinal)
      : module_(module), fn_(module.functions()[ordinal]) {}

  Status Verify() {
    // Arguments arrive in registers 0.. of their bank, so the banks must be
    // large enough to hold them.
    uint32_t scalar_args = 0, ref_args = 0;
    for (char c : fn_.arg_types) (c == 'r' ? ref_args : scalar_args)++;
    if (scalar_args > fn_.scalar_register_count || ref_args > fn_.ref_register_count) {
      return Error(0, "signature '", fn_.signature, "' passes ", scalar_args, " scalar and ", ref_args,
                   " ref arguments but the function declares ", fn_.scalar_register_count, " scalar and ",
                   fn_.ref_register_count, " ref registers");
    }
    if (fn_.code_length == 0) return Error(0, "function has no bytecode");

    std::vector<bool> starts(fn_.code_length, false);
    std::vector<std::pair<uint32_t, uint32_t>> targets;  // (pc of branch, target)
    uint32_t pc = 0;
    DecodedInstruction inst;
    while (pc < fn_.code_length) {
      Status status = DecodeInstruction(fn_.code, fn_.code_length, pc, &inst);
      if (!status.ok()) return status.Annotate(Where(pc), ": ");
      starts[pc] = true;
      for (int i = 0; i < inst.operand_count; ++i) {
        STRATA_RETURN_IF_ERROR(CheckOperand(inst, i, &targets));
      }
      STRATA_RETURN_IF_ERROR(CheckCallShape(inst));
      pc += inst.size;
      last_ = inst.opcode;
    }
    if (last_ != Opcode::BR && last_ != Opcode::COND_BR && last_ != Opcode::RETURN &&
        last_ != Opcode::FAIL) {
      return Error(inst.pc, "the last instruction (", STRATA_FOR_MESSAGE(bytecode::kOpInfo[int(last_)].mnemonic),
                   ") can fall off the end of the function; expected br, cond_br, return or fail");
    }
    for (auto [from, target] : targets) {
      if (target >= fn_.code_length || !starts[target]) {
        return Error(from, "branch target ", target,
                     target >= fn_.code_length ? " is past the end of the function"
                                               : " is in the middle of an instruction");
      }
    }
    return OkStatus();
  }

 private:
  template <typename... Args>
  Status Error(uint32_t pc, const Args&... args) {
    return InvalidArgumentError(Where(pc), ": ", args...);
  }
  std::string Where(uint32_t pc) const {
    return StrCat("invalid bytecode in function '", fn_.name, "' at pc ", pc);
  }

  Status CheckRegister(const DecodedInstruction& inst, bool ref, uint64_t reg, const char* role) {
    uint32_t count = ref ? fn_.ref_register_count : fn_.scalar_register_count;
    if (reg >= count) {
      return Error(inst.pc, STRATA_FOR_MESSAGE(inst.info().mnemonic), " ", role, " uses ", ref ? "ref" : "scalar",
                   " register ", reg, " but the function declares ", count);
    }
    return OkStatus();
  }

  Status CheckTagged(const DecodedInstruction& inst, uint16_t tagged, const char* role) {
    return CheckRegister(inst, tagged & kRefTag, tagged & ~kRefTag, role);
  }

  Status CheckOperand(const DecodedInstruction& inst, int i,
                      std::vector<std::pair<uint32_t, uint32_t>>* targets) {
    const DecodedOperand& o = inst.operands[i];
    const std::string role = STRATA_FOR_MESSAGE(StrCat("operand ", i));
    switch (o.kind) {
      case 'i': case 'I': case 'l': case 'L': case 'f': case 'F': case 'd': case 'D':
        return CheckRegister(inst, false, o.value, role.c_str());
      case 'r': case 'R':
        return CheckRegister(inst, true, o.value, role.c_str());
      case 'b':
        targets->emplace_back(inst.pc, static_cast<uint32_t>(o.value));
        return OkStatus();
      case 'x':
        for (uint32_t k = 0; k < o.value; ++k) {
          uint16_t src = bytecode::ReadLE<uint16_t>(o.list + 4 * k);
          uint16_t dst = bytecode::ReadLE<uint16_t>(o.list + 4 * k + 2);
          STRATA_RETURN_IF_ERROR(CheckTagged(inst, src, "remap source"));
          STRATA_RETURN_IF_ERROR(CheckTagged(inst, dst, "remap destination"));
          if ((src ^ dst) & kRefTag) {
            return Error(inst.pc, "br remap ", k, " moves between the scalar and ref banks (",
                         FormatTaggedRegister(src), " -> ", FormatTaggedRegister(dst), ")");
          }
        }
        return OkStatus();
      case 'v': case 'V':
        for (uint32_t k = 0; k < o.value; ++k) {
          STRATA_RETURN_IF_ERROR(CheckTagged(inst, inst.ListEntry(i, k), o.kind == 'v' ? "argument" : "result"));
        }
        return OkStatus();
      case 'k':
        if (o.value >= module_.functions().size()) {
          return Error(inst.pc, "call to function ", o.value, " but the module has ",
                       module_.functions().size());
        }
        return OkStatus();
      case 'm':
        if (o.value >= module_.imports().size()) {
          return Error(inst.pc, "call to import ", o.value, " but the module has ",
                       module_.imports().size());
        }
        return OkStatus();
      case 's':
        if (o.value >= module_.strings().size()) {
          return Error(inst.pc, "string ", o.value, " but the module has ", module_.strings().size());
        }
        return OkStatus();
      case 'o':
        if (o.value >= module_.rodata().size()) {
          return Error(inst.pc, "rodata segment ", o.value, " but the module has ", module_.rodata().size());
        }
        return OkStatus();
      case 'e':
        if (o.value >= module_.executable_groups().size()) {
          return Error(inst.pc, "executable ", o.value, " but the module embeds ",
                       module_.executable_groups().size());
        }
        return OkStatus();
      case 'g': {
        // The access width comes from the value operand's type letter.
        char value_kind = inst.operands[0].kind;
        uint64_t width = (value_kind == 'l' || value_kind == 'L' || value_kind == 'd' || value_kind == 'D') ? 8 : 4;
        if (o.value % width != 0 || o.value + width > module_.global_scalar_bytes()) {
          return Error(inst.pc, STRATA_FOR_MESSAGE(inst.info().mnemonic), " accesses global bytes [", o.value, ", ",
                       o.value + width, ") but globals are ", module_.global_scalar_bytes(),
                       " bytes (and the offset must be ", width, "-byte aligned)");
        }
        return OkStatus();
      }
      case 'h':
        if (o.value >= module_.global_ref_count()) {
          return Error(inst.pc, "ref global ", o.value, " but the module has ", module_.global_ref_count());
        }
        return OkStatus();
      default:
        return OkStatus();
    }
  }

  // A list of tagged registers must match a run of signature characters in
  // count and bank.
  Status CheckListAgainst(const DecodedInstruction& inst, int operand, std::string_view types,
                          const char* what, std::string_view callee) {
    const DecodedOperand& o = inst.operands[operand];
    if (o.value != types.size()) {
      return Error(inst.pc, what, " of '", callee, "' (signature '", types, "'): expected ",
                   types.size(), ", got ", o.value);
    }
    for (uint32_t k = 0; k < o.value; ++k) {
      bool is_ref = inst.ListEntry(operand, k) & kRefTag;
      if (is_ref != (types[k] == 'r')) {
        return Error(inst.pc, what, " ", k, " of '", callee, "': expected a ",
                     types[k] == 'r' ? "ref" : "scalar", " register, got ",
                     FormatTaggedRegister(inst.ListEntry(operand, k)));
      }
    }
    return OkStatus();
  }

  Status CheckCallShape(const DecodedInstruction& inst) {
    switch (inst.opcode) {
      case Opcode::CALL: {
        const FunctionInfo& callee = module_.functions()[inst.operands[0].value];
        STRATA_RETURN_IF_ERROR(CheckListAgainst(inst, 1, callee.arg_types, "arguments", callee.name));
        return CheckListAgainst(inst, 2, callee.result_types, "results", callee.name);
      }
      case Opcode::CALL_IMPORT: {
        const ImportInfo& callee = module_.imports()[inst.operands[0].value];
        const std::string name = STRATA_FOR_MESSAGE(StrCat(callee.module_name, ".", callee.function_name));
        STRATA_RETURN_IF_ERROR(CheckListAgainst(inst, 1, callee.arg_types, "arguments", name));
        return CheckListAgainst(inst, 2, callee.result_types, "results", name);
      }
      case Opcode::RETURN:
        return CheckListAgainst(inst, 0, fn_.result_types, "returned values", fn_.name);
      default:
        return OkStatus();
    }
  }

  const BytecodeModule& module_;
  const FunctionInfo& fn_;
  Opcode last_ = Opcode::RETURN;
};

}  // namespace

Status VerifyFunctionBytecode(const BytecodeModule& module, uint32_t function_ordinal) {
  return FunctionVerifier(module, function_ordinal).Verify();
}

}  // namespace strata::vm
