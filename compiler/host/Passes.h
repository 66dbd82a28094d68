//===- Passes.h - The host side of a model, as passes -----------*- C++ -*-===//
//
// After code generation the host functions (func.func with flow.dispatch,
// scalar arith, reshapes, branches and calls) go to the VM in three passes,
// each with one job and a lit test (tests/compiler/host/):
//
// - strata-plan-transients: per block, places the dispatch results that die
//   in it and the scratch of its kernels in one arena by lifetime
//   (MemoryPlan.h), and dynamically sized ones in shared slots; writes the
//   plan on the dispatches (below).
// - strata-batch-submissions: puts a flow.submit where the host needs the
//   device to have finished: before it reads a tensor a recorded dispatch
//   wrote, calls, branches or returns. The dispatches between two submits
//   are one command buffer.
// - strata-host-to-vm: lowers the functions to a vm.module that drives the
//   device through the hal module (HostToVM.h), reading the plan, the
//   submits, the kernels' flow.variants (KernelVariants.h) and the
//   flow.executable_binary ops from the IR.
//
// The plan, as attributes of flow.dispatch:
//   flow.arena_bytes = N : i64        the first arena user of its block
//                                     allocates the block's arena of N bytes
//   flow.transient_offsets = array<i64: ...>   per result: its offset in the
//                                     arena, or -1 (a buffer of its own)
//   flow.scratch_offset = N : i64     where the kernel's scratch goes
//   flow.dynamic_slots = array<i64: ...>       per result: its slot among
//                                     the block's dynamically sized
//                                     transients, or -1
//   flow.dynamic_arena                (unit) allocates the slots, sized from
//                                     the dims of the values in each
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_HOST_PASSES_H
#define STRATA_COMPILER_HOST_PASSES_H

#include <memory>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace strata::host {

inline constexpr llvm::StringLiteral kArenaBytesAttr = "flow.arena_bytes";
inline constexpr llvm::StringLiteral kTransientOffsetsAttr =
    "flow.transient_offsets";
inline constexpr llvm::StringLiteral kScratchOffsetAttr = "flow.scratch_offset";
inline constexpr llvm::StringLiteral kDynamicSlotsAttr = "flow.dynamic_slots";
inline constexpr llvm::StringLiteral kDynamicArenaAttr = "flow.dynamic_arena";

/// The module's host functions: every func.func not marked flow.kernel (a
/// declaration among them has no blocks).
llvm::SmallVector<mlir::func::FuncOp> hostFunctions(mlir::ModuleOp module);

/// The bytes of one element of a tensor (an i1 takes a byte).
int64_t elementBytes(mlir::Type type);

std::unique_ptr<mlir::Pass> createPlanTransientsPass();
std::unique_ptr<mlir::Pass> createBatchSubmissionsPass();
std::unique_ptr<mlir::Pass> createHostToVMPass();

/// Registers the three for strata-opt.
void registerHostPasses();

} // namespace strata::host

#endif // STRATA_COMPILER_HOST_PASSES_H
