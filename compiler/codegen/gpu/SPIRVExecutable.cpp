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

/// What the host needs of each entry point, from the attributes the
/// distributor and outliner left on the gpu.func ops.
FailureOr<std::vector<EntryPointInfo>>
collectEntryPoints(mlir::gpu::GPUModuleOp kernels) {
  std::vector<EntryPointInfo> entries;
  for (auto function : kernels.getOps<mlir::gpu::GPUFuncOp>()) {
    EntryPointInfo entry;
    entry.name = function.getName().str();
    auto readOnly = function->getAttrOfType<DenseBoolArrayAttr>("strata.read_only");
    auto constants = function->getAttrOfType<IntegerAttr>("strata.constant_count");
    auto size = function->getAttrOfType<DenseI32ArrayAttr>("strata.workgroup_size");
    Attribute count = function->getAttr("strata.workgroup_count");
    if (!readOnly || !constants || !size || size.size() != 3 || !count)
      return function.emitOpError("lacks the attributes of "
                                  "strata-gpu-outline-kernels");
    entry.bindingReadOnly.assign(readOnly.asArrayRef().begin(),
                                 readOnly.asArrayRef().end());
    entry.bindingCount = entry.bindingReadOnly.size();
    entry.constantCount = constants.getInt();
    if (auto scratch = function->getAttrOfType<IntegerAttr>(cpu::kScratchBytesAttr))
      entry.dispatch.scratchBytes = scratch.getInt();
    if (auto bytes = function->getAttrOfType<IntegerAttr>("strata.workgroup_memory"))
      entry.workgroupMemoryBytes = bytes.getInt();
    if (auto checks = function->getAttrOfType<ArrayAttr>("strata.check_messages"))
      for (Attribute message : checks)
        entry.checkMessages.push_back(cast<StringAttr>(message).str());
    codegen::DispatchInfo &dispatch = entry.dispatch;
    for (int i = 0; i < 3; ++i)
      dispatch.workgroupSize[i] = size[i];
    if (auto fixed = dyn_cast<DenseI32ArrayAttr>(count)) {
      dispatch.workgroupCount = {uint32_t(fixed[0]), uint32_t(fixed[1]),
                                 uint32_t(fixed[2])};
    } else {
      auto dict = cast<DictionaryAttr>(count);
      dispatch.countFactor = dict.getAs<IntegerAttr>("factor").getInt();
      for (int32_t word : dict.getAs<DenseI32ArrayAttr>("words").asArrayRef())
        dispatch.countWords.push_back(word);
      dispatch.countMax = dict.getAs<IntegerAttr>("max").getInt();
    }
    entries.push_back(std::move(entry));
  }
  // In name order, as the CPU executables list theirs, so that a kernel has
  // the same ordinal in every format of a module.
  llvm::sort(entries, [](const EntryPointInfo &a, const EntryPointInfo &b) {
    return a.name < b.name;
  });
  return entries;
}

std::vector<uint8_t> serializeMetadata(const SPIRVExecutable &executable,
                                       uint32_t version) {
  namespace fb = flatbuffers;
  fb::FlatBufferBuilder fbb;
  std::vector<fb::Offset<schema::vulkan::EntryPointDef>> entries;
  for (const EntryPointInfo &entry : executable.entryPoints) {
    std::vector<uint8_t> readOnly(entry.bindingReadOnly.begin(),
                                  entry.bindingReadOnly.end());
    auto name = fbb.CreateString(entry.name);
    auto flags = fbb.CreateVector(readOnly);
    auto size = fbb.CreateVector(std::vector<uint32_t>(
        entry.dispatch.workgroupSize.begin(),
        entry.dispatch.workgroupSize.end()));
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> checks;
    if (!entry.checkMessages.empty())
      checks = fbb.CreateVectorOfStrings(entry.checkMessages);
    schema::vulkan::EntryPointDefBuilder builder(fbb);
    builder.add_name(name);
    builder.add_binding_count(entry.bindingCount);
    builder.add_constant_count(entry.constantCount);
    builder.add_binding_read_only(flags);
    builder.add_workgroup_size(size);
    if (!entry.checkMessages.empty())
      builder.add_check_messages(checks);
    entries.push_back(builder.Finish());
  }
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
  PassManager pm(module.getContext());
  if (configure && failed(configure(pm)))
    return failure();
  buildGPUCodegenPipeline(pm, options);
  buildSPIRVPipeline(pm);
  if (failed(pm.run(module)))
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
