//===- FlowOps.cpp - the flow dialect -------------------------------------===//

#include "compiler/dispatch/IR/FlowOps.h"

#include "compiler/support/Bytes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;

#include "compiler/dispatch/IR/FlowDialect.cpp.inc"

#define GET_OP_CLASSES
#include "compiler/dispatch/IR/FlowOps.cpp.inc"

namespace strata::flow {

void FlowDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "compiler/dispatch/IR/FlowOps.cpp.inc"
      >();
}

LogicalResult DispatchOp::verify() {
  int64_t dynamic = 0;
  for (Type type : getResultTypes())
    dynamic += cast<RankedTensorType>(type).getNumDynamicDims();
  if (static_cast<int64_t>(getResultDims().size()) != dynamic)
    return emitOpError("has ") << getResultDims().size()
                               << " result dims, expected " << dynamic
                               << " (one per dynamic dimension of the results)";
  return success();
}

OperandRange DispatchOp::getDynamicDimsOf(unsigned index) {
  unsigned before = 0;
  for (Value result : getResults().take_front(index))
    before += cast<RankedTensorType>(result.getType()).getNumDynamicDims();
  unsigned count =
      cast<RankedTensorType>(getResult(index).getType()).getNumDynamicDims();
  return getResultDims().slice(before, count);
}

LogicalResult
DispatchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("refers to '")
           << getKernel() << "', which is not a func.func";
  if (!kernel->hasAttr(kKernelAttr))
    return emitOpError("refers to '")
           << getKernel() << "', which is not marked " << kKernelAttr;
  FunctionType type = kernel.getFunctionType();
  if (type.getInputs() != getArguments().getTypes() ||
      type.getResults() != getResultTypes())
    return emitOpError("has type ")
           << FunctionType::get(getContext(), getArguments().getTypes(),
                                getResultTypes())
           << ", but the kernel '" << getKernel() << "' has type " << type;
  return success();
}

/// Erases a check that holds whatever the values: the same value on both
/// sides, or constants for which `holds` is true.
template <typename CheckOp>
static LogicalResult eraseIfHolds(CheckOp op, PatternRewriter &rewriter,
                                  bool (*holds)(const APInt &, const APInt &)) {
  APInt lhs, rhs;
  bool always = op.getLhs() == op.getRhs() ||
                (matchPattern(op.getLhs(), m_ConstantInt(&lhs)) &&
                 matchPattern(op.getRhs(), m_ConstantInt(&rhs)) &&
                 holds(lhs, rhs));
  if (!always)
    return failure();
  rewriter.eraseOp(op);
  return success();
}

LogicalResult CheckEqualOp::canonicalize(CheckEqualOp op,
                                         PatternRewriter &rewriter) {
  return eraseIfHolds(op, rewriter, [](const APInt &a, const APInt &b) {
    return a == b;
  });
}

LogicalResult CheckLessEqualOp::canonicalize(CheckLessEqualOp op,
                                             PatternRewriter &rewriter) {
  return eraseIfHolds(op, rewriter, [](const APInt &a, const APInt &b) {
    return a.sle(b);
  });
}

LogicalResult ExecutableBinaryOp::verify() {
  if (failed(verifyBytesAttr(*this, "data", getData())))
    return failure();
  return verifyBytesAttr(*this, "metadata", getMetadata());
}

} // namespace strata::flow
