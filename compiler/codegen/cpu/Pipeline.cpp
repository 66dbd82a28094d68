//===- Pipeline.cpp - The CPU code generation pass pipeline --------------===//

#include "compiler/codegen/cpu/Pipeline.h"

#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace strata::cpu {

void buildKernelBufferizationPipeline(OpPassManager &pm,
                                      unsigned maxStackAllocationBytes,
                                      bool windowPaddedInputs,
                                      bool checkViews) {
  pm.addPass(createCPUVerifyKernelsPass());
  // Integer powers with constant exponents (GELU's x^3) become products,
  // which vectorize (GPU kernels cannot call the helpers below at all).
  math::MathExpandOpsPassOptions powers;
  powers.opMnemonics = {"fpowi"};
  pm.addNestedPass<func::FuncOp>(math::createMathExpandOpsPass(powers));
  // The other integer powers (math.ipowi, math.fpowi) have no LLVM lowering
  // for vectors and need compiler-rt's __powisf2 for scalars: they become
  // calls to helper functions computing them by repeated squaring.
  pm.addPass(createConvertMathToFuncs());

  // Tensors to buffers: results are computed in place in output bindings,
  // temporaries go to the stack.
  pm.addPass(createCPUComputeInDestinationsPass());
  pm.addPass(createCPUResultsToBindingsPass());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Dynamic layouts at function boundaries would make every access strided
  // and defeat vector loads.
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::PromoteBuffersToStackPassOptions promote;
  promote.maxAllocSizeInBytes = maxStackAllocationBytes;
  promote.maxRankOfAllocatedMemRef = 8;
  pm.addNestedPass<func::FuncOp>(
      bufferization::createPromoteBuffersToStackPass(promote));
  pm.addNestedPass<func::FuncOp>(createCPUCopiesToLinalgPass());
  // Views with offsets or sizes from push constants are checked in the
  // kernel, not only by the host program.
  if (checkViews)
    pm.addNestedPass<func::FuncOp>(createCPUCheckViewsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // CSE makes the copies of a pad's border slabs onto themselves (one
  // subview each side, from bufferizing the slab's insert_slice) visibly
  // self-copies, which canonicalization erases; left in, they would also
  // keep the pad from being split across workgroups (a read of its result).
  pm.addPass(createCanonicalizerPass());
  if (windowPaddedInputs)
    pm.addNestedPass<func::FuncOp>(createCPUWindowPaddedInputsPass());
  // Static temporaries too large for the stack go to a scratch binding.
  pm.addPass(createCPUScratchToBindingPass());
  // Again, on what bufferization made: dynamically sized allocations.
  pm.addPass(createCPUVerifyKernelsPass());
}

void buildCPUCodegenPipeline(OpPassManager &pm,
                             const CPUCodegenPipelineOptions &options) {
  buildKernelBufferizationPipeline(pm, options.maxStackAllocationBytes,
                                   /*windowPaddedInputs=*/true,
                                   /*checkViews=*/true);

  // Workgroups, then register tiles as vector code.
  CPUSelectTileSizesPassOptions tileSizes;
  if (options.vectorBits != 0)
    tileSizes.vectorBits = options.vectorBits;
  if (options.vectorRegisters != 0)
    tileSizes.vectorRegisters = options.vectorRegisters;
  tileSizes.matmulRows = options.matmulRows;
  tileSizes.matmulVectors = options.matmulVectors;
  tileSizes.workgroupIterations = options.workgroupIterations;
  tileSizes.dynamicExtent = options.dynamicExtent;
  pm.addNestedPass<func::FuncOp>(createCPUSelectTileSizesPass(tileSizes));
  pm.addPass(createCPUDistributeToWorkgroupsPass());
  CPUMaterializePaddedWindowsPassOptions windows;
  if (options.vectorBits != 0)
    windows.vectorBits = options.vectorBits;
  windows.peel = options.peel;
  pm.addNestedPass<func::FuncOp>(createCPUMaterializePaddedWindowsPass(windows));
  CPUTileAndVectorizePassOptions vectorize;
  vectorize.peel = options.peel;
  if (options.vectorBits != 0)
    vectorize.vectorBits = options.vectorBits;
  if (options.vectorRegisters != 0)
    vectorize.vectorRegisters = options.vectorRegisters;
  pm.addNestedPass<func::FuncOp>(createCPUTileAndVectorizePass(vectorize));
  CPUApproximateMathPassOptions approximate;
  approximate.functions = llvm::to_vector(options.approximateMath);
  pm.addNestedPass<func::FuncOp>(createCPUApproximateMathPass(approximate));
  pm.addPass(createCPUWrapKernelABIPass());

  // Vector and loop code down to the LLVM dialect.
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMaskPass());
  pm.addNestedPass<func::FuncOp>(createCPUTreeReductionsPass());
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMultiReductionPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  VectorTransferToSCFOptions transfers;
  transfers.enableFullUnroll();
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(transfers));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCPULowerChecksPass());
  // Math with an LLVM intrinsic becomes one (expf, sqrt instructions, ...);
  // the rest becomes calls to the libm names the runtime provides. (The
  // common transcendental functions were approximated above.)
  ConvertMathToLLVMPassOptions math;
  math.approximateLog1p = false;
  pm.addPass(createConvertMathToLLVMPass(math));
  pm.addPass(createConvertMathToLibmPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  // Lets LLVM sum a vector as a tree rather than lane by lane; linalg
  // reductions already regroup terms when they are tiled.
  vectorToLLVM.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void registerCPUCodegenPasses() {
  registerCPUPasses();
  PassPipelineRegistration<CPUCodegenPipelineOptions>(
      "strata-cpu-codegen",
      "Lowers dispatch kernels to LLVM dialect entry points with the CPU "
      "kernel ABI",
      buildCPUCodegenPipeline);
}

void registerCPUCodegenDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
}

} // namespace strata::cpu
