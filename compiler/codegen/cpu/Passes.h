//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//

#ifndef STRATA_COMPILER_CODEGEN_CPU_PASSES_H
#define STRATA_COMPILER_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace strata::cpu {

#define GEN_PASS_DECL
#include "compiler/codegen/cpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/codegen/cpu/Passes.h.inc"

} // namespace strata::cpu

#endif // STRATA_COMPILER_CODEGEN_CPU_PASSES_H
