//===- InputFile.h - reading a tool's .mlir input --------------*- C++ -*-===//
//
// Opens and parses the .mlir file a compiler tool was given, with
// diagnostics that point into it. The object owns the source buffer and the
// diagnostic handler, so keep it alive while the parsed module is used.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_SUPPORT_INPUTFILE_H
#define STRATA_COMPILER_SUPPORT_INPUTFILE_H

#include <memory>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

namespace strata {

class InputFile {
public:
  /// Parses `path` ("-" for stdin) in `context`. A file that cannot be read
  /// is reported on stderr as "<tool>: <reason>"; a parse error as a
  /// diagnostic with its location. Returns null on either.
  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef tool, llvm::StringRef path,
                                          mlir::MLIRContext &context);

private:
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> diagnostics;
};

} // namespace strata

#endif // STRATA_COMPILER_SUPPORT_INPUTFILE_H
