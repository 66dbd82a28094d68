//===- SPIRVExecutable.h - Dispatch kernels to a Vulkan executable -*- C++ -*-===//
//
// A builtin.module of dispatch kernels (the input of the CPU code generator
// too) becomes a "vulkan-spirv" executable: one SPIR-V module with a
// GLCompute entry point per kernel, and the metadata FlatBuffer of
// schemas/vulkan_executable.fbs, which also states the kernel ABI the
// Vulkan driver implements. See docs/codegen-gpu.md.
//
// Errors are MLIR diagnostics on the module's context, returned as
// failure(); nothing aborts on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_SPIRVEXECUTABLE_H
#define STRATA_COMPILER_CODEGEN_GPU_SPIRVEXECUTABLE_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/gpu/EntryPoints.h"
#include "compiler/codegen/gpu/Pipeline.h"
#include "mlir/IR/BuiltinOps.h"

namespace strata::gpu {

struct SPIRVExecutable {
  std::string format = "vulkan-spirv";
  std::vector<uint8_t> spirv;
  std::vector<uint8_t> metadata; // schemas/vulkan_executable.fbs
  std::vector<EntryPointInfo> entryPoints;
  std::vector<std::string> capabilities;
  std::vector<std::string> extensions;
};

/// Runs the GPU and SPIR-V pipelines on `module` (in place) and serializes
/// the result. `configure`, when given, may set up the pass manager first.
mlir::FailureOr<SPIRVExecutable> compileSPIRVExecutable(
    mlir::ModuleOp module, const GPUCodegenPipelineOptions &options,
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)> configure =
        nullptr);

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_SPIRVEXECUTABLE_H
