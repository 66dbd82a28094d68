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

namespace strata {

/// "file:line:col" of the first file location inside `loc` (which may be
/// fused or named), if any.
std::optional<std::string> fileLocation(mlir::Location loc);

} // namespace strata

#endif // STRATA_COMPILER_SUPPORT_SOURCELOCATION_H
