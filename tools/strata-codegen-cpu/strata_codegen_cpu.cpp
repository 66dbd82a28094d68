// strata-codegen-cpu: compiles dispatch kernels into a CPU executable.
//
//   strata-codegen-cpu IN.mlir -o OUT.so [--triple=aarch64-linux-gnu]
//                      [--cpu=NAME] [--features=+f,...]
//                      [--codegen-options="vector-bits=256 peel=false"]
//   strata-codegen-cpu IN.mlir --dump-metadata        (entry points, to stdout)
//   strata-codegen-cpu IN.mlir --emit=llvm -o -       (LLVM dialect)
//   strata-codegen-cpu IN.mlir --emit=llvm-ir|asm|object -o OUT
//
// The input is a builtin.module of kernels (docs/codegen-cpu.md). Problems
// are reported as MLIR diagnostics with their source location, and the exit
// status is 1; no partial output file is left behind.

#include <string>

#include "compiler/codegen/cpu/CPUExecutable.h"
#include "compiler/support/InputFile.h"
#include "compiler/codegen/cpu/Pipeline.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace {

namespace cl = llvm::cl;
using namespace mlir;

enum class Emit { kElf, kObject, kAsm, kLLVMIR, kLLVM };

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input .mlir>"),
                                   cl::Required);
cl::opt<std::string> outputFilename("o",
                                    cl::desc("Output file ('-' is stdout)"),
                                    cl::value_desc("filename"), cl::init(""));
cl::opt<std::string>
    triple("triple",
           cl::desc("Target: x86_64-linux-gnu or aarch64-linux-gnu "
                    "(default: this machine's architecture)"),
           cl::init(""));
cl::opt<std::string>
    cpu("cpu",
        cl::desc("LLVM CPU name (default: 'host' for this machine's "
                 "architecture, the baseline otherwise)"),
        cl::init(""));
cl::opt<std::string>
    features("features", cl::desc("Extra LLVM target features"), cl::init(""));
cl::opt<std::string>
    codegenOptions("codegen-options",
                   cl::desc("Options of the strata-cpu-codegen pipeline, e.g. "
                            "\"vector-bits=256 matmul-rows=6\""),
                   cl::init(""));
cl::opt<std::string> lld("lld", cl::desc("The ld.lld to link with"),
                         cl::init(strata::cpu::defaultLLDPath()));
cl::opt<bool>
    dumpMetadata("dump-metadata",
                 cl::desc("Print the entry points' metadata to stdout"),
                 cl::init(false));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write to -o"), cl::init(Emit::kElf),
    cl::values(clEnumValN(Emit::kElf, "elf", "the ELF shared object (default)"),
               clEnumValN(Emit::kObject, "object", "the relocatable object"),
               clEnumValN(Emit::kAsm, "asm", "assembly"),
               clEnumValN(Emit::kLLVMIR, "llvm-ir", "optimised LLVM IR"),
               clEnumValN(Emit::kLLVM, "llvm",
                          "the LLVM dialect after the codegen pipeline")));

std::string defaultTriple() {
  llvm::Triple host(llvm::sys::getProcessTriple());
  return host.getArchName().str() + "-linux-gnu";
}

void printMetadata(llvm::ArrayRef<strata::cpu::EntryPointInfo> entries,
                   llvm::raw_ostream &os) {
  for (const strata::cpu::EntryPointInfo &entry : entries) {
    os << "entry_point " << entry.name << " binding_count "
       << entry.bindingCount << " constant_count " << entry.constantCount
       << " binding_read_only [";
    llvm::interleaveComma(entry.bindingReadOnly, os,
                          [&](bool readOnly) { os << (readOnly ? 1 : 0); });
    os << "] workgroup_size [";
    llvm::interleaveComma(entry.workgroupSize, os);
    os << "]";
    if (entry.workgroupCount) {
      os << " workgroup_count [";
      llvm::interleaveComma(*entry.workgroupCount, os);
      os << "]";
    }
    if (entry.workgroupCountConstant)
      os << " workgroup_count_constant " << *entry.workgroupCountConstant;
    if (entry.scratchBytes)
      os << " scratch_bytes " << entry.scratchBytes;
    if (entry.localMemoryBytes)
      os << " local_memory_bytes " << entry.localMemoryBytes;
    if (entry.ascendingWorkgroups)
      os << " ascending_workgroups";
    os << "\n";
  }
}

