//===- EntryPoints.h - What the host needs of each GPU kernel ---*- C++ -*-===//
//
// The entry points of a gpu.module the outliner made, as every GPU
// executable's metadata and the host compiler see them, read from the
// attributes strata-gpu-distribute and strata-gpu-outline-kernels leave.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_ENTRYPOINTS_H
#define STRATA_COMPILER_CODEGEN_GPU_ENTRYPOINTS_H

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/DispatchInfo.h"
#include "compiler/codegen/gpu/Pipeline.h"
#include "flatbuffers/flatbuffers.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace strata::gpu {

/// One entry point, as the metadata and the host compiler see it.
struct EntryPointInfo {
  std::string name;
  uint32_t bindingCount = 0;
  uint32_t constantCount = 0;
  std::vector<bool> bindingReadOnly;
  /// What each check of the kernel tests, with its model location.
  std::vector<std::string> checkMessages;
  /// Bytes of workgroup memory its temporaries take.
  uint64_t workgroupMemoryBytes = 0;
  /// Whether that memory is dynamic (CUDA's `.extern .shared`, past what a
  /// kernel may declare).
  bool dynamicWorkgroupMemory = false;
  codegen::DispatchInfo dispatch;

  const codegen::DispatchInfo &dispatchInfo() const { return dispatch; }
};

/// The entry points of `kernels`, in name order (as the CPU executables
/// list theirs, so that a kernel has the same ordinal in every format).
mlir::FailureOr<std::vector<EntryPointInfo>>
collectEntryPoints(mlir::gpu::GPUModuleOp kernels);

/// Runs the passes `build` adds on `root`, in a pass manager `configure`
/// (may be null) prepares first (instrumentation, crash reproducers).
mlir::LogicalResult
runConfigured(mlir::Operation *root,
              llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)> configure,
              llvm::function_ref<void(mlir::PassManager &)> build);

/// The gpu.module of GPU kernels and their entry points, after the shared
/// GPU pipeline ran on `module` (with `defaultTargetEnv` unless `options`
/// names a target environment). `configure` is applied to its pass manager.
struct GPUKernels {
  mlir::gpu::GPUModuleOp module;
  std::vector<EntryPointInfo> entryPoints;
};
mlir::FailureOr<GPUKernels> runGPUCodegen(
    mlir::ModuleOp module, const GPUCodegenPipelineOptions &options,
    llvm::StringRef defaultTargetEnv,
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)> configure);

/// A #spirv.target_env stating a GPU's limits, for the shared pipeline's
/// distributor: 1024 threads per workgroup at most, `sharedMemoryBytes` of
/// workgroup memory, a z extent of at most `maxZ`, `subgroupSize` lanes.
std::string llvmGPUTargetEnv(unsigned sharedMemoryBytes, unsigned maxZ,
                             unsigned subgroupSize);

/// Appends each image to `data`, 8-byte aligned (cubins and code objects
/// are ELF files), and returns where each starts.
std::vector<uint64_t> concatenateImages(llvm::ArrayRef<llvm::ArrayRef<uint8_t>> images,
                                        std::vector<uint8_t> &data);

/// The EntryPointDef of `entry` in a GPU executable's metadata: the fields
/// the Vulkan and CUDA schemas share (`Builder` is the schema's
/// EntryPointDefBuilder); `more` adds the schema's own before it finishes.
template <typename Builder>
auto serializeEntryPoint(flatbuffers::FlatBufferBuilder &fbb,
                         const EntryPointInfo &entry,
                         llvm::function_ref<void(Builder &)> more = nullptr) {
  std::vector<uint8_t> readOnly(entry.bindingReadOnly.begin(),
                                entry.bindingReadOnly.end());
  auto name = fbb.CreateString(entry.name);
  auto flags = fbb.CreateVector(readOnly);
  auto size = fbb.CreateVector(std::vector<uint32_t>(
      entry.dispatch.workgroupSize.begin(), entry.dispatch.workgroupSize.end()));
  flatbuffers::Offset<
      flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
      checks;
  if (!entry.checkMessages.empty())
    checks = fbb.CreateVectorOfStrings(entry.checkMessages);
  Builder builder(fbb);
  builder.add_name(name);
  builder.add_binding_count(entry.bindingCount);
  builder.add_constant_count(entry.constantCount);
  builder.add_binding_read_only(flags);
  builder.add_workgroup_size(size);
  if (!entry.checkMessages.empty())
    builder.add_check_messages(checks);
  if (more)
    more(builder);
  return builder.Finish();
}

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_ENTRYPOINTS_H
