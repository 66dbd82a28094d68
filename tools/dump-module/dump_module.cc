// dump-module: prints what a module file holds — imports and exports,
// globals, rodata, the embedded executables with their formats, sizes and
// entry points (names, binding and push-constant counts, read-only bindings,
// workgroup sizes, from each format's metadata), and the functions with their
// signatures, register counts, recorded source types, planned transient
// memory and disassembled bytecode (left out with --no-disassembly).
//
//   dump-module mlp.smod [--no-disassembly]
//
// The module is loaded and verified as run-module loads it, so a file that
// dumps is one that loads. Executable metadata is not part of that check
// (devices check it when they prepare an executable): metadata that does not
// parse is reported where it stands, the rest is still printed, and the exit
// status is 1.
#include <cstdio>
#include <string>
#include <vector>

#include "drivers/cpu/cpu_executable.h"
#include <optional>

#include "strata/schemas/cuda_executable_generated.h"
#include "strata/schemas/rocm_executable_generated.h"
#include "strata/schemas/vulkan_executable_generated.h"
#include "tools/common/program.h"
#include "tools/common/tool_main.h"
#include "vm/bytecode_module.h"
#include "vm/instruction.h"

namespace strata::tools {
namespace {

constexpr char kUsage[] = "usage: dump-module FILE.smod [--no-disassembly]";

// "3 bindings (0, 1 read-only), 1 push constant, workgroup size 64x1x1".
std::string DescribeEntryPoint(const hal::EntryPointInfo& entry) {
  std::string read_only;
  for (uint32_t b = 0; b < entry.binding_count; ++b) {
    if ((entry.read_only_bindings >> b) & 1) read_only += StrCat(read_only.empty() ? "" : ", ", b);
  }
  std::string out = StrCat(entry.binding_count, " binding", entry.binding_count == 1 ? "" : "s");
  if (!read_only.empty()) out += StrCat(" (", read_only, " read-only)");
  if (entry.scratch_bytes) out += StrCat(", binding ", entry.binding_count - 1, " is ", entry.scratch_bytes, " bytes of scratch");
  out += StrCat(", ", entry.constant_count, " push constant", entry.constant_count == 1 ? "" : "s");
  const uint32_t* size = entry.workgroup_size;
  if (size[0] || size[1] || size[2]) out += StrCat(", workgroup size ", size[0], "x", size[1], "x", size[2]);
  if (entry.local_memory_bytes) out += StrCat(", ", entry.local_memory_bytes, " bytes of local memory per thread");
  if (entry.ascending_workgroups) out += ", workgroups in ascending order";
  return out;
}

// The entry points of a GPU executable's metadata: the fields every GPU
// format's EntryPointDef has.
template <typename EntryPoints>
std::vector<hal::EntryPointInfo> ReadGpuEntryPoints(const EntryPoints* defs) {
  std::vector<hal::EntryPointInfo> entries;
  if (!defs) return entries;
  for (const auto* entry : *defs) {
    hal::EntryPointInfo info;
    info.name = entry->name() ? entry->name()->str() : "";
    info.binding_count = entry->binding_count();
    info.constant_count = entry->constant_count();
    if (const auto* read_only = entry->binding_read_only()) {
      for (uint32_t b = 0; b < read_only->size() && b < 32; ++b) {
        if (read_only->Get(b)) info.read_only_bindings |= 1u << b;
      }
    }
    if (const auto* size = entry->workgroup_size(); size && size->size() == 3) {
      for (int d = 0; d < 3; ++d) info.workgroup_size[d] = size->Get(d);
    }
    if (const auto* checks = entry->check_messages()) {
      for (const flatbuffers::String* message : *checks) info.check_messages.push_back(message->str());
    }
    entries.push_back(std::move(info));
  }
  return entries;
}

// The root of a GPU executable's metadata, verified; null when the bytes are
// not one.
template <typename Def>
const Def* VerifiedRoot(std::span<const uint8_t> bytes, const char* identifier,
                        bool (*verify)(flatbuffers::Verifier&)) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (bytes.size() < 8 || !flatbuffers::BufferHasIdentifier(bytes.data(), identifier) || !verify(verifier)) {
    return nullptr;
  }
  return flatbuffers::GetRoot<Def>(bytes.data());
}

// The entry points of a GPU executable ("vulkan-spirv", "cuda-ptx",
// "rocm-hsaco") and a line saying what it holds or requires: the SPIR-V
// version and capabilities, the PTX and cubin images, the code objects.
// Fails for metadata that is not the format's, and for a format that is not
// a GPU one (nullopt).
std::optional<StatusOr<std::vector<hal::EntryPointInfo>>> ParseGpuMetadata(std::string_view format,
                                                                            std::span<const uint8_t> bytes,
                                                                            std::string* holds) {
  const auto invalid = [&](const char* root) {
    return StatusOr<std::vector<hal::EntryPointInfo>>(DataLossError("the metadata is not a valid ", root));
  };
  if (format == "vulkan-spirv") {
    namespace fb = schema::vulkan;
    const auto* def = VerifiedRoot<fb::VulkanExecutableDef>(bytes, fb::VulkanExecutableDefIdentifier(),
                                                            fb::VerifyVulkanExecutableDefBuffer);
    if (!def) return invalid("VulkanExecutableDef");
    *holds = StrCat("requires SPIR-V ", def->spirv_version() >> 16, ".", (def->spirv_version() >> 8) & 0xff);
    if (def->required_capabilities()) {
      for (const flatbuffers::String* name : *def->required_capabilities()) *holds += StrCat(", ", name->str());
    }
    if (def->workgroup_memory_bytes()) {
      *holds += StrCat(", ", def->workgroup_memory_bytes(), " bytes of workgroup memory");
    }
    return ReadGpuEntryPoints(def->entry_points());
  }
  if (format == "cuda-ptx") {
    namespace fb = schema::cuda;
    const auto* def = VerifiedRoot<fb::CudaExecutableDef>(bytes, fb::CudaExecutableDefIdentifier(),
                                                          fb::VerifyCudaExecutableDefBuffer);
    if (!def) return invalid("CudaExecutableDef");
    *holds = StrCat("PTX ", def->ptx_version() / 10, ".", def->ptx_version() % 10, " images:");
    if (def->images()) {
      for (const fb::ImageDef* image : *def->images()) {
        *holds += StrCat(" ", image->kind() == fb::ImageKind::Cubin ? "cubin" : "ptx", " sm_", image->arch(),
                         image->arch_specific() ? "a" : "", " (",
                         image->size(), " bytes)");
      }
    }
    return ReadGpuEntryPoints(def->entry_points());
  }
  if (format == "rocm-hsaco") {
    namespace fb = schema::rocm;
    const auto* def = VerifiedRoot<fb::RocmExecutableDef>(bytes, fb::RocmExecutableDefIdentifier(),
                                                          fb::VerifyRocmExecutableDefBuffer);
    if (!def) return invalid("RocmExecutableDef");
    *holds = "code objects:";
    if (def->code_objects()) {
      for (const fb::CodeObjectDef* object : *def->code_objects()) {
        *holds += StrCat(" ", object->arch() ? object->arch()->string_view() : "?", " v",
                         object->code_object_version(), " (", object->size(), " bytes)");
      }
    }
    return ReadGpuEntryPoints(def->entry_points());
  }
  return std::nullopt;
}

// Prints one executable; fails when its metadata does not parse.
Status PrintExecutable(const vm::ExecutableInfo& exe) {
  std::printf("  %s [%s]: %zu bytes, %zu bytes of metadata\n", std::string(exe.name).c_str(),
              std::string(exe.format).c_str(), exe.data.size(), exe.metadata.size());
  std::string holds;
  if (auto entry_points = ParseGpuMetadata(exe.format, exe.metadata, &holds)) {
    if (!entry_points->ok()) {
      std::printf("    (entry points: %s)\n", entry_points->status().ToString().c_str());
      return entry_points->status();
    }
    std::printf("    %s\n", holds.c_str());
    for (size_t i = 0; i < (*entry_points)->size(); ++i) {
      const hal::EntryPointInfo& entry = (**entry_points)[i];
      std::printf("    entry#%zu %s: %s\n", i, entry.name.c_str(), DescribeEntryPoint(entry).c_str());
    }
    return OkStatus();
  }
  if (!cpu::IsCpuExecutableFormat(exe.format)) {
    std::printf("    (entry points: the %s metadata format is not known to this build)\n",
                std::string(exe.format).c_str());
    return OkStatus();
  }
  hal::ExecutableParams params;
  params.name = exe.name;
  params.format = exe.format;
  params.metadata = exe.metadata;
  auto entry_points = cpu::ParseCpuExecutableMetadata(params);
  if (!entry_points.ok()) {
    std::printf("    (entry points: %s)\n", entry_points.status().ToString().c_str());
    return entry_points.status();
  }
  for (size_t i = 0; i < entry_points->size(); ++i) {
    const hal::EntryPointInfo& entry = (*entry_points)[i];
    std::printf("    entry#%zu %s: %s\n", i, entry.name.c_str(), DescribeEntryPoint(entry).c_str());
  }
  return OkStatus();
}

Status Run(int argc, char** argv) {
  std::string path;
  bool disassemble = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--no-disassembly") {
      disassemble = false;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s\n", kUsage);
      return OkStatus();
    } else if (!arg.empty() && arg[0] == '-') {
      return InvalidArgumentError("unknown argument '", arg, "'");
    } else if (path.empty()) {
      path = arg;
    } else {
      return InvalidArgumentError("more than one module given ('", path, "' and '", arg, "')");
    }
  }
  if (path.empty()) return InvalidArgumentError(kUsage);
  // A damaged module is still shown as far as it parses; the integrity
  // check is reported on its own line and fails the exit status.
  STRATA_ASSIGN_OR_RETURN(auto module, vm::BytecodeModule::LoadFile(path, {.verify = false}));
  Status integrity_status = vm::CheckIntegrity(module->file_bytes(), {}).status();

  std::printf("module %s (format %u.%u, %llu bytes)\n", std::string(module->name()).c_str(),
              module->version_major(), module->version_minor(),
              static_cast<unsigned long long>(module->file_size()));
  if (integrity_status.ok()) {
    vm::IntegrityInfo integrity = vm::DescribeIntegrity(module->file_bytes());
    std::printf("integrity: %u parts match their digests, %s\n", integrity.part_count,
                integrity.is_signed ? "signed" : "unsigned");
  } else {
    std::printf("integrity: %s\n", integrity_status.ToString().c_str());
  }
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
  Status metadata_status;
  for (const auto& exe : module->executables()) {
    Status status = PrintExecutable(exe);
    if (metadata_status.ok()) metadata_status = std::move(status);
  }
  std::printf("functions: %zu\n", module->functions().size());
  for (size_t i = 0; i < module->functions().size(); ++i) {
    const auto& fn = module->functions()[i];
    std::printf("  func#%zu %s (%s): %u bytes, %u scalar + %u ref registers\n", i, std::string(fn.name).c_str(),
                std::string(fn.signature).c_str(), fn.code_length, fn.scalar_register_count, fn.ref_register_count);
    if (!fn.source_arg_types.empty() || !fn.source_result_types.empty()) {
      std::printf("    source types: %s\n", runtime::DescribeFunction("", fn).c_str());
    }
    std::printf("    transient memory: %llu bytes\n", static_cast<unsigned long long>(fn.transient_bytes));
    if (!disassemble) continue;
    uint32_t pc = 0;
    vm::DecodedInstruction inst;
    while (pc < fn.code_length) {
      // The module was verified at load, so decoding cannot fail here.
      STRATA_RETURN_IF_ERROR(vm::DecodeInstruction(fn.code, fn.code_length, pc, &inst));
      std::string text = vm::FormatInstruction(inst);
      if (inst.opcode == bytecode::Opcode::FAIL || inst.opcode == bytecode::Opcode::COND_FAIL ||
          inst.opcode == bytecode::Opcode::CHECK_EQ_I64 || inst.opcode == bytecode::Opcode::CHECK_LE_I64_S) {
        uint64_t index = inst.operands[inst.operand_count - 1].value;
        text += StrCat("  \"", module->strings()[index], "\"");
      }
      std::printf("    %5u: %s\n", pc, text.c_str());
      pc += inst.size;
    }
  }
  if (!integrity_status.ok()) return integrity_status;
  return metadata_status;
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  return strata::tools::ToolMain("dump-module", strata::tools::Run, argc, argv);
}
