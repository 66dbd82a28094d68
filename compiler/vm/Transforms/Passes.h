//===- Passes.h - vm dialect passes -----------------------------*- C++ -*-===//

#ifndef STRATA_COMPILER_VM_TRANSFORMS_PASSES_H
#define STRATA_COMPILER_VM_TRANSFORMS_PASSES_H

#include "compiler/vm/IR/VMOps.h"
#include "mlir/Pass/Pass.h"

namespace strata::vm {

#define GEN_PASS_DECL
#include "compiler/vm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/vm/Transforms/Passes.h.inc"

} // namespace strata::vm

#endif // STRATA_COMPILER_VM_TRANSFORMS_PASSES_H
