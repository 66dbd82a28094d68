//===- VerifyKernels.cpp - What CPU code generation accepts --------------===//
//
// Upstream lowerings report what they cannot convert, but late and in their
// own terms ("failed to legalize operation"), and a few constructs (heap
// allocation, calls to unknown functions) convert fine and only fail when
// the runtime loads the executable. This pass names the problem at the op
// the user wrote.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"
#include "compiler/codegen/cpu/RuntimeImports.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUVERIFYKERNELSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// Dialects whose ops the pipeline lowers to LLVM without outside help.
const llvm::StringSet<> kSupportedDialects = {
    "affine", "arith",  "bufferization", "cf",     "func", "linalg",
    "math",   "memref", "scf",           "tensor", "ub",   "vector"};

bool isSupportedElementType(Type type) {
  return type.isSignlessInteger() || isa<FloatType>(type);
}

LogicalResult verifyKernelSignature(func::FuncOp kernel) {
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (!memref.getLayout().isIdentity())
        return kernel.emitOpError("argument ")
               << i << ": expected a memref with the identity layout, got "
               << type;
      if (memref.getMemorySpace())
        return kernel.emitOpError("argument ")
               << i << ": expected a memref in the default memory space, got "
               << type;
      if (!isSupportedElementType(memref.getElementType()))
        return kernel.emitOpError("argument ")
               << i << ": expected integer or float elements, got " << type;
      continue;
    }
    if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      if (!isSupportedElementType(tensor.getElementType()))
        return kernel.emitOpError("argument ")
               << i << ": expected integer or float elements, got " << type;
      continue;
    }
    if (type.isInteger(32) || type.isInteger(64) || type.isF32() ||
        type.isIndex())
      continue;
    return kernel.emitOpError("argument ")
           << i << " has type " << type
           << "; a kernel takes memrefs (bindings), ranked tensors, and i32, "
              "i64, f32 or index scalars (push constants)";
  }
  for (auto [i, type] : llvm::enumerate(kernel.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return kernel.emitOpError("result ")
             << i << " has type " << type
             << "; a kernel writes its results to memref arguments (or "
                "returns ranked tensors)";
    if (!isSupportedElementType(tensor.getElementType()))
      return kernel.emitOpError("result ")
             << i << ": expected integer or float elements, got " << type;
  }
  return success();
}

LogicalResult verifyOp(Operation *op, SymbolTableCollection &symbols) {
  StringRef dialect = op->getName().getDialectNamespace();
  if (!kSupportedDialects.contains(dialect))
    return op->emitOpError("is not supported in a CPU kernel (supported "
                           "dialects: affine, arith, bufferization, cf, "
                           "func, linalg, math, memref, scf, tensor, ub, "
                           "vector)");
  if (dialect == "linalg" && !isa<linalg::LinalgOp>(op) &&
      !isa<linalg::YieldOp, linalg::IndexOp>(op))
    return op->emitOpError("is not supported in a CPU kernel: only "
                           "structured linalg ops (linalg.generic, named "
                           "ops) are");
  if (isa<memref::AllocOp, memref::ReallocOp>(op))
    return op->emitOpError("allocates on the heap, which a CPU kernel "
                           "cannot; use memref.alloca or a buffer argument");
  if (isa<func::CallIndirectOp, func::ConstantOp>(op))
    return op->emitOpError("is not supported in a CPU kernel: calls must "
                           "name their callee");
  if (auto call = dyn_cast<func::CallOp>(op)) {
    auto callee =
        symbols.lookupNearestSymbolFrom<func::FuncOp>(op, call.getCalleeAttr());
    if (!callee)
      return op->emitOpError("calls '")
             << call.getCallee() << "', which is not a function";
    if (isKernel(callee))
      return op->emitOpError("calls the kernel '")
             << call.getCallee()
             << "'; make the callee private to use it as a helper";
  }
  return success();
}

struct CPUVerifyKernelsPass
    : impl::CPUVerifyKernelsPassBase<CPUVerifyKernelsPass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    bool ok = true;
    for (Operation &op : getOperation().getBody()->getOperations()) {
      if (auto global = dyn_cast<memref::GlobalOp>(op)) {
        if (!global.getConstant()) {
          global.emitOpError("is mutable; CPU kernels are stateless and "
                             "take only constant globals");
          ok = false;
        }
        continue;
      }
      auto func = dyn_cast<func::FuncOp>(op);
      if (!func) {
        op.emitOpError("is not supported at the top level of a CPU "
                       "executable (expected func.func and constant "
                       "memref.global)");
        ok = false;
        continue;
      }
      if (func.isExternal()) {
        if (!isRuntimeImport(func.getSymName())) {
          func.emitOpError("declares '")
              << func.getSymName()
              << "', which the runtime does not provide to CPU executables";
          ok = false;
        }
        continue;
      }
      if (isKernel(func) && failed(verifyKernelSignature(func)))
        ok = false;
      func.walk([&](Operation *nested) {
        if (nested != func.getOperation() && failed(verifyOp(nested, symbols)))
          ok = false;
      });
    }
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::cpu
