//===- KernelABI.h - Where a kernel's arguments live ------------*- C++ -*-===//
//
// The push-constant words of a bufferized kernel, shared by every code
// generator: each scalar argument in order (f32 bit-cast, i64 as two words,
// low first, index as one word), then each dynamic dimension of each memref
// argument, in argument order, outer dimension first.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_KERNELABI_H
#define STRATA_COMPILER_CODEGEN_GPU_KERNELABI_H

#include <optional>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

namespace strata::gpu {

struct PushConstantLayout {
  /// Per argument: the first word of a scalar argument, or of a memref
  /// argument's first dynamic dimension (std::nullopt for a memref without
  /// any).
  llvm::SmallVector<std::optional<unsigned>> firstWord;
  unsigned words = 0;

  static PushConstantLayout of(mlir::func::FuncOp kernel);
  /// The word holding dimension `dim` of memref argument `arg` (which must
  /// be dynamic).
  unsigned dimWord(mlir::func::FuncOp kernel, unsigned arg,
                   unsigned dim) const;
};

/// Gives the views of `memref` (subviews, reinterpret casts, reshapes) its
/// memory space, after `memref`'s own type got it; fails, naming the user,
/// for a user that is neither a view, a load nor a store.
mlir::LogicalResult propagateMemorySpace(mlir::Value memref);

/// The bytes a static workgroup temporary takes: its elements (scalars, or
/// vectors of them) each rounded up to whole bytes.
int64_t workgroupBytes(mlir::MemRefType type);

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_KERNELABI_H
