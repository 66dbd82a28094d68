// compile-module: compiles a model (func/linalg/tosa/...) or a `vm` dialect
// module into a Strata module file.
//
//   compile-module model.mlir -o model.smod [--target=cpu,vulkan]
//       [--cpu-triple=x86_64-linux-gnu,aarch64-linux-gnu] [--cpu=NAME]
//       [--cpu-features=+avx2] [--compile-to=PHASE] [--print-pipeline]
//       [--dump-executables=DIR] [--time-phases]
//   compile-module IN.mlir --emit=bytecode-listing      (text, to stdout)
//   compile-module IN.mlir --emit=register-allocation   (text, to stdout)
//   compile-module IN.mlir --emit=vm                    (IR after the passes)
//
// An input holding one `vm.module` goes straight to the emitter (after
// vm-fuse-compare-branch and canonicalize); anything else is a model and goes
// through the phases of compiler/pipeline/ModelCompiler.h. The usual
// --mlir-print-ir-* options show the passes at work. Problems in the input
// are reported as MLIR diagnostics with their source location, and the exit
// status is 1.

#include <string>
#include <vector>

#include "compiler/codegen/cpu/Pipeline.h"
#include "compiler/codegen/gpu/Pipeline.h"
#include "compiler/pipeline/ModelCompiler.h"
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
#include "schemas/integrity.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <optional>
#include <sodium.h>

