//===- Passes.h - GPU code generation passes --------------------*- C++ -*-===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_PASSES_H
#define STRATA_COMPILER_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace strata::gpu {

/// The descriptor set the outliner puts the push-constant argument in.
constexpr unsigned kPushConstantSet = 3;

#define GEN_PASS_DECL
#include "compiler/codegen/gpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/codegen/gpu/Passes.h.inc"

} // namespace strata::gpu

#endif // STRATA_COMPILER_CODEGEN_GPU_PASSES_H
