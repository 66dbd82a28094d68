//===- SourceLocation.h - "file:line:col" of an MLIR location --*- C++ -*-===//
//
// The runtime reports failures with the place in the model they come from
// (VM backtraces, failed kernel checks). Both take it from here.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_SUPPORT_SOURCELOCATION_H
#define STRATA_COMPILER_SUPPORT_SOURCELOCATION_H

#include <optional>
#include <string>

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace strata {

/// "file:line:col" of the first file location inside `loc` (which may be
/// fused or named), if any.
std::optional<std::string> fileLocation(mlir::Location loc);

/// "linalg.matmul at model.mlir:3:8" (the name alone without a file
/// location), for messages that name the op a failure comes from.
std::string opWithLocation(mlir::Operation *op);

/// How a run-time message names a value of a host function: "argument 1",
/// "its output" (a tensor.empty), "the result of linalg.matmul at m.mlir:3:8".
std::string describeValue(mlir::Value value);

} // namespace strata

#endif // STRATA_COMPILER_SUPPORT_SOURCELOCATION_H
