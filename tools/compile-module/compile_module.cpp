// compile-module: compiles a `vm` dialect module into a Strata module file.
//
//   compile-module IN.mlir -o OUT.smod
//   compile-module IN.mlir --emit=bytecode-listing      (text, to stdout)
//   compile-module IN.mlir --emit=register-allocation   (text, to stdout)
//   compile-module IN.mlir --emit=vm                    (IR after the passes)
//
// The input holds one `vm.module`. The pipeline is vm-fuse-compare-branch then
// canonicalize; the usual --mlir-print-ir-* options show it at work.
// Problems in the input are reported as MLIR diagnostics with their source
// location, and the exit status is 1.

#include <string>
#include <vector>

#include "compiler/support/InputFile.h"
#include "compiler/vm/IR/VMDialect.h"
#include "compiler/vm/IR/VMOps.h"
#include "compiler/vm/Target/BytecodeListing.h"
#include "compiler/vm/Target/ModuleWriter.h"
#include "compiler/vm/Target/RegisterAllocation.h"
#include "compiler/vm/Transforms/Passes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

namespace {

namespace cl = llvm::cl;
using namespace mlir;

enum class Emit { kModule, kBytecodeListing, kRegisterAllocation, kVM };

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input .mlir>"),
                                   cl::Required);
cl::opt<std::string> outputFilename("o",
                                    cl::desc("Output file ('-' is stdout)"),
                                    cl::value_desc("filename"), cl::init("-"));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::kModule),
    cl::values(
        clEnumValN(Emit::kModule, "module", "the module file (default)"),
        clEnumValN(Emit::kBytecodeListing, "bytecode-listing",
                   "the module file as text: tables and decoded bytecode"),
        clEnumValN(Emit::kRegisterAllocation, "register-allocation",
                   "each function with registers in place of values"),
        clEnumValN(Emit::kVM, "vm", "the vm dialect IR after the passes")));

/// The vm.module the input consists of.
FailureOr<strata::vm::ModuleOp> getVMModule(mlir::ModuleOp top) {
  Block *body = top.getBody();
  if (body->empty())
    return top.emitError("expected a vm.module, the input is empty");
  auto module = dyn_cast<strata::vm::ModuleOp>(body->front());
  if (!module)
    return body->front().emitError()
           << "expected a vm.module, found '" << body->front().getName() << "'";
  if (&body->front() != &body->back())
    return body->back().emitError()
           << "expected the input to hold one vm.module only";
  return module;
}

LogicalResult writeOutput(strata::vm::ModuleOp module, llvm::raw_ostream &os) {
  switch (emit) {
  case Emit::kVM:
    module.print(os);
    os << '\n';
    return success();
  case Emit::kRegisterAllocation:
    for (auto function : module.getOps<strata::vm::FuncOp>()) {
      FailureOr<strata::vm::RegisterAllocation> registers =
          strata::vm::RegisterAllocation::compute(function);
      if (failed(registers))
        return failure();
      registers->print(os);
    }
    return success();
  case Emit::kModule:
  case Emit::kBytecodeListing:
    break;
  }
  FailureOr<std::vector<uint8_t>> file = strata::vm::serializeModule(module);
  if (failed(file))
    return failure();
  if (emit == Emit::kModule) {
    os.write(reinterpret_cast<const char *>(file->data()), file->size());
    return success();
  }
  if (llvm::Error error = strata::vm::printBytecodeListing(*file, os))
    return module.emitError() << "cannot list the module file written: "
                              << llvm::toString(std::move(error));
  return success();
}

int compile() {
  DialectRegistry registry;
  registry.insert<strata::vm::VMDialect>();
  MLIRContext context(registry);
  // Diagnostics point at the source; a dump of the op would only repeat it.
  context.printOpOnDiagnostic(false);

  strata::InputFile input;
  OwningOpRef<mlir::ModuleOp> top =
      input.parse("compile-module", inputFilename, context);
  if (!top)
    return 1;

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  pm.addPass(strata::vm::createVMFuseCompareBranchPass());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*top)))
    return 1;

  FailureOr<strata::vm::ModuleOp> module = getVMModule(*top);
  if (failed(module))
    return 1;

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "compile-module: " << error << "\n";
    return 1;
  }
  // On failure the output file is not kept, so no partial module is left.
  if (failed(writeOutput(*module, output->os())))
    return 1;
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAsmPrinterCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "Strata module compiler: vm dialect to a module "
                              "file\n");
  return compile();
}
