//===- VMDialect.cpp - the vm dialect and its types -----------------------===//

#include "compiler/vm/IR/VMDialect.h"

#include "compiler/vm/IR/VMOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

#include "compiler/vm/IR/VMDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "compiler/vm/IR/VMTypes.cpp.inc"

namespace strata::vm {

bool isRefType(Type type) { return isa<BufferType, ListType, RefType>(type); }

bool isScalarType(Type type) {
  return type.isSignlessInteger(32) || type.isSignlessInteger(64) ||
         type.isF32() || type.isF64();
}

void VMDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "compiler/vm/IR/VMTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "compiler/vm/IR/VMOps.cpp.inc"
      >();
}

} // namespace strata::vm
