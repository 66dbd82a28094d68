//===- InputFile.cpp - reading a tool's .mlir input ------------------------===//

#include "compiler/support/InputFile.h"

#include <string>

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"

namespace strata {
namespace {

/// What to do about a model in a dialect the compiler does not take.
struct ForeignDialect {
  llvm::StringLiteral name, advice;
};
constexpr ForeignDialect kForeignDialects[] = {
    {"tm_tensor",
     "tm_tensor is torch-mlir's own dialect (tm_tensor.scan is a cumsum, "
     "tm_tensor.scatter an index_put); import the model with "
     "tools/import/strata-import-torch, which decomposes cumsum into linalg "
     "ops, or rewrite the op in linalg"},
    {"torch",
     "the model is in torch-mlir's torch dialect; import it to "
     "linalg-on-tensors or TOSA with tools/import/strata-import-torch (or "
     "strata-import-onnx for ONNX models)"},
    {"onnx",
     "the model is in ONNX form; import it with "
     "tools/import/strata-import-onnx"},
    {"stablehlo",
     "the model is in StableHLO; lower it to linalg first "
     "(stablehlo-opt --stablehlo-legalize-to-linalg)"},
};

} // namespace

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
  // An op of a dialect that is not registered: say how to bring the model in.
  mlir::ScopedDiagnosticHandler advice(&context, [](mlir::Diagnostic &diagnostic) {
    std::string message = diagnostic.str();
    for (const ForeignDialect &dialect : kForeignDialects) {
      if (message.find(("Dialect `" + dialect.name + "' not found").str()) != std::string::npos) {
        diagnostic.attachNote() << dialect.advice;
        break;
      }
    }
    return mlir::failure();  // and report it as usual
  });
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

} // namespace strata