int compile() {
  DialectRegistry registry;
  strata::cpu::registerCPUCodegenDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  strata::InputFile input;
  OwningOpRef<ModuleOp> module =
      input.parse("strata-codegen-cpu", inputFilename, context);
  if (!module)
    return 1;

  std::unique_ptr<strata::cpu::CPUCodegenPipelineOptions> options =
      strata::cpu::CPUCodegenPipelineOptions::createFromString(codegenOptions);
  if (!options) {
    llvm::errs() << "strata-codegen-cpu: invalid --codegen-options '"
                 << codegenOptions << "'\n";
    return 1;
  }
  strata::cpu::CPUTargetOptions target;
  target.triple = triple.empty() ? defaultTriple() : triple;
  target.cpu = cpu;
  target.features = features;
  target.lldPath = lld;

  if (outputFilename.empty() && !dumpMetadata) {
    llvm::errs() << "strata-codegen-cpu: no output: give -o FILE or "
                    "--dump-metadata\n";
    return 1;
  }

  Location loc = module->getLoc();
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
      strata::cpu::createCPUTargetMachine(target, loc);
  if (failed(machine) ||
      failed(strata::cpu::lowerToLLVMDialect(*module, **machine, *options,
                                             applyPassManagerCLOptions)))
    return 1;
  FailureOr<std::vector<strata::cpu::EntryPointInfo>> entries =
      strata::cpu::collectEntryPoints(*module);
  if (failed(entries))
    return 1;
  if (dumpMetadata)
    printMetadata(*entries, llvm::outs());
  if (outputFilename.empty())
    return 0;

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "strata-codegen-cpu: " << error << "\n";
    return 1;
  }
  if (emit == Emit::kLLVM) {
    module->print(output->os());
    output->keep();
    return 0;
  }
  llvm::LLVMContext llvmContext;
  FailureOr<std::unique_ptr<llvm::Module>> llvmModule =
      strata::cpu::translateToLLVMIR(*module, llvmContext, **machine);
  if (failed(llvmModule))
    return 1;
  if (emit == Emit::kLLVMIR) {
    (*llvmModule)->print(output->os(), nullptr);
    output->keep();
    return 0;
  }
  if (emit == Emit::kAsm) {
    llvm::legacy::PassManager passes;
    if ((*machine)->addPassesToEmitFile(passes, output->os(), nullptr,
                                        llvm::CodeGenFileType::AssemblyFile)) {
      emitError(loc) << "the target machine cannot emit assembly";
      return 1;
    }
    passes.run(**llvmModule);
    output->keep();
    return 0;
  }
  FailureOr<std::vector<uint8_t>> object =
      strata::cpu::emitObjectFile(**llvmModule, **machine, loc);
  if (failed(object))
    return 1;
  std::vector<uint8_t> bytes = std::move(*object);
  if (emit == Emit::kElf) {
    FailureOr<std::vector<uint8_t>> elf =
        strata::cpu::linkSharedObject(bytes, lld, loc);
    if (failed(elf))
      return 1;
    bytes = std::move(*elf);
  }
  output->os().write(reinterpret_cast<const char *>(bytes.data()),
                     bytes.size());
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  // Before the pass manager's options, which list the passes by name (for
  // --mlir-print-ir-after=<pass>).
  strata::cpu::registerCPUCodegenPasses();
  registerPassManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "Strata CPU code generator: dispatch kernels "
                              "to a CPU executable\n");
  return compile();
}
