#include "drivers/vulkan/vulkan_executable.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "drivers/vulkan/vulkan_buffer.h"
#include "strata/schemas/vulkan_executable_generated.h"

namespace strata::vulkan {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpExtension = 10;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kOpConstant = 43;
constexpr uint32_t kOpSpecConstant = 50;
constexpr uint32_t kOpExecutionModeId = 331;
constexpr uint32_t kExecutionModeLocalSizeId = 38;
constexpr uint32_t kExecutionModelGLCompute = 5;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kCapabilityMatrix = 24;
constexpr uint32_t kCapabilityShader = 1;
constexpr uint32_t kExecutionModeDenormPreserve = 4459;
constexpr uint32_t kExecutionModeSignedZeroInfNanPreserve = 4461;
constexpr uint32_t kCapabilityDenormPreserve = 4464;
constexpr uint32_t kCapabilitySignedZeroInfNanPreserve = 4466;

// A SPIR-V literal string starting at words[0], at most `count` words.
std::string LiteralString(const uint32_t* words, uint32_t count, uint32_t* words_used) {
  std::string out;
  for (uint32_t i = 0; i < count; ++i) {
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((words[i] >> (8 * b)) & 0xFF);
      if (c == 0) {
        *words_used = i + 1;
        return out;
      }
      out += c;
    }
  }
  *words_used = count + 1;  // unterminated: more words than the instruction has
  return out;
}

