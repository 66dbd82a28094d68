//===- Constants.h - The bytes of constant tensors --------------*- C++ -*-===//
//
// What the passes that compute with constants at compile time
// (strata-const-eval, strata-affine-epilogues, strata-winograd) read of a
// constant tensor.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_DISPATCH_TRANSFORMS_CONSTANTS_H
#define STRATA_COMPILER_DISPATCH_TRANSFORMS_CONSTANTS_H

#include <optional>

#include "mlir/IR/Value.h"

namespace strata::flow {

/// The bytes of a constant tensor whose elements are whole bytes, packed in
/// row-major order; empty when the constant is of another kind. A splat
/// comes back as its single element with `splat` set.
struct ConstantBytes {
  mlir::Attribute attr; ///< the constant itself
  llvm::ArrayRef<char> data;
  bool splat = false;
  bool resource = false;
  mlir::Attribute splatValue;
};

/// `value`'s bytes when it is a static-shaped dense or dense_resource
/// constant tensor of whole-byte elements.
std::optional<ConstantBytes> constantBytes(mlir::Value value);

/// Element `i` (row-major) of a constant of f32 or f64 `element`s, as a
/// double; a splat's single element for every `i`.
double floatElement(const ConstantBytes &bytes, mlir::Type element, int64_t i);

} // namespace strata::flow

#endif // STRATA_COMPILER_DISPATCH_TRANSFORMS_CONSTANTS_H
