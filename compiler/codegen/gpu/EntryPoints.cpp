//===- EntryPoints.cpp - What the host needs of each GPU kernel -----------===//

#include "compiler/codegen/gpu/EntryPoints.h"

#include "compiler/codegen/cpu/KernelConfig.h"

using namespace mlir;

namespace strata::gpu {

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
    entry.dynamicWorkgroupMemory = function->hasAttr("strata.dynamic_workgroup_memory");
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

LogicalResult
runConfigured(Operation *root,
              llvm::function_ref<LogicalResult(PassManager &)> configure,
              llvm::function_ref<void(PassManager &)> build) {
  PassManager pm(root->getContext());
  if (configure && failed(configure(pm)))
    return failure();
  build(pm);
  return pm.run(root);
}

FailureOr<GPUKernels>
runGPUCodegen(ModuleOp module, const GPUCodegenPipelineOptions &options,
              StringRef defaultTargetEnv,
              llvm::function_ref<LogicalResult(PassManager &)> configure) {
  GPUCodegenPipelineOptions targetOptions;
  targetOptions.copyOptionValuesFrom(options);
  if (options.targetEnv.empty())
    targetOptions.targetEnv = defaultTargetEnv.str();
  if (failed(runConfigured(module, configure, [&](PassManager &pm) {
        buildGPUCodegenPipeline(pm, targetOptions);
      })))
    return failure();
  auto kernelModules = module.getOps<mlir::gpu::GPUModuleOp>();
  if (kernelModules.empty())
    return module.emitError("GPU code generation left no gpu.module");
  GPUKernels kernels;
  kernels.module = *kernelModules.begin();
  FailureOr<std::vector<EntryPointInfo>> entries =
      collectEntryPoints(kernels.module);
  if (failed(entries))
    return failure();
  kernels.entryPoints = std::move(*entries);
  return kernels;
}

std::string llvmGPUTargetEnv(unsigned sharedMemoryBytes, unsigned maxZ,
                             unsigned subgroupSize) {
  return "#spirv.target_env<#spirv.vce<v1.3, [Shader], []>, api=Vulkan, "
         "#spirv.resource_limits<max_compute_shared_memory_size = " +
         std::to_string(sharedMemoryBytes) +
         ", max_compute_workgroup_invocations = 1024, "
         "max_compute_workgroup_size = [1024, 1024, " +
         std::to_string(maxZ) + "], subgroup_size = " +
         std::to_string(subgroupSize) + ">>";
}

std::vector<uint64_t> concatenateImages(ArrayRef<ArrayRef<uint8_t>> images,
                                        std::vector<uint8_t> &data) {
  std::vector<uint64_t> offsets;
  for (ArrayRef<uint8_t> image : images) {
    data.resize(llvm::alignTo(data.size(), 8), 0);
    offsets.push_back(data.size());
    data.insert(data.end(), image.begin(), image.end());
  }
  return offsets;
}

} // namespace strata::gpu
