//===- KernelVariants.h - How the host dispatches each kernel ---*- C++ -*-===//
//
// After code generation every kernel (a func.func marked flow.kernel) carries
// `flow.variants`: one dictionary per executable format the module embeds,
// saying how the host dispatches it in that format:
//
//   flow.variants = [{format = "cpu-elf-x86_64", ordinal = 0 : i32,
//                     workgroup_size = array<i32: 1, 1, 1>,
//                     workgroup_count = array<i32: 4, 1, 1>,   // or:
//                     count_factor = 512 : i64, count_words = array<i32: 2>,
//                     count_max = 65535 : i32,
//                     scratch_bytes = 0 : i64}]
//
// The ordinal, bindings and scratch are the same in every format; the
// workgroup count may differ, and the host picks the one of the format its
// device runs. The host passes (Passes.h) read the variants from the IR.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_HOST_KERNELVARIANTS_H
#define STRATA_COMPILER_HOST_KERNELVARIANTS_H

#include <string>

#include "compiler/codegen/DispatchInfo.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace strata::host {

inline constexpr llvm::StringLiteral kVariantsAttr = "flow.variants";

/// How the host dispatches one kernel in one executable format.
struct KernelVariant {
  std::string format;
  uint32_t ordinal = 0; ///< entry point number in the executable
  codegen::DispatchInfo dispatch;
};

/// The dictionary of `variant` (see above).
mlir::DictionaryAttr encodeKernelVariant(mlir::Builder &b,
                                         const KernelVariant &variant);

/// Appends `variant` to the kernel's flow.variants; fails (with a diagnostic
/// on the kernel) when its ordinal or scratch differs from a format's there.
mlir::LogicalResult addKernelVariant(mlir::func::FuncOp kernel,
                                     const KernelVariant &variant);

/// The variants of `kernel`, at least one; a missing or malformed attribute
/// is an error on `user` (the dispatch that needs them).
mlir::FailureOr<llvm::SmallVector<KernelVariant>>
kernelVariantsOf(mlir::func::FuncOp kernel, mlir::Operation *user);

} // namespace strata::host

#endif // STRATA_COMPILER_HOST_KERNELVARIANTS_H
