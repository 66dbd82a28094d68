#include "drivers/rocm/rocm_executable.h"

#include <cstring>
#include <numeric>

#include "drivers/rocm/rocm_device.h"
#include "strata/schemas/rocm_executable_generated.h"

namespace strata::rocm {
namespace {

std::string Prefix(const hal::ExecutableParams& params) {
  return StrCat("executable '", params.name, "' (", kRocmHsacoFormat, "): ");
}

// The bytes of the kernel arguments the ABI gives `info`'s kernel: the
// 8-byte pointers come first, so no argument needs padding.
uint64_t AbiArgumentBytes(const hal::EntryPointInfo& info) {
  const std::vector<size_t> sizes = stream::AbiParameterSizes(info);
  return std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
}

constexpr uint16_t kElfMachineAmdgpu = 224;  // EM_AMDGPU

}  // namespace

std::string DescribeCodeObject(const RocmCodeObject& object) {
  return StrCat(object.arch, " code object v", object.version);
}

uint32_t MaxCodeObjectVersion(int hip_version) { return hip_version >= 60000000 ? 6 : 5; }

StatusOr<RocmExecutableInfo> ParseRocmExecutable(const hal::ExecutableParams& params,
                                                 const stream::KernelLimits& limits) {
  const std::string prefix = Prefix(params);
  std::span<const uint8_t> bytes = params.metadata;
  if (bytes.size() < 8 || !flatbuffers::BufferHasIdentifier(bytes.data(), schema::rocm::RocmExecutableDefIdentifier())) {
    return InvalidArgumentError(prefix, "metadata (", bytes.size(),
                                " bytes) is not a ROCm executable description (expected FlatBuffer identifier '",
                                schema::rocm::RocmExecutableDefIdentifier(), "')");
  }
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!schema::rocm::VerifyRocmExecutableDefBuffer(verifier)) {
    return DataLossError(prefix, "metadata (", bytes.size(), " bytes) is a corrupt FlatBuffer");
  }
  const schema::rocm::RocmExecutableDef* def = schema::rocm::GetRocmExecutableDef(bytes.data());
  RocmExecutableInfo info;
  if (!def->code_objects() || def->code_objects()->size() == 0) {
    return InvalidArgumentError(prefix, "metadata lists no code objects");
  }
  const std::span<const uint8_t> data = params.data;
  for (uint32_t i = 0; i < def->code_objects()->size(); ++i) {
    const schema::rocm::CodeObjectDef* object = def->code_objects()->Get(i);
    RocmCodeObject parsed;
    if (!object->arch() || object->arch()->size() == 0) {
      return InvalidArgumentError(prefix, "code object ", i, " names no architecture");
    }
    parsed.arch = object->arch()->str();
    parsed.version = object->code_object_version();
    const std::string what = StrCat("code object ", i, " (", DescribeCodeObject(parsed), ")");
    if (parsed.version < 2 || parsed.version > 6) {
      return InvalidArgumentError(prefix, what, " has code object version ", parsed.version, "; expected 2 to 6");
    }
    if (object->size() == 0) return InvalidArgumentError(prefix, what, " is empty");
    if (object->offset() > data.size() || object->size() > data.size() - object->offset()) {
      return OutOfRangeError(prefix, what, " spans bytes [", object->offset(), ", ", object->offset() + object->size(),
                             ") of the executable's data, which has ", data.size(), " bytes");
    }
    parsed.bytes = data.subspan(object->offset(), object->size());
    static constexpr uint8_t kElfMagic[4] = {0x7F, 'E', 'L', 'F'};
    if (parsed.bytes.size() < 20 || std::memcmp(parsed.bytes.data(), kElfMagic, 4) != 0) {
      return InvalidArgumentError(prefix, what, " is not an ELF file (it does not start with 0x7f 'E' 'L' 'F')");
    }
    uint16_t machine;
    std::memcpy(&machine, parsed.bytes.data() + 18, 2);
    if (machine != kElfMachineAmdgpu) {
      return InvalidArgumentError(prefix, what, " is an ELF file for machine ", machine, ", not AMDGPU (",
                                  kElfMachineAmdgpu, ")");
    }
    info.code_objects.push_back(std::move(parsed));
  }
  STRATA_ASSIGN_OR_RETURN(info.entry_points, stream::ReadKernelEntryPoints(def->entry_points(), prefix, limits));
  for (uint32_t i = 0; i < def->entry_points()->size(); ++i) {
    const hal::EntryPointInfo& entry = info.entry_points[i];
    const uint64_t expected = AbiArgumentBytes(entry);
    if (def->entry_points()->Get(i)->kernarg_bytes() < expected) {
      return InvalidArgumentError(prefix, "entry point '", entry.name, "' has a kernel argument block of ",
                                  def->entry_points()->Get(i)->kernarg_bytes(), " bytes; its ", entry.binding_count,
                                  " binding pointers, ", entry.check_messages.empty() ? "" : "check-status pointer, ",
                                  entry.constant_count, " 32-bit constants need ", expected);
    }
  }
  return info;
}

