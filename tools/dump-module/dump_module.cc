// dump-module: prints what a module file holds — functions with signatures
// and register counts, imports, exports, rodata and executables with sizes,
// globals, and the disassembled bytecode.
//
//   dump-module loop.smod [--no-disassembly]
#include <cstdio>
#include <string>

#include "tools/common/tool_main.h"
#include "vm/bytecode_module.h"
#include "vm/instruction.h"

namespace strata::tools {
namespace {


Status Run(int argc, char** argv) {
  std::string path;
  bool disassemble = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--no-disassembly") {
      disassemble = false;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("usage: dump-module FILE.smod [--no-disassembly]\n");
      return OkStatus();
    } else if (!arg.empty() && arg[0] == '-') {
      return InvalidArgumentError("unknown argument '", arg, "'");
    } else if (path.empty()) {
      path = arg;
    } else {
      return InvalidArgumentError("more than one module given ('", path, "' and '", arg, "')");
    }
  }
  if (path.empty()) return InvalidArgumentError("usage: dump-module FILE.smod [--no-disassembly]");
  STRATA_ASSIGN_OR_RETURN(auto module, vm::BytecodeModule::LoadFile(path));

  std::printf("module %s (format %u.%u, %llu bytes)\n", std::string(module->name()).c_str(),
              module->version_major(), module->version_minor(),
              static_cast<unsigned long long>(module->file_size()));
  std::printf("imports: %zu\n", module->imports().size());
  for (size_t i = 0; i < module->imports().size(); ++i) {
    const auto& imp = module->imports()[i];
    std::printf("  import#%zu %s.%s (%s)\n", i, std::string(imp.module_name).c_str(),
                std::string(imp.function_name).c_str(), std::string(imp.signature).c_str());
  }
  std::printf("exports: %zu\n", module->exports().size());
  for (const auto& exp : module->exports()) {
    std::printf("  %s (%s) -> func#%u\n", std::string(exp.name).c_str(), std::string(exp.signature).c_str(), exp.ordinal);
  }
  std::printf("globals: %u scalar bytes, %u refs\n", module->global_scalar_bytes(), module->global_ref_count());
  std::printf("rodata: %zu segments\n", module->rodata().size());
  for (size_t i = 0; i < module->rodata().size(); ++i) {
    const auto& seg = module->rodata()[i];
    std::printf("  rodata#%zu %s: %zu bytes\n", i, std::string(seg.name).c_str(), seg.bytes.size());
  }
  std::printf("executables: %zu\n", module->executables().size());
  for (const auto& exe : module->executables()) {
    std::printf("  %s [%s]: %zu bytes\n", std::string(exe.name).c_str(), std::string(exe.format).c_str(), exe.data.size());
  }
  std::printf("functions: %zu\n", module->functions().size());
  for (size_t i = 0; i < module->functions().size(); ++i) {
    const auto& fn = module->functions()[i];
    std::printf("  func#%zu %s (%s): %u bytes, %u scalar + %u ref registers\n", i, std::string(fn.name).c_str(),
                std::string(fn.signature).c_str(), fn.code_length, fn.scalar_register_count, fn.ref_register_count);
    if (!disassemble) continue;
    uint32_t pc = 0;
    vm::DecodedInstruction inst;
    while (pc < fn.code_length) {
      // The module was verified at load, so decoding cannot fail here.
      STRATA_RETURN_IF_ERROR(vm::DecodeInstruction(fn.code, fn.code_length, pc, &inst));
      std::string text = vm::FormatInstruction(inst);
      if (inst.opcode == bytecode::Opcode::FAIL || inst.opcode == bytecode::Opcode::COND_FAIL) {
        uint64_t index = inst.operands[inst.operand_count - 1].value;
        text += StrCat("  \"", module->strings()[index], "\"");
      }
      std::printf("    %5u: %s\n", pc, text.c_str());
      pc += inst.size;
    }
  }
  return OkStatus();
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  return strata::tools::ToolMain("dump-module", strata::tools::Run, argc, argv);
}
