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
  /// Compute capabilities, "sm_80" style; one PTX image each. sm_90a's
  /// kernels are lowered apart, f16 and bf16 matmuls on wgmma (matrix tiles
  /// kind `wgmma`); the others' once for all, on mma.sync where every one
  /// is sm_80 or later.
  std::vector<std::string> archs = {"sm_80", "sm_90"};
  /// ptxas for the cubins: empty to look for it ($CUDA_HOME/bin, then
  /// /usr/local/cuda/bin, then PATH), "none" for PTX alone.
  std::string ptxas;
};

/// A compute capability, and whether its arch-specific features are used
/// ("sm_90a": wgmma; such code runs on that capability alone).
struct CUDAArch {
  unsigned capability = 0;
  bool specific = false;
  /// "sm_90", "sm_90a".
  std::string name() const;
  bool operator==(const CUDAArch &other) const {
    return capability == other.capability && specific == other.specific;
  }
};

/// The arch "sm_80" (80) or "sm_90a" (90, specific) names, or failure for a
/// name that is not sm_<major><minor>[a] with a capability the NVVM back end
/// knows (the suffix from sm_90 on).
mlir::FailureOr<CUDAArch> parseCUDAArch(llvm::StringRef arch);

struct CUDAImage {
  bool cubin = false;
  CUDAArch arch;
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
