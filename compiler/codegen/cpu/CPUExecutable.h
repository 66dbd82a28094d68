//===- CPUExecutable.h - Dispatch kernels to a CPU executable ---*- C++ -*-===//
//
// The CPU code generator: a builtin.module of dispatch kernels (func.func on
// memrefs or tensors, bodies in linalg/arith/math/memref/scf) becomes a CPU
// executable the runtime loads from memory: an ELF shared object for
// x86_64 or aarch64 whose exported functions follow drivers/cpu/kernel_abi.h,
// and the metadata FlatBuffer of schemas/cpu_executable.fbs. See
// docs/codegen-cpu.md for the conventions (bindings, push constants,
// workgroups).
//
// The stages are public so that tools can stop after any of them:
//
//   createCPUTargetMachine   options -> llvm::TargetMachine
//   lowerToLLVMDialect       kernels -> LLVM dialect entry points (in place)
//   translateToLLVMIR        LLVM dialect -> LLVM IR, optimised at O2
//   emitObjectFile           LLVM IR -> relocatable object (imports checked)
//   linkSharedObject         object -> ELF shared object (ld.lld)
//   collectEntryPoints + serializeMetadata
//
// compileCPUExecutable runs them all. Errors are reported as MLIR
// diagnostics on the module's context (with the source location when one
// applies) and returned as failure(); nothing aborts on bad input.
//
// Thread safety: the functions are reentrant; a module and its context are
// used by one thread at a time, as usual in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_CPU_CPUEXECUTABLE_H
#define STRATA_COMPILER_CODEGEN_CPU_CPUEXECUTABLE_H

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/DispatchInfo.h"
#include "compiler/codegen/cpu/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace strata::cpu {

struct CPUTargetOptions {
  /// x86_64-linux-gnu or aarch64-linux-gnu (any spelling llvm::Triple
  /// normalizes to one of them, e.g. x86_64-unknown-linux-gnu).
  std::string triple = "x86_64-linux-gnu";
  /// An LLVM CPU name; "host" is this machine's CPU (and its features) and
  /// only valid when the triple's architecture is this machine's; "generic"
  /// is the architecture's baseline; empty is "host" for this machine's
  /// architecture and "generic" for others.
  std::string cpu;
  /// Extra LLVM target features, e.g. "+avx2,+fma".
  std::string features;
  /// The ld.lld that links the shared object.
  std::string lldPath;
};

/// One entry point, as the executable's metadata and the host compiler see
/// it.
struct EntryPointInfo {
  std::string name;
  uint32_t bindingCount = 0;
  uint32_t constantCount = 0;
  std::vector<bool> bindingReadOnly;
  /// Rows of the distributed loop per workgroup (x), 1 for y and z.
  std::array<uint32_t, 3> workgroupSize = {1, 1, 1};
  /// The workgroup count that gives each workgroup one tile, when the
  /// compiler knows it...
  std::optional<std::array<uint32_t, 3>> workgroupCount;
  /// ...or the push constant N it comes from: ceil(N / workgroupSize[0]).
  /// Any count is correct (workgroups stride over the tiles); these give
  /// the most parallelism without idle workgroups.
  std::optional<uint32_t> workgroupCountConstant;
  /// What each check of the kernel tests, with its model location.
  std::vector<std::string> checkMessages;
  /// Bytes of the scratch buffer the kernel takes as its last binding (0:
  /// none); the host provides it.
  uint64_t scratchBytes = 0;
  /// Bytes of local memory each workgroup uses (0: none); the runtime
  /// provides it per thread.
  uint64_t localMemoryBytes = 0;
  /// The workgroups should run in ascending order on a thread (they
  /// prefetch what the next one reads).
  bool ascendingWorkgroups = false;

  /// What the host compiler needs of it.
  codegen::DispatchInfo dispatchInfo() const {
    codegen::DispatchInfo info;
    info.workgroupSize = workgroupSize;
    info.workgroupCount = workgroupCount;
    if (workgroupCountConstant)
      info.countWords = {*workgroupCountConstant};
    info.scratchBytes = scratchBytes;
    return info;
  }
};

/// What a module embeds as an ExecutableDef.
struct CPUExecutable {
  std::string format; // "cpu-elf-x86_64" or "cpu-elf-aarch64"
  std::vector<uint8_t> elf;
  std::vector<uint8_t> metadata; // schemas/cpu_executable.fbs
  std::vector<EntryPointInfo> entryPoints;
  /// CPU features beyond the baseline the code may use (x86-64: the names
  /// of schemas/cpu_features.def its target machine enables).
  std::vector<std::string> requiredFeatures;
};

/// The default ld.lld (the one of the LLVM the compiler was built with).
std::string defaultLLDPath();

/// The target machine for `options`; reports on `loc` when the triple or CPU
/// is not supported.
mlir::FailureOr<std::unique_ptr<llvm::TargetMachine>>
createCPUTargetMachine(const CPUTargetOptions &options, mlir::Location loc);

/// "cpu-elf-x86_64" / "cpu-elf-aarch64".
std::string executableFormat(const llvm::TargetMachine &machine);

/// Widest vector register of the target machine's CPU and features, in bits.
int64_t nativeVectorBits(const llvm::TargetMachine &machine);

/// Vector registers the target machine's CPU has: 32 with AVX-512 and on
/// aarch64, 16 on x86-64 without AVX-512 (AVX2, SSE).
int64_t nativeVectorRegisters(const llvm::TargetMachine &machine);

/// Runs the strata-cpu-codegen pipeline on `module`. Unless the options set
/// vector-bits and vector-registers, they are the target's. `configure`, when given,
/// may set up the pass manager first (a tool applies its command-line
/// options: IR printing, timing).
mlir::LogicalResult lowerToLLVMDialect(
    mlir::ModuleOp module, const llvm::TargetMachine &machine,
    const CPUCodegenPipelineOptions &options,
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)> configure =
        nullptr);

/// Translates an LLVM dialect module and optimises it at O2 for `machine`.
mlir::FailureOr<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                  llvm::TargetMachine &machine);

/// Machine code as a relocatable object. Fails, naming the symbols, when
/// the code needs a function the runtime does not provide
/// (RuntimeImports.h).
mlir::FailureOr<std::vector<uint8_t>>
emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine,
               mlir::Location loc);

/// Links a relocatable object into a shared object without libc (imports
/// stay undefined) by running ld.lld in a private temporary directory, which
/// is always removed.
mlir::FailureOr<std::vector<uint8_t>>
linkSharedObject(llvm::ArrayRef<uint8_t> object, llvm::StringRef lldPath,
                 mlir::Location loc);

/// The entry points of a module lowered by lowerToLLVMDialect, in symbol
/// order; fails when there is none.
mlir::FailureOr<std::vector<EntryPointInfo>>
collectEntryPoints(mlir::ModuleOp module);

/// The CpuExecutableDef FlatBuffer of schemas/cpu_executable.fbs.
std::vector<uint8_t>
serializeMetadata(llvm::ArrayRef<EntryPointInfo> entries,
                  llvm::ArrayRef<std::string> requiredFeatures = {});

/// The features of schemas/cpu_features.def that `machine` enables (none
/// for other architectures than x86-64).
std::vector<std::string> requiredFeatures(const llvm::TargetMachine &machine);

/// All of the above. `module` is lowered in place.
mlir::FailureOr<CPUExecutable>
compileCPUExecutable(mlir::ModuleOp module, const CPUTargetOptions &target,
                     const CPUCodegenPipelineOptions &options);

} // namespace strata::cpu

#endif // STRATA_COMPILER_CODEGEN_CPU_CPUEXECUTABLE_H
