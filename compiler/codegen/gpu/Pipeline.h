//===- Pipeline.h - Dispatch kernels to SPIR-V ------------------*- C++ -*-===//
//
// The GPU code generator: dispatch kernels (the same input as the CPU code
// generator, see docs/codegen-cpu.md "The kernel convention") through the
// shared bufferization front, distributed over workgroups and invocations,
// outlined as gpu.func entry points with the GPU kernel ABI, and lowered to
// one spirv.module. The CUDA and ROCm back ends are to start from the
// gpu.module this leaves before its SPIR-V part.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_PIPELINE_H
#define STRATA_COMPILER_CODEGEN_GPU_PIPELINE_H

#include <string>

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace strata::gpu {

/// What SPIR-V code generation may assume of the device: Vulkan 1.3 with
/// what every desktop GPU and lavapipe offer. spirv-update-vce then keeps only
/// the capabilities a module uses, and the executable's metadata lists them,
/// so a device lacking one refuses the executable by name.
std::string defaultVulkanTargetEnv();

struct GPUCodegenPipelineOptions
    : public mlir::PassPipelineOptions<GPUCodegenPipelineOptions> {
  Option<int64_t> workgroupSize{
      *this, "workgroup-size",
      llvm::cl::desc("Invocations per workgroup of a distributed kernel"),
      llvm::cl::init(64)};
  Option<int64_t> maxWorkgroupCount{
      *this, "max-workgroup-count",
      llvm::cl::desc("Most workgroups the host dispatches along x"),
      llvm::cl::init(65535)};
  Option<int64_t> workgroupInvocations{
      *this, "workgroup-invocations",
      llvm::cl::desc("Invocations of the one workgroup of a kernel whose "
                     "loops cannot be fused"),
      llvm::cl::init(256)};
  Option<int64_t> maxWorkgroupMemory{
      *this, "max-workgroup-memory",
      llvm::cl::desc("Bytes of workgroup memory a kernel may use (0: what "
                     "the target environment's resource limits offer)"),
      llvm::cl::init(0)};
  Option<std::string> targetEnv{
      *this, "target-env",
      llvm::cl::desc("The #spirv.target_env kernels are compiled for (empty: "
                     "Vulkan 1.3, see defaultVulkanTargetEnv)"),
      llvm::cl::init("")};
  Option<std::string> matrixTiles{
      *this, "matrix-tiles",
      llvm::cl::desc("Matmul kernels in tiles of this kind "
                     "(strata-gpu-matrix-tiles: mfma, wmma32, scalar, shared, "
                     "mma; none: the general distribution; empty: the "
                     "target's choice, shared for Vulkan, mma for CUDA "
                     "(shared with an arch before sm_80), by arch for ROCm)"),
      llvm::cl::init("")};
  Option<int64_t> fmaTilesFrom{
      *this, "fma-tiles-from",
      llvm::cl::desc("Fewest tiles of the output with which an f32 "
                     "convolution of static shape, or a matmul of static M "
                     "whose N is not a multiple of 64 or K of 8, takes "
                     "workgroup-memory tiles (fewer: one output element per "
                     "invocation; lower it for GPUs of few multiprocessors)"),
      llvm::cl::init(128)};
  Option<int64_t> mmaStages{
      *this, "mma-stages",
      llvm::cl::desc("Workgroup-memory buffers of CUDA's tensor-core tiles, "
                     "filled by cp.async ahead of the steps that read them "
                     "(1: one buffer, the next step loaded through registers)"),
      llvm::cl::init(3)};
  Option<bool> mmaWideTiles{
      *this, "mma-wide-tiles",
      llvm::cl::desc("CUDA's tensor-core tiles 128x256 (eight warps) where N "
                     "is a multiple of 256 and they still fill a large GPU"),
      llvm::cl::init(false)};
  Option<int64_t> mmaWorkgroupMemory{
      *this, "mma-workgroup-memory",
      llvm::cl::desc("Most bytes of workgroup memory CUDA's tensor-core "
                     "buffers may take (dynamic shared memory past 49152; "
                     "0: what every target arch offers a kernel that opts "
                     "in)"),
      llvm::cl::init(0)};
  Option<unsigned> maxPrivateBytes{
      *this, "max-private-bytes",
      llvm::cl::desc("Largest temporary a kernel keeps in its own memory "
                     "(private or workgroup); larger static ones go to the "
                     "scratch binding. compile-module gives the CPU's limit "
                     "when a module has CPU executables too, so that a "
                     "kernel takes the same bindings in every format"),
      llvm::cl::init(8192)};
};

/// Copies `from` into `to`, with `kind` as the matrix tiles where `from`
/// names none: the target's choice ("shared" for Vulkan and CUDA).
void copyWithDefaultMatrixTiles(GPUCodegenPipelineOptions &to,
                                const GPUCodegenPipelineOptions &from,
                                llvm::StringRef kind);

/// Kernels (builtin.module of func.func on tensors or memrefs) to a
/// gpu.module of gpu.func entry points with the GPU kernel ABI.
void buildGPUCodegenPipeline(mlir::OpPassManager &pm,
                             const GPUCodegenPipelineOptions &options);

/// The gpu.module to a spirv.module beside it, with the push-constant block,
/// the bindings in argument order and the minimal version, capabilities and
/// extensions.
void buildSPIRVPipeline(mlir::OpPassManager &pm);

/// The gpu.module to NVVM (LLVM dialect) with the CUDA kernel ABI of
/// schemas/cuda_executable.fbs: pointer bindings, 32-bit constants.
void buildNVVMPipeline(mlir::OpPassManager &pm);

/// The gpu.module to ROCDL (LLVM dialect) for the AMD GPU `chipset`
/// ("gfx90a"), with the ROCm kernel ABI of schemas/rocm_executable.fbs (the
/// CUDA one: pointer bindings, 32-bit constants).
void buildROCDLPipeline(mlir::OpPassManager &pm, llvm::StringRef chipset);

/// Registers the passes and the `strata-gpu-codegen`, `strata-spirv-codegen`,
/// `strata-nvvm-codegen` and `strata-rocdl-codegen` pipelines.
void registerGPUCodegenPasses();

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_PIPELINE_H
