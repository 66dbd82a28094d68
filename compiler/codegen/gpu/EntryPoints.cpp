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

} // namespace strata::gpu
