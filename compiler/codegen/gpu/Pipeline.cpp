//===- Pipeline.cpp - Dispatch kernels to SPIR-V --------------------------===//

#include "compiler/codegen/gpu/Pipeline.h"

#include <limits>

#include "compiler/codegen/cpu/Passes.h"
#include "compiler/codegen/cpu/Pipeline.h"
#include "compiler/codegen/gpu/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace strata::gpu {

std::string defaultVulkanTargetEnv() {
  return "#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Int16, Int8, "
         "Float16, Float64, StorageBuffer16BitAccess, "
         "StorageBuffer8BitAccess, GroupNonUniform, "
         "GroupNonUniformArithmetic, GroupNonUniformBallot, "
         "GroupNonUniformShuffle, GroupNonUniformVote, DenormPreserve, "
         "SignedZeroInfNanPreserve], "
         "[SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage, "
         "SPV_KHR_8bit_storage, SPV_KHR_float_controls]>, api=Vulkan, "
         "#spirv.resource_limits<"
         "max_compute_shared_memory_size = 32768, "
         "max_compute_workgroup_invocations = 1024, "
         "max_compute_workgroup_size = [1024, 1024, 64], subgroup_size = 8>>";
}

void copyWithDefaultMatrixTiles(GPUCodegenPipelineOptions &to,
                                const GPUCodegenPipelineOptions &from,
                                StringRef kind) {
  to.copyOptionValuesFrom(from);
  if (to.matrixTiles.empty())
    to.matrixTiles = kind.str();
}

