//===- FlowOps.h - the flow dialect -----------------------------*- C++ -*-===//
//
// `flow.dispatch`: a host function's call of an outlined kernel;
// `flow.submit`, `flow.executable_binary` and the checks. See FlowOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_DISPATCH_IR_FLOWOPS_H
#define STRATA_COMPILER_DISPATCH_IR_FLOWOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "compiler/dispatch/IR/FlowDialect.h.inc"

#define GET_OP_CLASSES
#include "compiler/dispatch/IR/FlowOps.h.inc"

namespace strata::flow {

/// The attribute that marks a func.func as a kernel.
inline constexpr llvm::StringLiteral kKernelAttr = "flow.kernel";

} // namespace strata::flow

#endif // STRATA_COMPILER_DISPATCH_IR_FLOWOPS_H
