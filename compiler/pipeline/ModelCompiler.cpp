//===- ModelCompiler.cpp - A model in MLIR to a module file ---------------===//

#include "compiler/pipeline/ModelCompiler.h"

#include <algorithm>
#include <chrono>

#include "compiler/codegen/cpu/Pipeline.h"
#include "compiler/codegen/gpu/SPIRVExecutable.h"
#include "compiler/dispatch/IR/FlowOps.h"
#include "compiler/dispatch/Transforms/Passes.h"
#include "compiler/host/KernelVariants.h"
#include "compiler/host/Passes.h"
#include "compiler/support/Bytes.h"
#include "compiler/vm/IR/VMDialect.h"
#include "compiler/vm/IR/VMOps.h"
#include "compiler/vm/Target/ModuleWriter.h"
#include "compiler/vm/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace strata {
namespace {

constexpr std::pair<Phase, llvm::StringLiteral> kPhases[] = {
    {Phase::kInput, "input"},       {Phase::kGlobalOpt, "global-opt"},
    {Phase::kDispatch, "dispatch"}, {Phase::kExecutables, "executables"},
    {Phase::kVM, "vm"},             {Phase::kModule, "module"},
};

/// Dialects a model's host functions and kernels may use.
bool isInputDialect(StringRef name) {
  return llvm::is_contained({"builtin", "func", "arith", "math", "tensor",
                             "linalg", "scf", "cf", "tosa", "affine", "ub"},
                            name);
}

class PhaseRunner {
public:
  PhaseRunner(ModuleOp module, const ModelCompileOptions &options)
      : module(module), options(options) {}

  /// Runs `build`'s passes as phase `phase`.
  LogicalResult runPasses(Phase phase,
                          llvm::function_ref<void(OpPassManager &)> build) {
    PassManager pm(module.getContext());
    if (options.configure && failed(options.configure(pm)))
      return failure();
    build(pm);
    if (options.onPipeline)
      options.onPipeline(phaseName(phase), pm);
    return pm.run(module);
  }

  template <typename F>
  LogicalResult timed(Phase phase, F &&body) {
    auto start = std::chrono::steady_clock::now();
    LogicalResult result = body();
    if (options.onPhaseTime)
      options.onPhaseTime(
          phaseName(phase),
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count());
    return result;
  }

  ModuleOp module;
  const ModelCompileOptions &options;
};

LogicalResult checkInputDialects(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    if (isInputDialect(dialect))
      return WalkResult::advance();
    op->emitError("unsupported op '")
        << op->getName()
        << "' in a model: the compiler takes func, arith, math, tensor, "
           "linalg, scf and tosa";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// linalg.softmax and other aggregated ops become their parts.
LogicalResult decomposeAggregatedOps(ModuleOp module) {
  SmallVector<linalg::AggregatedOpInterface> ops;
  module.walk([&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
  for (linalg::AggregatedOpInterface op : ops) {
    OpBuilder b(op);
    FailureOr<SmallVector<Value>> parts = op.decomposeOperation(b);
    if (failed(parts))
      return op->emitOpError("cannot be decomposed into linalg ops");
    op->replaceAllUsesWith(*parts);
    op->erase();
  }
  return success();
}

/// linalg.pack and linalg.unpack are not structured ops: they become a pad,
/// a reshape and a transpose (unpack: a transpose, a reshape and a slice).
LogicalResult lowerRelayoutOps(ModuleOp module) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<linalg::PackOp, linalg::UnPackOp>(op))
      ops.push_back(op);
  });
  IRRewriter rewriter(module.getContext());
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    bool lowered =
        isa<linalg::PackOp>(op)
            ? succeeded(linalg::lowerPack(rewriter, cast<linalg::PackOp>(op)))
            : succeeded(
                  linalg::lowerUnPack(rewriter, cast<linalg::UnPackOp>(op)));
    if (!lowered)
      return op->emitOpError("cannot be lowered to pad, reshape and transpose");
  }
  return success();
}

LogicalResult writeFile(StringRef path, ArrayRef<uint8_t> bytes,
                        Location loc) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_None);
  if (error)
    return emitError(loc) << "cannot write '" << path
                          << "': " << error.message();
  os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  return success();
}

} // namespace

