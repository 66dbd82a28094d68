//===- SPIRVExecutable.cpp - Dispatch kernels to a Vulkan executable ------===//

#include "compiler/codegen/gpu/SPIRVExecutable.h"

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/gpu/Passes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVEnums.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "strata/schemas/vulkan_executable_generated.h"

using namespace mlir;

namespace strata::gpu {
namespace {

std::vector<uint8_t> serializeMetadata(const SPIRVExecutable &executable,
                                       uint32_t version) {
  namespace fb = flatbuffers;
  fb::FlatBufferBuilder fbb;
  std::vector<fb::Offset<schema::vulkan::EntryPointDef>> entries;
  for (const EntryPointInfo &entry : executable.entryPoints)
    entries.push_back(
        serializeEntryPoint<schema::vulkan::EntryPointDefBuilder>(fbb, entry));
  auto entryVector = fbb.CreateVector(entries);
  uint64_t workgroupMemory = 0;
  for (const EntryPointInfo &entry : executable.entryPoints)
    workgroupMemory = std::max(workgroupMemory, entry.workgroupMemoryBytes);
  auto capabilities = fbb.CreateVectorOfStrings(executable.capabilities);
  auto extensions = fbb.CreateVectorOfStrings(executable.extensions);
  fbb.Finish(schema::vulkan::CreateVulkanExecutableDef(
                 fbb, entryVector, version, capabilities, extensions,
                 static_cast<uint32_t>(workgroupMemory)),
             schema::vulkan::VulkanExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

} // namespace

FailureOr<SPIRVExecutable> compileSPIRVExecutable(
    ModuleOp module, const GPUCodegenPipelineOptions &options,
    llvm::function_ref<LogicalResult(PassManager &)> configure) {
  // Matmuls staged in workgroup memory unless the options say otherwise.
  GPUCodegenPipelineOptions vulkanOptions;
  copyWithDefaultMatrixTiles(vulkanOptions, options, "shared");
  if (failed(runConfigured(module, configure, [&](PassManager &pm) {
        buildGPUCodegenPipeline(pm, vulkanOptions);
        buildSPIRVPipeline(pm);
      })))
    return failure();

  auto kernels = *module.getOps<mlir::gpu::GPUModuleOp>().begin();
  auto spirvModules = module.getOps<spirv::ModuleOp>();
  if (spirvModules.empty())
    return module.emitError("SPIR-V conversion left no spirv.module");
  spirv::ModuleOp spirvModule = *spirvModules.begin();

  SPIRVExecutable executable;
  FailureOr<std::vector<EntryPointInfo>> entries = collectEntryPoints(kernels);
  if (failed(entries))
    return failure();
  executable.entryPoints = std::move(*entries);
  uint32_t version = 0x00010000;
  if (std::optional<spirv::VerCapExtAttr> vce = spirvModule.getVceTriple()) {
    version = 0x00010000 | (static_cast<uint32_t>(vce->getVersion()) << 8);
    // Shader implicitly declares Matrix (which spirv-update-vce lists): the
    // module declares, and a device must offer, only the rest.
    SmallVector<spirv::Capability> declared;
    for (spirv::Capability capability : vce->getCapabilities()) {
      if (capability == spirv::Capability::Matrix)
        continue;
      declared.push_back(capability);
      if (capability != spirv::Capability::Shader)
        executable.capabilities.push_back(
            spirv::stringifyCapability(capability).str());
    }
    SmallVector<spirv::Extension> extensions;
    for (spirv::Extension extension : vce->getExtensions()) {
      extensions.push_back(extension);
      executable.extensions.push_back(
          spirv::stringifyExtension(extension).str());
    }
    spirvModule.setVceTripleAttr(spirv::VerCapExtAttr::get(
        vce->getVersion(), declared, extensions, module.getContext()));
  }

  SmallVector<uint32_t> words;
  if (failed(spirv::serialize(spirvModule, words)))
    return failure();
  executable.spirv.resize(words.size() * sizeof(uint32_t));
  std::memcpy(executable.spirv.data(), words.data(), executable.spirv.size());
  executable.metadata = serializeMetadata(executable, version);
  return executable;
}

} // namespace strata::gpu
