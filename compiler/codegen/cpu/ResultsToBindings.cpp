//===- ResultsToBindings.cpp - Tensor results become output bindings -----===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPURESULTSTOBINDINGSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

struct CPUResultsToBindingsPass
    : impl::CPUResultsToBindingsPassBase<CPUResultsToBindingsPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>())
      if (isKernel(kernel) && failed(convert(kernel)))
        return signalPassFailure();
  }

  LogicalResult convert(func::FuncOp kernel) {
    MLIRContext *context = kernel.getContext();
    for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes()))
      if (isa<TensorType>(type))
        kernel.setArgAttr(
            i, bufferization::BufferizationDialect::kWritableAttrName,
            BoolAttr::get(context, false));
    if (kernel.getNumResults() == 0)
      return success();

    SmallVector<Type> outputTypes;
    for (auto [i, type] : llvm::enumerate(kernel.getResultTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        return kernel.emitOpError("result ")
               << i << " has type " << type << ", expected a ranked tensor";
      outputTypes.push_back(
          MemRefType::get(tensor.getShape(), tensor.getElementType()));
    }
    unsigned first = kernel.getNumArguments();
    SmallVector<unsigned> positions(outputTypes.size(), first);
    SmallVector<DictionaryAttr> attrs(outputTypes.size(),
                                      DictionaryAttr::get(context));
    SmallVector<Location> locs(outputTypes.size(), kernel.getLoc());
    if (failed(kernel.insertArguments(positions, outputTypes, attrs, locs)))
      return kernel.emitOpError("cannot append the output arguments");

    // Every return writes its values to the outputs and returns nothing.
    SmallVector<func::ReturnOp> returns;
    kernel.walk([&](func::ReturnOp op) { returns.push_back(op); });
    for (func::ReturnOp ret : returns) {
      OpBuilder b(ret);
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        // A result computed in place over an empty tensor is computed in the
        // output binding itself. (Empty tensor elimination does this for
        // static shapes but cannot prove dynamic sizes equal; the dispatch
        // contract makes them so.)
        Value root = value;
        while (auto dps = root.getDefiningOp<DestinationStyleOpInterface>()) {
          auto result = dyn_cast<OpResult>(root);
          if (!result || !dps.getNumDpsInits())
            break;
          root = dps.getDpsInitOperand(result.getResultNumber())->get();
        }
        if (auto empty = root.getDefiningOp<tensor::EmptyOp>();
            empty && empty->hasOneUse()) {
          OpBuilder eb(empty);
          Value output = bufferization::ToTensorOp::create(
              eb, empty.getLoc(), empty.getType(),
              kernel.getArgument(first + i), /*restrict=*/true,
              /*writable=*/true);
          empty.replaceAllUsesWith(output);
          empty.erase();
        }
        // No result: the destination is a memref.
        bufferization::MaterializeInDestinationOp::create(
            b, ret.getLoc(), Type(), value, kernel.getArgument(first + i),
            /*restrict=*/true, /*writable=*/true);
      }
      func::ReturnOp::create(b, ret.getLoc());
      ret.erase();
    }
    kernel.setType(FunctionType::get(context, kernel.getArgumentTypes(), {}));
    return success();
  }
};

} // namespace
} // namespace strata::cpu