std::optional<Phase> parsePhase(StringRef name) {
  for (auto [phase, phaseName] : kPhases)
    if (name == phaseName)
      return phase;
  return std::nullopt;
}

StringRef phaseName(Phase phase) {
  for (auto [p, name] : kPhases)
    if (p == phase)
      return name;
  return "?";
}

std::string phaseNames() {
  std::string names;
  for (auto [phase, name] : kPhases)
    names += (names.empty() ? "" : ", ") + name.str();
  return names;
}

void registerModelDialects(DialectRegistry &registry) {
  cpu::registerCPUCodegenDialects(registry);
  registry.insert<flow::FlowDialect, vm::VMDialect>();
}

namespace {

/// The CPU targets executables are compiled for: the given ones, or the
/// host's when none is given.
std::vector<cpu::CPUTargetOptions>
cpuTargets(const ModelCompileOptions &options) {
  std::vector<cpu::CPUTargetOptions> targets = options.targets;
  if (targets.empty())
    targets.emplace_back();
  return targets;
}

/// The vector width strata-pack-weights lays the weights out for: the CPU
/// codegen's vector-bits when given, else the narrowest native width of the
/// module's CPU targets, since one packed weight serves all of them. A
/// target whose machine cannot be made is left out here (its executable
/// reports the error).
int64_t packingVectorBits(const ModelCompileOptions &options,
                          MLIRContext *context) {
  if (options.codegen.vectorBits != 0)
    return options.codegen.vectorBits;
  ScopedDiagnosticHandler quiet(context,
                                [](Diagnostic &) { return success(); });
  std::optional<int64_t> bits;
  for (const cpu::CPUTargetOptions &target : cpuTargets(options)) {
    FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
        cpu::createCPUTargetMachine(target, UnknownLoc::get(context));
    if (succeeded(machine))
      bits = std::min(bits.value_or(INT64_MAX),
                      cpu::nativeVectorBits(**machine));
  }
  return bits.value_or(512);
}

} // namespace