bool SubgroupOperation(const VulkanContext& c, VkSubgroupFeatureFlags operation) {
  return (c.subgroup().supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
         (c.subgroup().supportedOperations & operation) == operation;
}

// The SPIR-V capabilities a kernel may declare: the name in the SPIR-V
// specification, its number, and the device feature behind it.
struct CapabilityInfo {
  const char* name;
  uint32_t id;
  const char* feature;
  bool (*supported)(const VulkanContext& c);
};

const CapabilityInfo kCapabilities[] = {
    {"Shader", 1, "Vulkan", [](const VulkanContext&) { return true; }},
    {"Matrix", 24, "Vulkan", [](const VulkanContext&) { return true; }},
    {"Float16", 9, "shaderFloat16", [](const VulkanContext& c) { return c.features12().shaderFloat16 != 0; }},
    {"Float64", 10, "shaderFloat64", [](const VulkanContext& c) { return c.features().shaderFloat64 != 0; }},
    {"Int64", 11, "shaderInt64", [](const VulkanContext& c) { return c.features().shaderInt64 != 0; }},
    {"Int64Atomics", 12, "shaderBufferInt64Atomics",
     [](const VulkanContext& c) { return c.features12().shaderBufferInt64Atomics != 0; }},
    {"Int16", 22, "shaderInt16", [](const VulkanContext& c) { return c.features().shaderInt16 != 0; }},
    {"Int8", 39, "shaderInt8", [](const VulkanContext& c) { return c.features12().shaderInt8 != 0; }},
    {"GroupNonUniform", 61, "subgroup basic operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_BASIC_BIT); }},
    {"GroupNonUniformVote", 62, "subgroup vote operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_VOTE_BIT); }},
    {"GroupNonUniformArithmetic", 63, "subgroup arithmetic operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_ARITHMETIC_BIT); }},
    {"GroupNonUniformBallot", 64, "subgroup ballot operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_BALLOT_BIT); }},
    {"GroupNonUniformShuffle", 65, "subgroup shuffle operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_SHUFFLE_BIT); }},
    {"GroupNonUniformShuffleRelative", 66, "subgroup relative shuffle operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT); }},
    {"GroupNonUniformClustered", 67, "subgroup clustered operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_CLUSTERED_BIT); }},
    {"GroupNonUniformQuad", 68, "subgroup quad operations",
     [](const VulkanContext& c) { return SubgroupOperation(c, VK_SUBGROUP_FEATURE_QUAD_BIT); }},
    {"StorageBuffer16BitAccess", 4433, "storageBuffer16BitAccess",
     [](const VulkanContext& c) { return c.features11().storageBuffer16BitAccess != 0; }},
    {"UniformAndStorageBuffer16BitAccess", 4434, "uniformAndStorageBuffer16BitAccess",
     [](const VulkanContext& c) { return c.features11().uniformAndStorageBuffer16BitAccess != 0; }},
    {"StoragePushConstant16", 4435, "storagePushConstant16",
     [](const VulkanContext& c) { return c.features11().storagePushConstant16 != 0; }},
    {"VariablePointersStorageBuffer", 4441, "variablePointersStorageBuffer",
     [](const VulkanContext& c) { return c.features11().variablePointersStorageBuffer != 0; }},
    {"VariablePointers", 4442, "variablePointers",
     [](const VulkanContext& c) { return c.features11().variablePointers != 0; }},
    {"StorageBuffer8BitAccess", 4448, "storageBuffer8BitAccess",
     [](const VulkanContext& c) { return c.features12().storageBuffer8BitAccess != 0; }},
    {"UniformAndStorageBuffer8BitAccess", 4449, "uniformAndStorageBuffer8BitAccess",
     [](const VulkanContext& c) { return c.features12().uniformAndStorageBuffer8BitAccess != 0; }},
    {"StoragePushConstant8", 4450, "storagePushConstant8",
     [](const VulkanContext& c) { return c.features12().storagePushConstant8 != 0; }},
    {"VulkanMemoryModel", 5345, "vulkanMemoryModel",
     [](const VulkanContext& c) { return c.features12().vulkanMemoryModel != 0; }},
    {"VulkanMemoryModelDeviceScope", 5346, "vulkanMemoryModelDeviceScope",
     [](const VulkanContext& c) { return c.features12().vulkanMemoryModelDeviceScope != 0; }},
    {"PhysicalStorageBufferAddresses", 5347, "bufferDeviceAddress",
     [](const VulkanContext& c) { return c.features12().bufferDeviceAddress != 0; }},
    // Float controls: where the device lacks a mode, the driver removes it
    // (StripFloatControls), so a module that asks for them runs everywhere.
    {"DenormPreserve", kCapabilityDenormPreserve, "float controls", [](const VulkanContext&) { return true; }},
    {"SignedZeroInfNanPreserve", kCapabilitySignedZeroInfNanPreserve, "float controls",
     [](const VulkanContext&) { return true; }},
    // Known, but the driver enables no extension that provides them.
    {"CooperativeMatrixKHR", 6022, "cooperativeMatrix (VK_KHR_cooperative_matrix, not enabled by this driver)",
     [](const VulkanContext&) { return false; }},
    {"CooperativeMatrixNV", 5357, "cooperativeMatrix (VK_NV_cooperative_matrix, not enabled by this driver)",
     [](const VulkanContext&) { return false; }},
};

const CapabilityInfo* FindCapability(std::string_view name) {
  for (const CapabilityInfo& capability : kCapabilities) {
    if (name == capability.name) return &capability;
  }
  return nullptr;
}
const CapabilityInfo* FindCapability(uint32_t id) {
  for (const CapabilityInfo& capability : kCapabilities) {
    if (id == capability.id) return &capability;
  }
  return nullptr;
}

// SPIR-V extensions that Vulkan 1.2 and 1.3 accept without a device extension.
constexpr const char* kCoreSpirvExtensions[] = {
    "SPV_KHR_16bit_storage",     "SPV_KHR_8bit_storage",         "SPV_KHR_storage_buffer_storage_class",
    "SPV_KHR_variable_pointers", "SPV_KHR_vulkan_memory_model",  "SPV_KHR_physical_storage_buffer",
    "SPV_KHR_float_controls",    "SPV_KHR_no_integer_wrap_decoration", "SPV_KHR_shader_draw_parameters",
    "SPV_KHR_non_semantic_info",
};

// The newest SPIR-V a device of Vulkan `api` consumes.
uint32_t MaxSpirvVersion(uint32_t api) {
  if (VK_API_VERSION_MAJOR(api) > 1 || VK_API_VERSION_MINOR(api) >= 3) return 0x00010600;
  return 0x00010500;
}

std::string SpirvVersionString(uint32_t version) {
  return StrCat((version >> 16) & 0xFF, ".", (version >> 8) & 0xFF);
}

}  // namespace

StatusOr<SpirvModuleInfo> ParseSpirv(std::span<const uint8_t> data) {
  if (data.size() % 4 != 0 || data.size() < 20) {
    return InvalidArgumentError("SPIR-V module of ", data.size(),
                                " bytes: expected a whole number of 32-bit words, at least the 5 of the header");
  }
  std::vector<uint32_t> words(data.size() / 4);
  std::memcpy(words.data(), data.data(), data.size());
  if (words[0] != kSpirvMagic) {
    return InvalidArgumentError("not a SPIR-V module: magic number 0x", Hex(words[0]), ", expected 0x",
                                Hex(kSpirvMagic));
  }
  SpirvModuleInfo info;
  info.version = words[1];
  // LocalSizeId names constants, which come later in the module.
  std::vector<std::pair<uint32_t, const uint32_t*>> local_size_ids;  // entry id, 3 constant ids
  std::vector<std::pair<uint32_t, uint32_t>> constants;              // id, 32-bit value
  for (size_t at = 5; at < words.size();) {
    const uint32_t word_count = words[at] >> 16, opcode = words[at] & 0xFFFF;
    if (word_count == 0 || word_count > words.size() - at) {
      return InvalidArgumentError("SPIR-V module: the instruction at word ", at, " (opcode ", opcode, ") has ",
                                  word_count, " words; ", words.size() - at, " remain");
    }
    const uint32_t* operands = &words[at + 1];
    const uint32_t operand_count = word_count - 1;
    uint32_t used = 0;
    if (opcode == kOpCapability && operand_count >= 1) {
      info.capabilities.push_back(operands[0]);
    } else if (opcode == kOpExtension) {
      info.extensions.push_back(LiteralString(operands, operand_count, &used));
    } else if (opcode == kOpEntryPoint && operand_count >= 3) {
      SpirvModuleInfo::EntryPoint entry;
      entry.execution_model = operands[0];
      entry.id = operands[1];
      entry.name = LiteralString(operands + 2, operand_count - 2, &used);
      if (used > operand_count - 2) {
        return InvalidArgumentError("SPIR-V module: the OpEntryPoint at word ", at, " has an unterminated name");
      }
      info.entry_points.push_back(std::move(entry));
    } else if (opcode == kOpExecutionMode && operand_count >= 5 && operands[1] == kExecutionModeLocalSize) {
      for (SpirvModuleInfo::EntryPoint& entry : info.entry_points) {
        if (entry.id != operands[0]) continue;
        entry.has_local_size = true;
        std::copy_n(operands + 2, 3, entry.local_size);
      }
    } else if (opcode == kOpExecutionModeId && operand_count >= 5 && operands[1] == kExecutionModeLocalSizeId) {
      local_size_ids.emplace_back(operands[0], operands + 2);
    } else if ((opcode == kOpConstant || opcode == kOpSpecConstant) && operand_count == 3) {
      constants.emplace_back(operands[1], operands[2]);
    }
    at += word_count;
  }
  for (const auto& [entry_id, ids] : local_size_ids) {
    for (SpirvModuleInfo::EntryPoint& entry : info.entry_points) {
      if (entry.id != entry_id) continue;
      for (int d = 0; d < 3; ++d) {
        auto constant = std::find_if(constants.begin(), constants.end(), [&](const auto& c) { return c.first == ids[d]; });
        if (constant == constants.end()) {
          return InvalidArgumentError("SPIR-V module: the LocalSizeId of entry point '", entry.name, "' names id ",
                                      ids[d], ", which is not a 32-bit constant");
        }
        entry.local_size[d] = constant->second;
      }
      entry.has_local_size = true;
      entry.local_size_id = true;
    }
  }
  return info;
}

FloatControlsSupport FloatControlsSupport::Of(const VkPhysicalDeviceFloatControlsProperties& p) {
  FloatControlsSupport support;
  const VkBool32 denorm[3] = {p.shaderDenormPreserveFloat16, p.shaderDenormPreserveFloat32,
                              p.shaderDenormPreserveFloat64};
  const VkBool32 nan[3] = {p.shaderSignedZeroInfNanPreserveFloat16, p.shaderSignedZeroInfNanPreserveFloat32,
                           p.shaderSignedZeroInfNanPreserveFloat64};
  for (int i = 0; i < 3; ++i) {
    support.denorm_preserve[i] = denorm[i] != 0;
    support.signed_zero_inf_nan_preserve[i] = nan[i] != 0;
  }
  return support;
}

size_t StripFloatControls(std::vector<uint32_t>& words, const FloatControlsSupport& support) {
  // The float-control execution modes the device lacks, and how many it
  // keeps of each kind (a capability no kept mode uses goes too).
  std::vector<size_t> dropped;
  size_t kept_denorm = 0, kept_nan = 0;
  for (size_t at = 5; at < words.size() && (words[at] >> 16) != 0; at += words[at] >> 16) {
    if ((words[at] & 0xFFFF) != kOpExecutionMode || (words[at] >> 16) != 4) continue;
    const uint32_t mode = words[at + 2], width = words[at + 3];
    const bool denorm = mode == kExecutionModeDenormPreserve;
    if (!denorm && mode != kExecutionModeSignedZeroInfNanPreserve) continue;
    const int index = width == 16 ? 0 : width == 32 ? 1 : width == 64 ? 2 : -1;
    if (index >= 0 && (denorm ? support.denorm_preserve : support.signed_zero_inf_nan_preserve)[index]) {
      ++(denorm ? kept_denorm : kept_nan);
    } else {
      dropped.push_back(at);
    }
  }
  if (dropped.empty()) return 0;
  std::vector<uint32_t> out(words.begin(), words.begin() + 5);
  for (size_t at = 5; at < words.size() && (words[at] >> 16) != 0; at += words[at] >> 16) {
    const uint32_t word_count = words[at] >> 16;
    const bool unused_capability = (words[at] & 0xFFFF) == kOpCapability && word_count == 2 &&
                                   ((words[at + 1] == kCapabilityDenormPreserve && kept_denorm == 0) ||
                                    (words[at + 1] == kCapabilitySignedZeroInfNanPreserve && kept_nan == 0));
    if (unused_capability || std::find(dropped.begin(), dropped.end(), at) != dropped.end()) continue;
    out.insert(out.end(), words.begin() + at, words.begin() + at + word_count);
  }
  words = std::move(out);
  return dropped.size();
}

Status CheckCapability(const VulkanContext& context, std::string_view name) {
  const CapabilityInfo* capability = FindCapability(name);
  if (!capability) return InvalidArgumentError("needs SPIR-V capability '", name, "', which this driver does not know");
  if (!capability->supported(context)) {
    return FailedPreconditionError("needs SPIR-V capability ", name, ", but device '", context.name(), "' lacks ",
                                   capability->feature);
  }
  return OkStatus();
}

namespace {

// What the driver says about the code it made of one pipeline, one line per
// statistic, e.g. "vulkan: 'gemm' SM90: Register Count = 128 (...)".
void PrintPipelineStatistics(const VulkanContext& context, VkPipeline pipeline, const std::string& name) {
  const DeviceFunctions& vk = context.vk();
  auto pipeline_info = VkMake<VkPipelineInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR);
  pipeline_info.pipeline = pipeline;
  uint32_t count = 0;
  if (vk.vkGetPipelineExecutablePropertiesKHR(context.device(), &pipeline_info, &count, nullptr) != VK_SUCCESS) {
    std::fprintf(stderr, "vulkan: '%s': the driver reports no pipeline executables\n", name.c_str());
    return;
  }
  std::vector<VkPipelineExecutablePropertiesKHR> executables(
      count, VkMake<VkPipelineExecutablePropertiesKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR));
  vk.vkGetPipelineExecutablePropertiesKHR(context.device(), &pipeline_info, &count, executables.data());
  for (uint32_t e = 0; e < count; ++e) {
    auto executable_info = VkMake<VkPipelineExecutableInfoKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR);
    executable_info.pipeline = pipeline;
    executable_info.executableIndex = e;
    uint32_t statistic_count = 0;
    vk.vkGetPipelineExecutableStatisticsKHR(context.device(), &executable_info, &statistic_count, nullptr);
    std::vector<VkPipelineExecutableStatisticKHR> statistics(
        statistic_count, VkMake<VkPipelineExecutableStatisticKHR>(VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR));
    vk.vkGetPipelineExecutableStatisticsKHR(context.device(), &executable_info, &statistic_count, statistics.data());
    std::fprintf(stderr, "vulkan: '%s' executable %u: %s (subgroup size %u)\n", name.c_str(), e,
                 executables[e].name, executables[e].subgroupSize);
    for (uint32_t i = 0; i < statistic_count; ++i) {
      const VkPipelineExecutableStatisticKHR& s = statistics[i];
      std::string value;
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: value = s.value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: value = std::to_string(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: value = std::to_string(s.value.u64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: value = std::to_string(s.value.f64); break;
        default: value = "?"; break;
      }
      std::fprintf(stderr, "vulkan: '%s'   %s = %s (%s)\n", name.c_str(), s.name, value.c_str(), s.description);
    }
  }
}

}  // namespace

StatusOr<Ref<VulkanExecutable>> VulkanExecutable::Create(std::shared_ptr<VulkanContext> context,
                                                             const hal::ExecutableParams& params) {
  const std::string prefix = StrCat("executable '", params.name, "' (", params.format, "): ");
  std::span<const uint8_t> bytes = params.metadata;
  if (bytes.size() < 8 ||
      !flatbuffers::BufferHasIdentifier(bytes.data(), schema::vulkan::VulkanExecutableDefIdentifier())) {
    return InvalidArgumentError(prefix, "metadata is not a Vulkan executable description (expected FlatBuffer ",
                                "identifier '", schema::vulkan::VulkanExecutableDefIdentifier(), "')");
  }
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!schema::vulkan::VerifyVulkanExecutableDefBuffer(verifier)) {
    return DataLossError(prefix, "metadata is a corrupt FlatBuffer");
  }
  const schema::vulkan::VulkanExecutableDef* def = schema::vulkan::GetVulkanExecutableDef(bytes.data());
  if (!def->entry_points() || def->entry_points()->size() == 0) {
    return InvalidArgumentError(prefix, "metadata lists no entry points");
  }
  auto spirv = ParseSpirv(params.data);
  if (!spirv.ok()) return std::move(spirv).status().Annotate(prefix);
  const uint32_t max_version = MaxSpirvVersion(context->properties().apiVersion);
  if (def->spirv_version() != 0 && def->spirv_version() != spirv->version) {
    return InvalidArgumentError(prefix, "metadata says SPIR-V ", SpirvVersionString(def->spirv_version()),
                                ", the module is SPIR-V ", SpirvVersionString(spirv->version));
  }
  if (spirv->version > max_version) {
    return IncompatibleError(prefix, "SPIR-V ", SpirvVersionString(spirv->version), " is newer than device '",
                             context->name(), "' (Vulkan ", VkVersionString(context->properties().apiVersion),
                             ") accepts: ", SpirvVersionString(max_version));
  }

  // Capabilities: the metadata lists every one beyond Shader that the module
  // declares, and the device has each.
  std::vector<std::string> required;
  if (def->required_capabilities()) {
    for (const flatbuffers::String* name : *def->required_capabilities()) required.push_back(name->str());
  }
  for (uint32_t id : spirv->capabilities) {
    // Shader implies Matrix: neither needs listing.
    if (id == kCapabilityShader || id == kCapabilityMatrix) continue;
    const CapabilityInfo* capability = FindCapability(id);
    if (!capability) return InvalidArgumentError(prefix, "the module declares SPIR-V capability ", id,
                                                 ", which this driver does not know");
    if (std::find(required.begin(), required.end(), capability->name) == required.end()) {
      return InvalidArgumentError(prefix, "the module declares capability ", capability->name,
                                  " but the metadata's required_capabilities do not list it");
    }
  }
  for (const std::string& name : required) {
    Status status = CheckCapability(*context, name);
    if (!status.ok()) return status.Annotate(prefix);
  }
  std::vector<std::string> extensions;
  if (def->required_extensions()) {
    for (const flatbuffers::String* name : *def->required_extensions()) extensions.push_back(name->str());
  }
  for (const std::string& name : spirv->extensions) {
    if (std::find(extensions.begin(), extensions.end(), name) == extensions.end()) {
      return InvalidArgumentError(prefix, "the module uses SPIR-V extension ", name,
                                  " but the metadata's required_extensions do not list it");
    }
  }
  for (const std::string& name : extensions) {
    if (std::none_of(std::begin(kCoreSpirvExtensions), std::end(kCoreSpirvExtensions),
                     [&](const char* core) { return name == core; })) {
      return FailedPreconditionError(prefix, "needs SPIR-V extension ", name,
                                     ", which this driver does not enable on device '", context->name(), "'");
    }
  }

  const VkPhysicalDeviceLimits& limits = context->limits();
  if (def->workgroup_memory_bytes() > limits.maxComputeSharedMemorySize) {
    return FailedPreconditionError(prefix, "uses ", def->workgroup_memory_bytes(),
                                   " bytes of workgroup memory; device '", context->name(), "' has ",
                                   limits.maxComputeSharedMemorySize);
  }
  std::vector<hal::EntryPointInfo> entry_points;
  for (uint32_t i = 0; i < def->entry_points()->size(); ++i) {
    const schema::vulkan::EntryPointDef* entry = def->entry_points()->Get(i);
    STRATA_ASSIGN_OR_RETURN(hal::EntryPointInfo info, hal::ReadEntryPoint(*entry, i, entry_points, prefix));
    const std::string where = StrCat(prefix, "entry point '", info.name, "' ");
    auto found = std::find_if(spirv->entry_points.begin(), spirv->entry_points.end(),
                              [&](const auto& e) { return e.name == info.name; });
    if (found == spirv->entry_points.end()) {
      return NotFoundError(where, "named in the metadata is not an OpEntryPoint of the module");
    }
    if (found->local_size_id && !context->features13().maintenance4) {
      return FailedPreconditionError(where, "gives its workgroup size with LocalSizeId, which needs the Vulkan 1.3 ",
                                     "feature maintenance4; device '", context->name(), "' lacks it");
    }
    if (found->execution_model != kExecutionModelGLCompute) {
      return InvalidArgumentError(where, "has execution model ", found->execution_model, ", expected GLCompute (",
                                  kExecutionModelGLCompute, ")");
    }
    if (info.constant_count * 4 > limits.maxPushConstantsSize) {
      return FailedPreconditionError(where, "takes ", info.constant_count * 4, " bytes of push constants; device '",
                                     context->name(), "' allows ", limits.maxPushConstantsSize);
    }
    const uint32_t descriptors = info.binding_count + (info.check_messages.empty() ? 0 : 1);
    if (descriptors > limits.maxPerStageDescriptorStorageBuffers) {
      return FailedPreconditionError(where, "takes ", descriptors, " storage buffers; device '", context->name(),
                                     "' allows ", limits.maxPerStageDescriptorStorageBuffers, " per stage");
    }
    const auto* size = entry->workgroup_size();
    if (!size || size->size() != 3) {
      return InvalidArgumentError(where, "needs a workgroup size of 3 dimensions, got ", size ? size->size() : 0);
    }
    uint64_t invocations = 1;
    for (int d = 0; d < 3; ++d) {
      info.workgroup_size[d] = size->Get(d);
      invocations *= info.workgroup_size[d];
      if (info.workgroup_size[d] == 0 || info.workgroup_size[d] > limits.maxComputeWorkGroupSize[d]) {
        return FailedPreconditionError(where, "has workgroup size ", "xyz"[d], " = ", info.workgroup_size[d],
                                       "; device '", context->name(), "' allows 1 to ",
                                       limits.maxComputeWorkGroupSize[d]);
      }
      if (found->has_local_size && found->local_size[d] != info.workgroup_size[d]) {
        return InvalidArgumentError(where, "has workgroup size ", "xyz"[d], " = ", info.workgroup_size[d],
                                    " in the metadata but LocalSize ", found->local_size[d], " in the module");
      }
    }
    if (invocations > limits.maxComputeWorkGroupInvocations) {
      return FailedPreconditionError(where, "has ", invocations, " invocations per workgroup; device '",
                                     context->name(), "' allows ", limits.maxComputeWorkGroupInvocations);
    }
    entry_points.push_back(std::move(info));
  }

  Ref<VulkanExecutable> executable = Ref<VulkanExecutable>::Adopt(
      new VulkanExecutable(context, std::string(params.name), std::move(entry_points)));
  const DeviceFunctions& vk = context->vk();
  VkDevice device = context->device();
  auto module_info = VkMake<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  std::vector<uint32_t> code(params.data.size() / 4);
  std::memcpy(code.data(), params.data.data(), params.data.size());
  StripFloatControls(code, FloatControlsSupport::Of(context->float_controls()));
  module_info.codeSize = code.size() * 4;
  module_info.pCode = code.data();
  VkResult result = vk.vkCreateShaderModule(device, &module_info, nullptr, &executable->module_);
  if (result != VK_SUCCESS) return VkError(result, StrCat(prefix, "vkCreateShaderModule"));
  for (const hal::EntryPointInfo& info : executable->entry_points()) {
    Pipeline& pipeline = executable->pipelines_.emplace_back();
    const uint32_t descriptors = info.binding_count + (info.check_messages.empty() ? 0 : 1);
    std::vector<VkDescriptorSetLayoutBinding> bindings(descriptors);
    for (uint32_t b = 0; b < descriptors; ++b) {
      bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    }
    auto set_info = VkMake<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    if (context->push_descriptors()) set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    set_info.bindingCount = descriptors;
    set_info.pBindings = bindings.data();
    result = vk.vkCreateDescriptorSetLayout(device, &set_info, nullptr, &pipeline.set_layout);
    if (result != VK_SUCCESS) return VkError(result, StrCat(prefix, "vkCreateDescriptorSetLayout for '", info.name, "'"));
    VkPushConstantRange constants{VK_SHADER_STAGE_COMPUTE_BIT, 0, info.constant_count * 4};
    auto layout_info = VkMake<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &pipeline.set_layout;
    layout_info.pushConstantRangeCount = info.constant_count ? 1 : 0;
    layout_info.pPushConstantRanges = &constants;
    result = vk.vkCreatePipelineLayout(device, &layout_info, nullptr, &pipeline.layout);
    if (result != VK_SUCCESS) return VkError(result, StrCat(prefix, "vkCreatePipelineLayout for '", info.name, "'"));
    auto pipeline_info = VkMake<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    pipeline_info.stage =
        VkMake<VkPipelineShaderStageCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = executable->module_;
    pipeline_info.stage.pName = info.name.c_str();
    pipeline_info.layout = pipeline.layout;
    if (context->pipeline_statistics()) pipeline_info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    result = vk.vkCreateComputePipelines(device, context->pipeline_cache(), 1, &pipeline_info, nullptr,
                                         &pipeline.pipeline);
    if (result != VK_SUCCESS) return VkError(result, StrCat(prefix, "creating the pipeline of '", info.name, "'"));
    if (context->pipeline_statistics()) PrintPipelineStatistics(*context, pipeline.pipeline, info.name);
  }
  return executable;
}

VulkanExecutable::VulkanExecutable(std::shared_ptr<VulkanContext> context, std::string name,
                                   std::vector<hal::EntryPointInfo> entry_points)
    : Executable(&kVulkanFamily, std::move(name), kVulkanSpirvFormat, std::move(entry_points)),
      context_(std::move(context)) {}

VulkanExecutable::~VulkanExecutable() {
  const DeviceFunctions& vk = context_->vk();
  VkDevice device = context_->device();
  for (const Pipeline& pipeline : pipelines_) {
    if (pipeline.pipeline) vk.vkDestroyPipeline(device, pipeline.pipeline, nullptr);
    if (pipeline.layout) vk.vkDestroyPipelineLayout(device, pipeline.layout, nullptr);
    if (pipeline.set_layout) vk.vkDestroyDescriptorSetLayout(device, pipeline.set_layout, nullptr);
  }
  if (module_) vk.vkDestroyShaderModule(device, module_, nullptr);
}

}  // namespace strata::vulkan
