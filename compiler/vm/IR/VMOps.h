//===- VMOps.h - vm dialect ops ---------------------------------*- C++ -*-===//
//
// Ops of the `vm` dialect. Every op that is one VM instruction implements
// InstructionOpInterface, whose getOpcode() is the op's row in
// schemas/bytecode_ops.def.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_IR_VMOPS_H
#define STRATA_COMPILER_VM_IR_VMOPS_H

#include "compiler/vm/IR/VMDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "schemas/bytecode.h"

#include "compiler/vm/IR/VMInterfaces.h.inc"

#define GET_OP_CLASSES
#include "compiler/vm/IR/VMOps.h.inc"

#endif // STRATA_COMPILER_VM_IR_VMOPS_H
