//===- ModelCompiler.h - A model in MLIR to a module file -------*- C++ -*-===//
//
// The phases of compile-module for a model (docs/compiler.md):
//
//   input       tosa -> linalg, aggregated ops decomposed, dialects checked
//   global-opt  canonicalize, CSE, elementwise fusion, dead code removed
//   dispatch    dispatch regions formed and outlined into kernels
//   executables kernels compiled for each target (CPU ELF, SPIR-V, PTX)
//   vm          host functions lowered to a vm.module calling the hal module
//   module      the module file
//
// compileModel runs them up to `compileTo` and leaves the IR of that phase
// in `module` (the module file is returned only for the last phase).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_PIPELINE_MODELCOMPILER_H
#define STRATA_COMPILER_PIPELINE_MODELCOMPILER_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/cpu/CPUExecutable.h"
#include "compiler/codegen/gpu/CUDAExecutable.h"
#include "compiler/codegen/gpu/ROCmExecutable.h"
#include "compiler/codegen/gpu/Pipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace strata {

enum class Phase { kInput, kGlobalOpt, kDispatch, kExecutables, kVM, kModule };

/// "input", "global-opt", ...; nullopt for an unknown name.
std::optional<Phase> parsePhase(llvm::StringRef name);
llvm::StringRef phaseName(Phase phase);
/// Every phase name, comma-separated, for messages.
std::string phaseNames();

struct ModelCompileOptions {
  Phase compileTo = Phase::kModule;
  /// CPU executables: one format per triple (none given: the host's).
  bool cpuTarget = true;
  /// strata-pack-weights in global-opt: constant matmul weights stored in
  /// strips of the columns a CPU tile reads (only with CPU executables).
  bool packWeights = true;
  /// strata-winograd in global-opt: 3x3 stride-1 convolutions as Winograd
  /// F(2x2, 3x3) (only for modules whose executables are all CPU ones).
  bool winograd = true;
  std::vector<cpu::CPUTargetOptions> targets;
  /// A "vulkan-spirv" executable too (--target=vulkan).
  bool vulkanTarget = false;
  /// A "cuda-ptx" executable too (--target=cuda), for these archs.
  bool cudaTarget = false;
  gpu::CUDATargetOptions cuda;
  /// A "rocm-hsaco" executable too (--target=rocm), for these archs.
  bool rocmTarget = false;
  gpu::ROCmTargetOptions rocm;
  cpu::CPUCodegenPipelineOptions codegen;
  gpu::GPUCodegenPipelineOptions gpuCodegen;
  /// Writes each executable (ELF) here when non-empty.
  std::string dumpExecutablesDir;
  /// A 64-byte Ed25519 secret key: the module is signed with it (empty: not
  /// signed). schemas/integrity.h describes the signature.
  std::vector<uint8_t> signingKey;
  /// Applied to every pass manager (IR printing, timing).
  std::function<mlir::LogicalResult(mlir::PassManager &)> configure;
  /// Called with each pass pipeline before it runs (--print-pipeline).
  std::function<void(llvm::StringRef phase, mlir::OpPassManager &)>
      onPipeline;
  /// Called at the end of each phase with its wall time (--time-phases).
  std::function<void(llvm::StringRef phase, double seconds)> onPhaseTime;
};

/// Registers the dialects a model may be written in.
void registerModelDialects(mlir::DialectRegistry &registry);

/// Compiles `module` in place; returns the module file when compileTo is
/// kModule, an empty vector otherwise.
mlir::FailureOr<std::vector<uint8_t>>
compileModel(mlir::ModuleOp module, const ModelCompileOptions &options);

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_MODELCOMPILER_H