namespace {

namespace cl = llvm::cl;
using namespace mlir;

enum class Emit { kModule, kBytecodeListing, kRegisterAllocation, kVM };

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input .mlir>"));
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
cl::list<std::string> targetBackends(
    "target", cl::CommaSeparated,
    cl::desc("Device targets of the model's executables: cpu, vulkan, cuda, "
             "rocm, or several in one file (cpu,vulkan,cuda); default cpu"));
cl::list<std::string> cudaArchs(
    "cuda-arch", cl::CommaSeparated,
    cl::desc("Compute capabilities of the cuda target, one PTX image each "
             "(default sm_80,sm_90); sm_90a: f16 and bf16 matmuls on wgmma, "
             "an image for compute capability 9.0 alone"));
cl::opt<std::string> cudaPtxas(
    "cuda-ptxas", cl::value_desc("path|none"),
    cl::desc("ptxas that makes a cubin beside each PTX image (default: "
             "$CUDA_HOME/bin, /usr/local/cuda/bin, then PATH; none: PTX "
             "only)"));
cl::list<std::string> rocmArchs(
    "rocm-arch", cl::CommaSeparated,
    cl::desc("AMD GPU architectures of the rocm target, one code object "
             "each (default gfx90a,gfx942,gfx1100)"));
cl::opt<unsigned> rocmCodeObject(
    "rocm-code-object", cl::value_desc("4|5|6"),
    cl::desc("Code object version of every ROCm code object (default: 4 for "
             "gfx90a, which ROCm 5 runtimes load, 5 for the others)"));
cl::opt<std::string> rocmDeviceLibs(
    "rocm-device-libs", cl::value_desc("folder"),
    cl::desc("Folder with ROCm's device libraries (ocml.bc), linked into "
             "kernels that call them (default: $ROCM_PATH/amdgcn/bitcode, "
             "/opt/rocm/amdgcn/bitcode, /usr/lib/<triple>/amdgcn/bitcode)"));
cl::opt<std::string> rocmLld(
    "rocm-lld", cl::value_desc("path"),
    cl::desc("ld.lld that links ROCm code objects (default: ld.lld-22, then "
             "ld.lld)"));
cl::list<std::string> cpuTriples(
    "cpu-triple", cl::CommaSeparated,
    cl::desc("CPU triples to compile executables for (default: the host's "
             "x86_64-linux-gnu); several give one executable each"));
cl::opt<std::string> cpuName("cpu", cl::desc("LLVM CPU name (default: host "
                                             "for the host's architecture)"));
cl::opt<std::string> cpuFeatures("cpu-features",
                                 cl::desc("Extra LLVM target features"));
cl::opt<std::string> compileTo(
    "compile-to",
    cl::desc("Stop after this phase and print its IR: input, global-opt, "
             "dispatch, executables, vm"),
    cl::init("module"));
cl::opt<bool> printPipeline("print-pipeline",
                            cl::desc("Print each phase's pass pipeline"));
cl::opt<std::string>
    dumpExecutables("dump-executables", cl::value_desc("dir"),
                    cl::desc("Write each embedded executable to DIR"));
cl::opt<bool> timePhases("time-phases",
                         cl::desc("Print the wall time of each phase"));
cl::opt<std::string> signKey(
    "sign-key", cl::value_desc("file"),
    cl::desc("Sign the module with the Ed25519 secret key in FILE (128 hex "
             "digits, as --generate-sign-key writes)"));
cl::opt<std::string> generateSignKey(
    "generate-sign-key", cl::value_desc("prefix"),
    cl::desc("Write a new Ed25519 key pair to PREFIX.key (secret, for "
             "--sign-key) and PREFIX.pub (public, for run-module "
             "--trusted-key), then exit"));
cl::opt<std::string> gpuCodegenOptions(
    "gpu-codegen-options",
    cl::desc("Options of the strata-gpu-codegen pipeline for the vulkan "
             "target, e.g. \"workgroup-size=128\""),
    cl::init(""));
cl::opt<bool> packWeights(
    "pack-weights",
    cl::desc("Store constant matmul weights in strips of the columns a tile "
             "reads (strata-pack-weights; default on)"),
    cl::init(true));
cl::opt<bool> winograd(
    "winograd",
    cl::desc("Compute 3x3 stride-1 convolutions with constant filters as "
             "Winograd F(2x2, 3x3) in modules of CPU executables only "
             "(strata-winograd; default on)"),
    cl::init(true));
cl::opt<std::string> codegenOptions(
    "codegen-options",
    cl::desc("Options of the CPU codegen pipeline, e.g. \"vector-bits=256\""));

/// The secret key of --sign-key, or an empty vector without one; nullopt
/// after reporting a problem.
std::optional<std::vector<uint8_t>> readSigningKey() {
  if (signKey.empty())
    return std::vector<uint8_t>();
  auto text = llvm::MemoryBuffer::getFile(signKey);
  if (!text) {
    llvm::errs() << "compile-module: cannot read --sign-key='" << signKey
                 << "': " << text.getError().message() << "\n";
    return std::nullopt;
  }
  std::vector<uint8_t> key;
  if (!strata::integrity::ParseHexKey((*text)->getBuffer(),
                                      strata::integrity::kSecretKeyBytes,
                                      &key)) {
    llvm::errs() << "compile-module: --sign-key='" << signKey
                 << "' does not hold an Ed25519 secret key: expected "
                 << 2 * strata::integrity::kSecretKeyBytes
                 << " hex digits (compile-module --generate-sign-key writes "
                    "one)\n";
    return std::nullopt;
  }
  return key;
}

/// --generate-sign-key: a key pair as two hex files, the secret one
/// readable by its owner only.
int generateKeyPair() {
  if (sodium_init() < 0) {
    llvm::errs() << "compile-module: libsodium failed to initialize\n";
    return 1;
  }
  uint8_t publicKey[crypto_sign_PUBLICKEYBYTES];
  uint8_t secretKey[crypto_sign_SECRETKEYBYTES];
  static_assert(sizeof(publicKey) == strata::integrity::kPublicKeyBytes &&
                sizeof(secretKey) == strata::integrity::kSecretKeyBytes);
  crypto_sign_keypair(publicKey, secretKey);
  auto write = [](const std::string &path, llvm::ArrayRef<uint8_t> key,
                  unsigned mode) {
    int fd = -1;
    std::error_code error = llvm::sys::fs::openFileForWrite(
        path, fd, llvm::sys::fs::CD_CreateAlways, llvm::sys::fs::OF_Text,
        mode);
    if (!error) {
      // The mode applies when the file is created; an existing one keeps
      // its own, so set it again.
      error = llvm::sys::fs::setPermissions(
          path, static_cast<llvm::sys::fs::perms>(mode));
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << strata::integrity::HexKey(key) << "\n";
      os.close();
      if (!error)
        error = os.error();
    }
    if (error)
      llvm::errs() << "compile-module: cannot write '" << path
                   << "': " << error.message() << "\n";
    return !error;
  };
  bool ok = write(generateSignKey + ".key", secretKey, 0600) &&
            write(generateSignKey + ".pub", publicKey, 0644);
  sodium_memzero(secretKey, sizeof(secretKey));
  return ok ? 0 : 1;
}

/// Whether the input is one vm.module (rather than a model).
bool isVMInput(mlir::ModuleOp top) {
  Block *body = top.getBody();
  return !body->empty() && isa<strata::vm::ModuleOp>(body->front());
}

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
  std::optional<std::vector<uint8_t>> key = readSigningKey();
  if (!key)
    return failure();
  FailureOr<std::vector<uint8_t>> file =
      strata::vm::serializeModule(module, *key);
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

/// The -o file, or null after reporting why it cannot be opened. It is kept
/// only when the caller calls keep(), so a failure leaves no partial file.
std::unique_ptr<llvm::ToolOutputFile> openOutput() {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output)
    llvm::errs() << "compile-module: " << error << "\n";
  return output;
}

