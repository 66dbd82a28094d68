//===- Reduction.h - Reductions shared by a workgroup's invocations -*- C++ -*-===//
//
// A sequential loop that folds terms into one memory location
//
//   scf.for %i = %lb to %ub step %s {
//     %t = <terms computed from %i and reads>
//     %a = memref.load %acc[%j]          // %j defined outside the loop
//     %r = arith.addf %a, %t             // addf, mulf, max/min, addi, ...
//     memref.store %r, %acc[%j]
//   }
//
// can run in every invocation of a workgroup: each folds the terms of its
// iterations (%lb + (thread + k * size) * %s) into a value of its own, the
// values meet in workgroup memory, and invocation 0 folds them into %acc.
// The terms are combined in another order than the loop's, as a vectorized
// CPU reduction combines them.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_REDUCTION_H
#define STRATA_COMPILER_CODEGEN_GPU_REDUCTION_H

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace strata::gpu {

/// Rewrites `loop` as above (perfectly nested loops are first made one) and
/// returns the workgroup memory it took in bytes, or failure when the loop is
/// not such a reduction (nested loops may then have been made one, which
/// computes the same).
mlir::FailureOr<int64_t> shareReduction(mlir::scf::ForOp loop,
                                        mlir::Value thread, int64_t size);

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_REDUCTION_H
