//===- ROCmExecutable.h - Dispatch kernels to a ROCm executable -*- C++ -*-===//
//
// A builtin.module of dispatch kernels (the input of the CPU, SPIR-V and
// CUDA code generators too) becomes a "rocm-hsaco" executable: the shared GPU
// pipeline, then for each AMD GPU architecture asked for the ROCDL back end
// (strata-llvm-kernel-abi, convert-gpu-to-rocdl with bare pointers), LLVM's
// AMDGPU target and ld.lld linking an HSA code object, with ROCm's device
// math library (ocml.bc) linked in only when a kernel calls it; and the
// metadata FlatBuffer of schemas/rocm_executable.fbs, which states the kernel
// ABI the ROCm driver implements. See docs/codegen-gpu.md.
//
// Errors are MLIR diagnostics on the module's context, returned as
// failure(); nothing aborts on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_ROCMEXECUTABLE_H
#define STRATA_COMPILER_CODEGEN_GPU_ROCMEXECUTABLE_H

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen/gpu/EntryPoints.h"
#include "compiler/codegen/gpu/Pipeline.h"
#include "mlir/IR/BuiltinOps.h"

namespace strata::gpu {

struct ROCmTargetOptions {
  /// AMD GPU architectures ("gfx90a"); one code object each.
  std::vector<std::string> archs = {"gfx90a", "gfx942", "gfx1100"};
  /// The code object version of every code object (4, 5 or 6); 0: each
  /// arch's own default (rocmDefaultCodeObjectVersion).
  unsigned codeObjectVersion = 0;
  /// The folder holding ROCm's device libraries (ocml.bc): empty to look
  /// in the usual places ($ROCM_PATH/amdgcn/bitcode, /opt/rocm/...,
  /// Debian's /usr/lib/<triple>/amdgcn/bitcode).
  std::string deviceLibs;
  /// ld.lld: empty to look for ld.lld-22, then ld.lld, on PATH and in
  /// LLVM's own bin folder.
  std::string lld;
};

/// The code object version an arch gets by default: 4 for gfx90a (the
/// version ROCm 5 runtimes, Debian's among them, load for it), 5 for the
/// architectures newer runtimes introduced.
unsigned rocmDefaultCodeObjectVersion(llvm::StringRef arch);

/// Whether `arch` is an AMD GPU architecture LLVM's AMDGPU target knows.
bool isKnownROCmArch(llvm::StringRef arch);

struct ROCmCodeObject {
  std::string arch;
  unsigned version = 0;
  std::vector<uint8_t> bytes;
};

struct ROCmExecutable {
  std::string format = "rocm-hsaco";
  std::vector<ROCmCodeObject> codeObjects;
  std::vector<uint8_t> data;     // the code objects, concatenated
  std::vector<uint8_t> metadata; // schemas/rocm_executable.fbs
  std::vector<EntryPointInfo> entryPoints;
};

/// Bytes of an entry point's explicit kernel arguments under the ROCm
/// kernel ABI (the kernarg_bytes of its metadata).
uint32_t rocmKernargBytes(const EntryPointInfo &entry);

/// What the shared GPU pipeline may assume of an AMD GPU, as the
/// #spirv.target_env its distributor reads limits from: 1024 work items per
/// workgroup, 64 KiB of LDS, wavefronts of 64.
std::string rocmTargetEnv();

/// The strata-gpu-matrix-tiles kind of `arch`: "mfma" on CDNA (gfx908 and
/// later gfx9), "wmma32" on RDNA3 (gfx11), else "scalar".
llvm::StringRef rocmMatrixTiles(llvm::StringRef arch);

/// Runs the GPU pipeline and the ROCDL back end on `module` and writes the
/// code objects.
mlir::FailureOr<ROCmExecutable> compileROCmExecutable(
    mlir::ModuleOp module, const GPUCodegenPipelineOptions &options,
    const ROCmTargetOptions &target,
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)> configure =
        nullptr);

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_ROCMEXECUTABLE_H
