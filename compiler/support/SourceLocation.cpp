//===- SourceLocation.cpp - "file:line:col" of an MLIR location ----------===//

#include "compiler/support/SourceLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Visitors.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;

namespace strata {

std::optional<std::string> fileLocation(Location loc) {
  std::optional<std::string> result;
  loc->walk([&](Location nested) {
    auto file = dyn_cast<FileLineColLoc>(nested);
    if (!file)
      return WalkResult::advance();
    result = (file.getFilename().getValue() + ":" + Twine(file.getLine()) +
              ":" + Twine(file.getColumn()))
                 .str();
    return WalkResult::interrupt();
  });
  return result;
}

std::string opWithLocation(Operation *op) {
  std::string name = op->getName().getStringRef().str();
  if (std::optional<std::string> file = fileLocation(op->getLoc()))
    return name + " at " + *file;
  return name;
}

std::string describeValue(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner()->isEntryBlock() &&
        isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      return ("argument " + Twine(arg.getArgNumber())).str();
    return "a block argument";
  }
  Operation *producer = value.getDefiningOp();
  StringRef name = producer->getName().getStringRef();
  if (name == "tensor.empty")
    return "its output";
  if (name == "arith.constant")
    if (std::optional<std::string> file = fileLocation(producer->getLoc()))
      return "the constant at " + *file;
  return "the result of " + opWithLocation(producer);
}

} // namespace strata
