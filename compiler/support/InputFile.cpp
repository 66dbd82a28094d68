//===- InputFile.cpp - reading a tool's .mlir input ------------------------===//

#include "compiler/support/InputFile.h"

#include <string>

#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

namespace strata {

mlir::OwningOpRef<mlir::ModuleOp> InputFile::parse(llvm::StringRef tool, llvm::StringRef path,
                                                   mlir::MLIRContext &context) {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(path, &error);
  if (!input) {
    llvm::errs() << tool << ": " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  diagnostics = std::make_unique<mlir::SourceMgrDiagnosticHandler>(sourceMgr, &context);
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

} // namespace strata