int compileModel(mlir::ModuleOp top) {
  std::optional<strata::Phase> phase = strata::parsePhase(compileTo);
  if (!phase) {
    llvm::errs() << "compile-module: unknown phase '" << compileTo
                 << "' for --compile-to; expected one of "
                 << strata::phaseNames() << "\n";
    return 1;
  }
  strata::ModelCompileOptions options;
  options.compileTo = *phase;
  if (!targetBackends.empty()) {
    options.cpuTarget = false;
    for (const std::string &target : targetBackends) {
      if (target == "cpu") {
        options.cpuTarget = true;
      } else if (target == "vulkan") {
        options.vulkanTarget = true;
      } else if (target == "cuda") {
        options.cudaTarget = true;
      } else if (target == "rocm") {
        options.rocmTarget = true;
      } else {
        llvm::errs() << "compile-module: unknown --target='" << target
                     << "'; expected cpu, vulkan, cuda or rocm\n";
        return 1;
      }
    }
  }
  if (!cudaArchs.empty() || !cudaPtxas.empty()) {
    if (!options.cudaTarget) {
      llvm::errs() << "compile-module: --cuda-arch and --cuda-ptxas need "
                      "--target to include cuda\n";
      return 1;
    }
    if (!cudaArchs.empty())
      options.cuda.archs.assign(cudaArchs.begin(), cudaArchs.end());
    options.cuda.ptxas = cudaPtxas;
  }
  if (!rocmArchs.empty() || rocmCodeObject.getNumOccurrences() ||
      !rocmDeviceLibs.empty() || !rocmLld.empty()) {
    if (!options.rocmTarget) {
      llvm::errs() << "compile-module: --rocm-arch, --rocm-code-object, "
                      "--rocm-device-libs and --rocm-lld need --target to "
                      "include rocm\n";
      return 1;
    }
    if (!rocmArchs.empty())
      options.rocm.archs.assign(rocmArchs.begin(), rocmArchs.end());
    options.rocm.codeObjectVersion = rocmCodeObject;
    options.rocm.deviceLibs = rocmDeviceLibs;
    options.rocm.lld = rocmLld;
  }
  for (const std::string &triple : cpuTriples) {
    strata::cpu::CPUTargetOptions target;
    target.triple = triple;
    target.cpu = cpuName;
    target.features = cpuFeatures;
    options.targets.push_back(target);
  }
  if (!options.cpuTarget && !cpuTriples.empty()) {
    llvm::errs() << "compile-module: --cpu-triple needs --target to include "
                    "cpu\n";
    return 1;
  }
  if (!options.cpuTarget)
    options.targets.clear();
  else if (options.targets.empty()) {
    strata::cpu::CPUTargetOptions target;
    target.cpu = cpuName;
    target.features = cpuFeatures;
    options.targets.push_back(target);
  }
  if (!gpuCodegenOptions.empty() &&
      failed(options.gpuCodegen.parseFromString(gpuCodegenOptions))) {
    llvm::errs() << "compile-module: cannot parse --gpu-codegen-options='"
                 << gpuCodegenOptions << "'\n";
    return 1;
  }
  if (!codegenOptions.empty() &&
      failed(options.codegen.parseFromString(codegenOptions))) {
    llvm::errs() << "compile-module: cannot parse --codegen-options='"
                 << codegenOptions << "'\n";
    return 1;
  }
  options.dumpExecutablesDir = dumpExecutables;
  std::optional<std::vector<uint8_t>> key = readSigningKey();
  if (!key)
    return 1;
  options.signingKey = std::move(*key);
  options.packWeights = packWeights;
  options.winograd = winograd;
  options.configure = [](PassManager &pm) {
    return applyPassManagerCLOptions(pm);
  };
  if (printPipeline)
    options.onPipeline = [](StringRef phase, OpPassManager &pm) {
      llvm::errs() << "// " << phase << ": ";
      pm.printAsTextualPipeline(llvm::errs());
      llvm::errs() << "\n";
    };
  if (timePhases)
    options.onPhaseTime = [](StringRef phase, double seconds) {
      llvm::errs() << llvm::format("// phase %-12s %8.3f s\n",
                                   phase.str().c_str(), seconds);
    };
  FailureOr<std::vector<uint8_t>> file = strata::compileModel(top, options);
  if (failed(file))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutput();
  if (!output)
    return 1;
  if (*phase != strata::Phase::kModule) {
    top.print(output->os());
    output->os() << '\n';
  } else {
    output->os().write(reinterpret_cast<const char *>(file->data()),
                       file->size());
  }
  output->keep();
  return 0;
}

int compile() {
  DialectRegistry registry;
  strata::registerModelDialects(registry);
  MLIRContext context(registry);
  // Diagnostics point at the source; a dump of the op would only repeat it.
  context.printOpOnDiagnostic(false);

  strata::InputFile input;
  OwningOpRef<mlir::ModuleOp> top =
      input.parse("compile-module", inputFilename, context);
  if (!top)
    return 1;
  if (!isVMInput(*top))
    return compileModel(*top);

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

  std::unique_ptr<llvm::ToolOutputFile> output = openOutput();
  if (!output)
    return 1;
  // On failure the output file is not kept, so no partial module is left.
  if (failed(writeOutput(*module, output->os())))
    return 1;
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // So that --mlir-print-ir-after=<pass> can name the code generators' passes.
  strata::cpu::registerCPUCodegenPasses();
  strata::gpu::registerGPUCodegenPasses();
  registerAsmPrinterCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "Strata module compiler: vm dialect to a module "
                              "file\n");
  if (!generateSignKey.empty())
    return generateKeyPair();
  if (inputFilename.empty()) {
    llvm::errs() << "compile-module: no input file given (compile-module "
                    "model.mlir -o model.smod)\n";
    return 1;
  }
  return compile();
}
