//===- ComputeInDestinations.cpp - No temporaries for pads and inits -----===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUCOMPUTEINDESTINATIONSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// The element of a splat tensor constant, or null.
TypedAttr splatValue(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return nullptr;
  return dyn_cast<TypedAttr>(dense.getSplatValue<Attribute>());
}

struct CPUComputeInDestinationsPass
    : impl::CPUComputeInDestinationsPassBase<CPUComputeInDestinationsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>())
      if (isKernel(kernel) && failed(rewrite(kernel)))
        return signalPassFailure();
  }

  LogicalResult rewrite(func::FuncOp kernel) {
    IRRewriter rewriter(kernel.getContext());
    SmallVector<tensor::PadOp> pads;
    kernel.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    for (tensor::PadOp pad : pads) {
      rewriter.setInsertionPoint(pad);
      if (failed(linalg::rewriteInDestinationPassingStyle(rewriter, pad)))
        return pad.emitOpError(
            "cannot be written as a fill of its destination and a copy of "
            "its source");
    }

    SmallVector<tensor::ConcatOp> concats;
    kernel.walk([&](tensor::ConcatOp concat) { concats.push_back(concat); });
    for (tensor::ConcatOp concat : concats) {
      rewriter.setInsertionPoint(concat);
      FailureOr<SmallVector<Value>> parts = concat.decomposeOperation(rewriter);
      if (failed(parts))
        return concat.emitOpError(
            "cannot be written as copies of its operands into its "
            "destination");
      rewriter.replaceOp(concat, *parts);
    }

    // Inits that are kernel arguments: copied once into a fresh tensor,
    // which becomes the output binding. Inits that are splat constants
    // (ONNX convolutions starting from a folded zero bias): a fill of a
    // fresh tensor, rather than a copy of a constant the size of the result.
    SmallVector<OpOperand *> inits;
    kernel.walk([&](DestinationStyleOpInterface op) {
      if (!op.hasPureTensorSemantics())
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        if (!isa<RankedTensorType>(init.get().getType()))
          continue;
        auto argument = dyn_cast<BlockArgument>(init.get());
        if ((argument && argument.getOwner() == &kernel.front()) ||
            splatValue(init.get()))
          inits.push_back(&init);
      }
    });
    for (OpOperand *init : inits) {
      Value value = init->get();
      auto type = cast<RankedTensorType>(value.getType());
      rewriter.setInsertionPoint(init->getOwner());
      Location loc = init->getOwner()->getLoc();
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(rewriter, loc, value);
      Value empty = tensor::EmptyOp::create(rewriter, loc, sizes,
                                            type.getElementType());
      Value start;
      if (TypedAttr splat = splatValue(value))
        start = linalg::FillOp::create(
                    rewriter, loc,
                    arith::ConstantOp::create(rewriter, loc, splat).getResult(),
                    empty)
                    .getResult(0);
      else
        start = linalg::CopyOp::create(rewriter, loc, value, empty).getResult(0);
      rewriter.modifyOpInPlace(init->getOwner(), [&] { init->set(start); });
    }
    return success();
  }
};

} // namespace
} // namespace strata::cpu
