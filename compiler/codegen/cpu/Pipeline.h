//===- Pipeline.h - The CPU code generation pass pipeline -------*- C++ -*-===//
//
// Dispatch kernels (func.func on memrefs or tensors) to LLVM dialect entry
// points with the CPU kernel ABI, as one list of named passes. Registered as
// `strata-cpu-codegen` so a lit test or a user can replay it with strata-opt
// and stop anywhere with --mlir-print-ir-after=<pass>.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_CPU_PIPELINE_H
#define STRATA_COMPILER_CODEGEN_CPU_PIPELINE_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace strata::cpu {

struct CPUCodegenPipelineOptions
    : mlir::PassPipelineOptions<CPUCodegenPipelineOptions> {
  Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Width of the target's vector registers in bits; 0: the "
                     "target machine's native width (compileCPUExecutable), "
                     "or strata-cpu-select-tile-sizes' default without one "
                     "(strata-opt)"),
      llvm::cl::init(0)};
  Option<int64_t> vectorRegisters{
      *this, "vector-registers",
      llvm::cl::desc("Vector registers of the target; 0: the target "
                     "machine's (compileCPUExecutable), or "
                     "strata-cpu-select-tile-sizes' default without one "
                     "(strata-opt)"),
      llvm::cl::init(0)};
  Option<int64_t> matmulRows{
      *this, "matmul-rows",
      llvm::cl::desc("Rows (m) of a contraction's register tile (and output "
                     "columns of a convolution's); 0: as many as the vector "
                     "registers hold, at most 8"),
      llvm::cl::init(0)};
  Option<int64_t> matmulVectors{
      *this, "matmul-vectors",
      llvm::cl::desc("Vector registers along n of a contraction's tile"),
      llvm::cl::init(2)};
  Option<int64_t> workgroupIterations{
      *this, "workgroup-iterations",
      llvm::cl::desc("Iterations of the largest op a workgroup should get"),
      llvm::cl::init(65536)};
  Option<int64_t> dynamicExtent{
      *this, "dynamic-extent",
      llvm::cl::desc("Extent assumed for a dynamic loop when sizing "
                     "workgroup tiles"),
      llvm::cl::init(256)};
  Option<bool> peel{
      *this, "peel",
      llvm::cl::desc("Peel tile loops so full tiles need no mask"),
      llvm::cl::init(true)};
  ListOption<std::string> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Math functions computed by polynomial approximations "
                     "(vectorizable) rather than libm calls; 'none' for none"),
      llvm::cl::list_init<std::string>(
          {"exp", "expm1", "tanh", "log", "log2", "log1p", "erf"})};
  Option<unsigned> maxStackAllocationBytes{
      *this, "max-stack-allocation-bytes",
      llvm::cl::desc("Largest temporary buffer moved to the stack; larger "
                     "ones are rejected (kernels cannot allocate on the "
                     "heap)"),
      llvm::cl::init(65536)};
};

/// Adds the front that every code generator shares to `pm` (on a
/// builtin.module of kernels): checks the kernel contract, computes results in
/// output bindings and bufferizes, temporaries up to
/// `maxStackAllocationBytes` on the stack and larger static ones in a scratch
/// binding. With `windowPaddedInputs` (the CPU's), a pad that one op reads
/// becomes a placeholder of strata-cpu-window-padded-inputs rather than a
/// temporary. With `checkViews` (the CPU's), strata-cpu-check-views checks
/// views at offsets from push constants in the kernel (the GPU code
/// generators do not lower kernel checks inside distributed loops).
void buildKernelBufferizationPipeline(mlir::OpPassManager &pm,
                                      unsigned maxStackAllocationBytes,
                                      bool windowPaddedInputs = false,
                                      bool checkViews = false);

/// Adds the pipeline to `pm`, which must run on a builtin.module.
void buildCPUCodegenPipeline(mlir::OpPassManager &pm,
                             const CPUCodegenPipelineOptions &options);

/// Registers the passes and the `strata-cpu-codegen` pipeline.
void registerCPUCodegenPasses();

/// Adds what a context needs to parse and compile kernels: the upstream
/// dialects with their bufferization, tiling and to-LLVM interfaces. All of
/// them, so that an op of an unsupported dialect parses and gets
/// strata-cpu-verify-kernels' diagnostic rather than "unknown dialect".
void registerCPUCodegenDialects(mlir::DialectRegistry &registry);

} // namespace strata::cpu

#endif // STRATA_COMPILER_CODEGEN_CPU_PIPELINE_H
