//===- PackedMatmul.h - The multiply-accumulate over packed strips -*- C++ -*-===//
//
// A matmul whose right-hand side is packed in strips of n0 columns,
// Bp[N / n0][K][n0], is a linalg.generic over (m, n1, n0, k):
// C(m, n1, n0) += A(m, k) * Bp(n1, k, n0), on the output expanded to
// M x N / n0 x n0. strata-pack-weights makes it for constant weights (on
// tensors), the CPU code generator for each cache block it packs at run time
// (on buffers); both build it here, so that the code generator's tiles meet
// one form. Header-only.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_PACKEDMATMUL_H
#define STRATA_COMPILER_CODEGEN_PACKEDMATMUL_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace strata::codegen {

/// The body of a float contraction or convolution: out += in * weight.
inline void multiplyAccumulate(mlir::OpBuilder &builder, mlir::Location at,
                               mlir::ValueRange args) {
  mlir::Value product = mlir::arith::MulFOp::create(builder, at, args[0], args[1]);
  mlir::Value sum = mlir::arith::AddFOp::create(builder, at, args[2], product);
  mlir::linalg::YieldOp::create(builder, at, sum);
}

/// The indexing maps of the packed matmul over (m, n1, n0, k): A(m, k),
/// Bp(n1, k, n0), C(m, n1, n0).
inline llvm::SmallVector<mlir::AffineMap, 3>
packedMatmulMaps(mlir::MLIRContext *context) {
  mlir::AffineExpr m, n1, n0, k;
  mlir::bindDims(context, m, n1, n0, k);
  return {mlir::AffineMap::get(4, 0, {m, k}, context),
          mlir::AffineMap::get(4, 0, {n1, k, n0}, context),
          mlir::AffineMap::get(4, 0, {m, n1, n0}, context)};
}

/// C(m, n1, n0) += A(m, k) * Bp(n1, k, n0) into `init` (M x N1 x n0): on
/// tensors its result is the new C, on buffers it has none.
inline mlir::linalg::GenericOp createPackedMatmul(mlir::OpBuilder &builder,
                                                  mlir::Location loc,
                                                  mlir::Value input,
                                                  mlir::Value packed,
                                                  mlir::Value init) {
  llvm::SmallVector<mlir::Type, 1> results;
  if (mlir::isa<mlir::RankedTensorType>(init.getType()))
    results.push_back(init.getType());
  using mlir::utils::IteratorType;
  return mlir::linalg::GenericOp::create(
      builder, loc, results, mlir::ValueRange{input, packed},
      mlir::ValueRange{init}, packedMatmulMaps(builder.getContext()),
      llvm::ArrayRef<IteratorType>{IteratorType::parallel,
                                   IteratorType::parallel,
                                   IteratorType::parallel,
                                   IteratorType::reduction},
      multiplyAccumulate);
}

} // namespace strata::codegen

#endif // STRATA_COMPILER_CODEGEN_PACKEDMATMUL_H
