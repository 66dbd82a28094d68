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
// - the dispatches between two flow.submit ops are recorded into one command
//   buffer, with an execution barrier after each; a flow.submit ends it,
//   submits it and waits;
// - dispatch results go where strata-plan-transients placed them (one arena
//   per block, shared dynamic slots); the others get their own buffers;
// - a kernel is dispatched with the workgroup count of the format the device
//   runs, chosen among its flow.variants at run time.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_HOST_HOSTTOVM_H
#define STRATA_COMPILER_HOST_HOSTTOVM_H

#include "mlir/IR/BuiltinOps.h"

namespace strata::host {

/// Appends a vm.module (named after `module`, or "module") to `module` and
/// erases the host functions; fails with diagnostics on what it cannot
/// lower. Expects the IR of strata-plan-transients and
/// strata-batch-submissions (Passes.h): the plan's attributes, flow.submit
/// where the host waits, each kernel's flow.variants and the
/// flow.executable_binary ops of the executable its dispatches name.
mlir::LogicalResult lowerHostToVM(mlir::ModuleOp module);

} // namespace strata::host

#endif // STRATA_COMPILER_HOST_HOSTTOVM_H