FailureOr<std::vector<uint8_t>>
compileModel(ModuleOp module, const ModelCompileOptions &options) {
  PhaseRunner runner(module, options);
  Location loc = module.getLoc();

  // input
  if (failed(runner.timed(Phase::kInput, [&]() -> LogicalResult {
        if (failed(checkInputDialects(module)))
          return failure();
        if (failed(runner.runPasses(Phase::kInput, [](OpPassManager &pm) {
              OpPassManager &fn = pm.nest<func::FuncOp>();
              fn.addPass(tosa::createTosaToLinalgNamed());
              fn.addPass(tosa::createTosaToLinalg());
              fn.addPass(createTosaToArithPass());
              fn.addPass(createTosaToTensorPass());
              pm.addPass(createCanonicalizerPass());
            })))
          return failure();
        if (failed(lowerRelayoutOps(module)))
          return failure();
        return decomposeAggregatedOps(module);
      })))
    return failure();
  if (options.compileTo == Phase::kInput)
    return std::vector<uint8_t>();

  // What only the CPU code generator handles (Winograd's transforms, pads
  // read through windows) is done in modules with no GPU executables.
  const bool cpuOnly = options.cpuTarget && !options.vulkanTarget &&
                       !options.cudaTarget && !options.rocmTarget;

  // global-opt
  if (failed(runner.timed(Phase::kGlobalOpt, [&] {
        return runner.runPasses(Phase::kGlobalOpt, [&](OpPassManager &pm) {
          pm.addPass(createCanonicalizerPass());
          pm.addPass(createCSEPass());
          pm.addPass(flow::createChannelsLastPass());
          pm.addPass(flow::createConstEvalPass());
          pm.addPass(flow::createFuseElementwisePass());
          pm.addPass(flow::createAffineEpiloguesPass());
          // A layout for the CPU's tiles: a module without CPU executables
          // keeps the weights as the model has them (ROCm's matrix tiles
          // read a plain matmul's).
          // Fewer multiplies for the CPU's 3x3 convolutions; the GPU code
          // generators keep the direct ones.
          if (options.winograd && cpuOnly)
            pm.addPass(flow::createWinogradPass());
          if (options.packWeights && options.cpuTarget) {
            pm.addPass(flow::createPackWeightsPass(
                packingVectorBits(options, module.getContext())));
            pm.addPass(flow::createConstEvalPass());
          }
          pm.addPass(createCanonicalizerPass());
          pm.addPass(createCSEPass());
          pm.addPass(createSymbolDCEPass());
        });
      })))
    return failure();
  if (options.compileTo == Phase::kGlobalOpt)
    return std::vector<uint8_t>();

  // dispatch
  if (failed(runner.timed(Phase::kDispatch, [&] {
        return runner.runPasses(Phase::kDispatch, [&](OpPassManager &pm) {
          pm.addPass(flow::createAssertShapesPass());
          flow::FormDispatchesOptions dispatches;
          dispatches.padsIntoWindows = cpuOnly;
          pm.addPass(flow::createFormDispatchesPass(dispatches));
          pm.addPass(createCanonicalizerPass());
          pm.addPass(createCSEPass());
        });
      })))
    return failure();
  if (options.compileTo == Phase::kDispatch)
    return std::vector<uint8_t>();

  // executables: each format's binary a flow.executable_binary, each
  // kernel's dispatch in each format its flow.variants (KernelVariants.h).
  const std::string executableName = "kernels";
  bool embedded = false;
  if (failed(runner.timed(Phase::kExecutables, [&]() -> LogicalResult {
        OwningOpRef<ModuleOp> kernels = ModuleOp::create(loc);
        OpBuilder kb = OpBuilder::atBlockEnd(kernels->getBody());
        for (auto function : module.getOps<func::FuncOp>())
          if (function->hasAttr(flow::kKernelAttr)) {
            auto clone = cast<func::FuncOp>(kb.clone(*function));
            clone->removeAttr(flow::kKernelAttr);
            clone.setPublic();
          }
        if (kernels->getBody()->empty())
          return success();
        // Every format must dispatch a kernel with the same ordinal,
        // bindings and constants; the workgroup counts may differ.
        // An executable, or one image of it on its own for the vendor's
        // tools (ptxas, cuobjdump, llvm-readobj, comgr), in --dump-executables.
        auto dumpImage = [&](const std::string &suffix, ArrayRef<uint8_t> bytes) {
          if (options.dumpExecutablesDir.empty())
            return success();
          SmallString<256> path(options.dumpExecutablesDir);
          llvm::sys::fs::create_directories(path);
          llvm::sys::path::append(path, executableName + "." + suffix);
          return writeFile(path, bytes, loc);
        };
        auto embed = [&](StringRef format, const auto &entryPoints,
                         StringRef extension, std::vector<uint8_t> data,
                         std::vector<uint8_t> metadata) -> LogicalResult {
          for (auto [ordinal, entry] : llvm::enumerate(entryPoints)) {
            auto kernel = module.lookupSymbol<func::FuncOp>(entry.name);
            if (!kernel)
              return emitError(loc) << "the " << format << " executable has "
                                    << "an entry point '" << entry.name
                                    << "' that is not a kernel of the model";
            if (failed(host::addKernelVariant(
                    kernel, {format.str(), uint32_t(ordinal),
                             entry.dispatchInfo()})))
              return failure();
          }
          if (failed(dumpImage((format + "." + extension).str(), data)))
            return failure();
          MLIRContext *context = module.getContext();
          std::string blob = executableName + "_" + format.str();
          std::replace(blob.begin(), blob.end(), '-', '_');
          OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
          flow::ExecutableBinaryOp::create(
              mb, loc, executableName, format,
              bytesAttr(context, blob, data),
              bytesAttr(context, blob + "_metadata", metadata));
          embedded = true;
          return success();
        };
        std::vector<cpu::CPUTargetOptions> targets =
            options.cpuTarget ? cpuTargets(options) : options.targets;
        for (const cpu::CPUTargetOptions &target : targets) {
          OwningOpRef<ModuleOp> copy = kernels->clone();
          FailureOr<cpu::CPUExecutable> executable =
              cpu::compileCPUExecutable(*copy, target, options.codegen);
          if (failed(executable))
            return failure();
          if (failed(embed(executable->format, executable->entryPoints, "so",
                           std::move(executable->elf),
                           std::move(executable->metadata))))
            return failure();
        }
        // With CPU executables beside them, a GPU kernel must take the
        // same bindings: the same temporaries go to scratch.
        gpu::GPUCodegenPipelineOptions gpuOptions;
        gpuOptions.copyOptionValuesFrom(options.gpuCodegen);
        if (embedded)
          gpuOptions.maxPrivateBytes =
              unsigned(options.codegen.maxStackAllocationBytes);
        if (options.vulkanTarget) {
          OwningOpRef<ModuleOp> copy = kernels->clone();
          FailureOr<gpu::SPIRVExecutable> executable =
              gpu::compileSPIRVExecutable(*copy, gpuOptions, options.configure);
          if (failed(executable))
            return failure();
          if (failed(embed(executable->format, executable->entryPoints, "spv",
                           std::move(executable->spirv),
                           std::move(executable->metadata))))
            return failure();
        }
        if (options.cudaTarget) {
          OwningOpRef<ModuleOp> copy = kernels->clone();
          FailureOr<gpu::CUDAExecutable> executable = gpu::compileCUDAExecutable(
              *copy, gpuOptions, options.cuda, options.configure);
          if (failed(executable))
            return failure();
          for (const gpu::CUDAImage &image : executable->images) {
            ArrayRef<uint8_t> bytes = image.bytes;
            if (!image.cubin)
              bytes = bytes.drop_back(); // the NUL the driver needs
            if (failed(dumpImage(image.arch.name() +
                                     (image.cubin ? ".cubin" : ".ptx"),
                                 bytes)))
              return failure();
          }
          if (failed(embed(executable->format, executable->entryPoints, "bin",
                           std::move(executable->data),
                           std::move(executable->metadata))))
            return failure();
        }
        if (options.rocmTarget) {
          OwningOpRef<ModuleOp> copy = kernels->clone();
          FailureOr<gpu::ROCmExecutable> executable = gpu::compileROCmExecutable(
              *copy, gpuOptions, options.rocm, options.configure);
          if (failed(executable))
            return failure();
          for (const gpu::ROCmCodeObject &object : executable->codeObjects)
            if (failed(dumpImage(object.arch + ".hsaco", object.bytes)))
              return failure();
          if (failed(embed(executable->format, executable->entryPoints, "hsaco",
                           std::move(executable->data),
                           std::move(executable->metadata))))
            return failure();
        }
        return success();
      })))
    return failure();
  if (options.compileTo == Phase::kExecutables)
    return std::vector<uint8_t>();

  // vm
  vm::ModuleOp vmModule;
  if (failed(runner.timed(Phase::kVM, [&]() -> LogicalResult {
        SmallVector<func::FuncOp> kernels;
        for (auto function : module.getOps<func::FuncOp>())
          if (function->hasAttr(flow::kKernelAttr))
            kernels.push_back(function);
        // Compiled: the host keeps their declarations only.
        for (func::FuncOp kernel : kernels) {
          kernel.getBody().getBlocks().clear();
          kernel.setPrivate();
        }
        if (failed(runner.runPasses(Phase::kVM, [](OpPassManager &pm) {
              // Index arithmetic on shapes (affine.apply) becomes arith.
              pm.addPass(createLowerAffinePass());
              pm.addPass(createSCFToControlFlowPass());
              pm.addPass(createCanonicalizerPass());
              pm.addPass(createCSEPass());
              pm.addPass(host::createPlanTransientsPass());
              pm.addPass(host::createBatchSubmissionsPass());
              pm.addPass(host::createHostToVMPass());
              pm.addPass(vm::createVMFuseCompareBranchPass());
              pm.addPass(createCanonicalizerPass());
              pm.addPass(createCSEPass());
            })))
          return failure();
        for (auto op : module.getOps<vm::ModuleOp>())
          vmModule = op;
        return success();
      })))
    return failure();
  if (options.compileTo == Phase::kVM)
    return std::vector<uint8_t>();

  // module
  FailureOr<std::vector<uint8_t>> file;
  if (failed(runner.timed(Phase::kModule, [&]() -> LogicalResult {
        file = vm::serializeModule(vmModule, options.signingKey);
        return failure(failed(file));
      })))
    return failure();
  return std::move(*file);
}

} // namespace strata
