//===- VMDialect.h - the vm dialect and its types ---------------*- C++ -*-===//
//
// The `vm` dialect: one op per VM instruction (see VMBase.td). Types are the
// builtin i32/i64/f32/f64 for the scalar register bank and the dialect's ref
// types (!vm.buffer, !vm.list, !vm.ref) for the ref bank.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_IR_VMDIALECT_H
#define STRATA_COMPILER_VM_IR_VMDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/Types.h"

#include "compiler/vm/IR/VMDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/vm/IR/VMTypes.h.inc"

namespace strata::vm {

/// True for types held in the ref bank: !vm.buffer, !vm.list and !vm.ref.
bool isRefType(mlir::Type type);

/// True for types held in the scalar bank: i32, i64, f32 and f64.
bool isScalarType(mlir::Type type);

/// True for every type a VM register can hold.
inline bool isVMType(mlir::Type type) {
  return isScalarType(type) || isRefType(type);
}

} // namespace strata::vm

#endif // STRATA_COMPILER_VM_IR_VMDIALECT_H
