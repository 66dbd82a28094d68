//===- SourceLocation.cpp - "file:line:col" of an MLIR location ----------===//

#include "compiler/support/SourceLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Visitors.h"
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

} // namespace strata
