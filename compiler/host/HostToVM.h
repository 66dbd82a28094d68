//===- HostToVM.h - Host functions to a vm.module ---------------*- C++ -*-===//
//
// Lowers the host side of a model (func.func ops after dispatch formation:
// flow.dispatch, scalar arith/math, tensor.dim / extract / reshapes, dense
// weights, cf branches, calls) to a vm.module whose functions drive the
// device through the `hal` native module (hal/module/hal_module.h):
//
// - a tensor is a hal.buffer_view at function boundaries and a (buffer,
//   offset, length, dims) quadruple inside; arguments are checked on entry
//   with hal.buffer_view.assert (shape and element type);
// - dense weights become vm.rodata imported as read-only device buffers
//   without a copy (hal.allocator.import);
// - the dispatches of a block are recorded into one command buffer, with an
//   execution barrier after each, and submitted (then waited for) before the
//   host reads a tensor, calls, branches or returns;
// - dispatch results that die in their block are placed in one transient
//   arena per block, planned by lifetime (MemoryPlan.h); the others get their
//   own buffers.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_HOST_HOSTTOVM_H
#define STRATA_COMPILER_HOST_HOSTTOVM_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/codegen/DispatchInfo.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace strata::host {

/// How the host dispatches one kernel in one executable format.
struct KernelInfo {
  uint32_t ordinal = 0; ///< entry point number in the executable
  codegen::DispatchInfo dispatch;
};

/// A kernel in each executable format the module embeds ("cpu-elf-x86_64",
/// "vulkan-spirv"): the ordinal, bindings and constants are the same in
/// all; the workgroup count may differ, and the host picks the one of the
/// format its device runs.
using KernelVariants = std::vector<std::pair<std::string, KernelInfo>>;

struct HostToVMOptions {
  std::string moduleName = "module";
  /// The name of the executable (embedded in the module) with the kernels.
  std::string executableName = "kernels";
  /// Kernels by symbol.
  llvm::StringMap<KernelVariants> kernels;
};

/// Appends a vm.module to `module` and erases the host functions; fails with
/// diagnostics on what it cannot lower.
mlir::LogicalResult lowerHostToVM(mlir::ModuleOp module,
                                  const HostToVMOptions &options);

} // namespace strata::host

#endif // STRATA_COMPILER_HOST_HOSTTOVM_H
