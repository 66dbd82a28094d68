//===- CUDAExecutable.h - Dispatch kernels to a CUDA executable -*- C++ -*-===//
//
// A builtin.module of dispatch kernels (the input of the CPU and SPIR-V code
// generators too) becomes a "cuda-ptx" executable: the shared GPU pipeline,
// then the NVVM back end (strata-llvm-kernel-abi, convert-gpu-to-nvvm with
// bare pointers), PTX written in process for each compute capability asked
// for, a cubin beside each where `ptxas` is found, and the metadata
// FlatBuffer of schemas/cuda_executable.fbs, which states the kernel ABI the
// CUDA driver implements. See docs/codegen-gpu.md.
//
// Errors are MLIR diagnostics on the module's context, returned as
// failure(); nothing aborts on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_CUDAEXECUTABLE_H
#define STRATA_COMPILER_CODEGEN_GPU_CUDAEXECUTABLE_H

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/gpu/EntryPoints.h"
#include "compiler/codegen/gpu/Pipeline.h"
#include "mlir/IR/BuiltinOps.h"

namespace strata::gpu {

struct CUDATargetOptions {
  /// Compute capabilities, "sm_80" style; one PTX image each.
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  /// ptxas for the cubins: empty to look for it ($CUDA_HOME/bin, then
  /// /usr/local/cuda/bin, then PATH), "none" for PTX alone.
  std::string ptxas;
};

/// The compute capability of "sm_80" (80), or failure for a name that is
/// not sm_<major><minor> with a capability the NVVM back end knows.
mlir::FailureOr<unsigned> parseCUDAArch(llvm::StringRef arch);

struct CUDAImage {
  bool cubin = false;
  unsigned arch = 0;
  std::vector<uint8_t> bytes;
};

struct CUDAExecutable {
  std::string format = "cuda-ptx";
  std::vector<CUDAImage> images;
  std::vector<uint8_t> data;     // the images, concatenated
  std::vector<uint8_t> metadata; // schemas/cuda_executable.fbs
  std::vector<EntryPointInfo> entryPoints;
};

/// What the shared GPU pipeline may assume of a CUDA device, as the
/// #spirv.target_env its distributor reads limits from: 1024 threads per
/// block, 48 KiB of static shared memory, warps of 32.
std::string cudaTargetEnv();

/// Runs the GPU pipeline and the NVVM back end on `module` (in place) and
/// writes the images.
mlir::FailureOr<CUDAExecutable> compileCUDAExecutable(
    mlir::ModuleOp module, const GPUCodegenPipelineOptions &options,
    const CUDATargetOptions &target,
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)> configure =
        nullptr);

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_CUDAEXECUTABLE_H