void buildGPUCodegenPipeline(OpPassManager &pm,
                             const GPUCodegenPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createGPUSplatsToFillsPass());
  // A pad is one loop over its result, so that it runs on a grid.
  pm.addNestedPass<func::FuncOp>(createGPUPadsToGridsPass());
  // Integer powers by a loop in the kernel, where the CPU calls a helper
  // function; minimum and maximum ordering -0 below +0, before
  // arith-expand-ops below makes them selects that leave the sign of a tie
  // open.
  GPUExactOpsPassOptions exact;
  exact.ops = {"ipowi", "maximumf", "minimumf"};
  pm.addNestedPass<func::FuncOp>(createGPUExactOpsPass(exact));
  cpu::buildKernelBufferizationPipeline(pm, options.maxPrivateBytes);

  // SPIR-V's GLSL functions are not as accurate as the CPU's results (a few
  // ulps in the normal range, flushed subnormals, no signed zeros): the
  // functions are computed as on the CPU, by expansions and polynomials, and
  // ops SPIR-V lacks (exp2, ceildivsi, ...) are expanded.
  pm.addNestedPass<func::FuncOp>(arith::createArithExpandOpsPass());
  math::MathExpandOpsPassOptions expand;
  expand.opMnemonics = {"exp2", "tan", "sinh", "cosh", "asinh", "acosh",
                        "atanh"};
  pm.addNestedPass<func::FuncOp>(math::createMathExpandOpsPass(expand));
  cpu::CPUApproximateMathPassOptions approximate;
  approximate.functions = {"exp",  "expm1", "tanh", "log",  "log2",
                           "log1p", "erf",  "erfc", "atan", "atan2", "sin",
                           "cos",  "cbrt", "asin", "acos"};
  pm.addNestedPass<func::FuncOp>(cpu::createCPUApproximateMathPass(approximate));

  if (!options.matrixTiles.empty() && options.matrixTiles != "none") {
    GPUMatrixTilesPassOptions tiles;
    tiles.kind = options.matrixTiles;
    tiles.maxWorkgroupCount = options.maxWorkgroupCount;
    tiles.fmaTilesFrom = options.fmaTilesFrom;
    tiles.mmaStages = options.mmaStages;
    tiles.mmaWideTiles = options.mmaWideTiles;
    if (options.mmaWorkgroupMemory > 0)
      tiles.mmaWorkgroupMemory = options.mmaWorkgroupMemory;
    pm.addNestedPass<func::FuncOp>(createGPUMatrixTilesPass(tiles));
  }
  // One parallel loop nest per linalg op; the distributor fuses adjacent
  // nests over the same iterations (a fill, the matmul accumulating into
  // it, the bias after it), so the kernel is one loop to distribute.
  pm.addNestedPass<func::FuncOp>(createGPULinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createGPULowerChecksPass());
  std::string targetEnv = options.targetEnv.empty()
                              ? defaultVulkanTargetEnv()
                              : std::string(options.targetEnv);
  GPUDistributePassOptions distribute;
  distribute.targetEnv = targetEnv;
  distribute.workgroupSize = options.workgroupSize;
  distribute.maxWorkgroupCount = options.maxWorkgroupCount;
  distribute.workgroupInvocations = options.workgroupInvocations;
  // The pass caps this with the target environment's limit.
  distribute.maxWorkgroupMemory = options.maxWorkgroupMemory > 0
                                      ? int64_t(options.maxWorkgroupMemory)
                                      : std::numeric_limits<int64_t>::max();
  pm.addNestedPass<func::FuncOp>(createGPUDistributePass(distribute));
  pm.addNestedPass<func::FuncOp>(createGPUBoolBytesPass());
  GPUOutlineKernelsPassOptions outline;
  outline.targetEnv = targetEnv;
  pm.addPass(createGPUOutlineKernelsPass(outline));

  // Bindings are 1-D: every access becomes a load or store at a linear
  // index.
  OpPassManager &kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(memref::createFoldMemRefAliasOpsPass());
  kernels.addPass(memref::createFlattenMemrefsPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(memref::createFoldMemRefAliasOpsPass());
  kernels.addPass(createGPUFoldFlatViewsPass());
  kernels.addPass(createGPUPrivateTemporariesPass());
  kernels.addPass(createLowerAffinePass());
  // Index arithmetic lowered from affine maps divides with floordivsi,
  // which SPIR-V lacks.
  kernels.addPass(arith::createArithExpandOpsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
}

void buildSPIRVPipeline(OpPassManager &pm) {
  GPUExactOpsPassOptions trunc;
  trunc.ops = {"trunc"};
  pm.nest<mlir::gpu::GPUModuleOp>().addPass(createGPUExactOpsPass(trunc));
  pm.addPass(createConvertMathToSPIRVPass());
  pm.addPass(createConvertGPUToSPIRVPass());
  OpPassManager &spirv = pm.nest<spirv::ModuleOp>();
  spirv.addPass(spirv::createSPIRVLowerABIAttributesPass());
  spirv.addPass(createSPIRVPushConstantsPass());
  spirv.addPass(createSPIRVVectorAccessPass());
  spirv.addPass(createSPIRVFloatControlsPass());
  spirv.addPass(spirv::createSPIRVUpdateVCEPass());
  spirv.addPass(createCanonicalizerPass());
}

void buildNVVMPipeline(OpPassManager &pm) {
  OpPassManager &kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  kernels.addPass(createLLVMKernelABIPass());
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What NVVM has no libdevice call for (math.trunc) becomes the LLVM
  // intrinsic, which the NVPTX back end lowers.
  kernels.addPass(createConvertMathToLLVMPass());
  // NVVM ops with no LLVM intrinsic (wgmma.mma_async) become inline PTX.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
}

void buildROCDLPipeline(OpPassManager &pm, StringRef chipset) {
  OpPassManager &kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  LLVMKernelABIPassOptions abi;
  abi.rocdl = true;
  kernels.addPass(createLLVMKernelABIPass(abi));
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = chipset.str();
  rocdl.useBarePtrCallConv = true;
  rocdl.runtime = mlir::gpu::amd::Runtime::HIP;
  kernels.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
}

void registerGPUCodegenPasses() {
  registerGPUPasses();
  PassPipelineRegistration<GPUCodegenPipelineOptions>(
      "strata-gpu-codegen",
      "Lowers dispatch kernels to a gpu.module of entry points with the GPU "
      "kernel ABI",
      buildGPUCodegenPipeline);
  PassPipelineRegistration<>(
      "strata-spirv-codegen",
      "Lowers a gpu.module of Strata kernels to a spirv.module",
      buildSPIRVPipeline);
  PassPipelineRegistration<>(
      "strata-nvvm-codegen",
      "Lowers a gpu.module of Strata kernels to NVVM with the CUDA kernel ABI",
      buildNVVMPipeline);
  PassPipelineRegistration<>(
      "strata-rocdl-codegen",
      "Lowers a gpu.module of Strata kernels to ROCDL with the ROCm kernel "
      "ABI (for any chip; ROCm executables lower once per chip)",
      [](OpPassManager &pm) { buildROCDLPipeline(pm, "gfx90a"); });
}

} // namespace strata::gpu