StatusOr<size_t> SelectRocmCodeObject(std::span<const RocmCodeObject> objects, std::string_view arch,
                                      uint32_t max_version) {
  const std::string_view base = arch.substr(0, arch.find(':'));
  size_t chosen = objects.size();
  for (size_t i = 0; i < objects.size(); ++i) {
    if (objects[i].arch != base || objects[i].version > max_version) continue;
    if (chosen == objects.size() || objects[i].version > objects[chosen].version) chosen = i;
  }
  if (chosen != objects.size()) return chosen;
  std::string have;
  for (const RocmCodeObject& object : objects) have += StrCat(have.empty() ? "" : ", ", DescribeCodeObject(object));
  return IncompatibleError("no code object runs on ", base, " with a HIP runtime that reads code objects up to v",
                           max_version, ": the executable has ", have, "; recompile the module with --rocm-arch=",
                           base, " (and --rocm-code-object=", max_version, " or lower for this runtime)");
}

StatusOr<Ref<stream::StreamExecutable>> LoadRocmExecutable(std::shared_ptr<RocmContext> context,
                                                           const hal::ExecutableParams& params) {
  const std::string prefix = Prefix(params);
  STRATA_ASSIGN_OR_RETURN(RocmExecutableInfo info, ParseRocmExecutable(params, stream::DeviceKernelLimits(*context)));
  StatusOr<size_t> selected = SelectRocmCodeObject(info.code_objects, context->facts().arch,
                                                   MaxCodeObjectVersion(context->hip().driver_version));
  if (!selected.ok()) {
    return std::move(selected).status().Annotate(prefix, "device '", context->name(), "': ");
  }
  const RocmCodeObject& object = info.code_objects[*selected];
  const std::string on_device = StrCat(" on '", context->name(), "' (", context->facts().arch, ")");

  STRATA_RETURN_IF_ERROR(context->MakeCurrent());
  const HipFunctions& hip = context->hip();
  // An ELF file, read with its own alignment; the module's bytes promise
  // none.
  std::vector<uint64_t> aligned((object.bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), object.bytes.data(), object.bytes.size());
  hipModule_t module = nullptr;
  hipError_t result = hip.hipModuleLoadData(&module, aligned.data());
  if (result != hipSuccess) {
    return HipError(result, StrCat(prefix, "hipModuleLoadData of its ", DescribeCodeObject(object), on_device,
                                   " (HIP ", HipVersionString(hip.driver_version), ")"));
  }
  auto lookup = [&](const hal::EntryPointInfo& entry) -> StatusOr<stream::KernelFunction> {
    hipFunction_t function = nullptr;
    hipError_t result = hip.hipModuleGetFunction(&function, module, entry.name.c_str());
    if (result == hipErrorNotFound) {
      return NotFoundError("named in the metadata, it is not a kernel of its ", DescribeCodeObject(object),
                           " (hipModuleGetFunction: ", HipResultName(result), ")");
    }
    if (result != hipSuccess) return HipError(result, "hipModuleGetFunction");
    int max_threads = 0, registers = 0;
    result = hip.hipFuncGetAttribute(&max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
    if (result == hipSuccess) result = hip.hipFuncGetAttribute(&registers, HIP_FUNC_ATTRIBUTE_NUM_REGS, function);
    if (result != hipSuccess) return HipError(result, "hipFuncGetAttribute");
    return stream::KernelFunction{function, static_cast<uint32_t>(max_threads), static_cast<uint32_t>(registers)};
  };
  return stream::StreamExecutable::Create(context, params, std::move(info.entry_points), module, lookup, on_device);
}

}  // namespace strata::rocm
