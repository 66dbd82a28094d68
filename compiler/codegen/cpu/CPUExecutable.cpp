//===- CPUExecutable.cpp - Dispatch kernels to a CPU executable ----------===//

#include "compiler/codegen/cpu/CPUExecutable.h"

#include <mutex>

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/RuntimeImports.h"
#include "strata/schemas/cpu_executable_generated.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace strata::cpu {

std::string defaultLLDPath() { return STRATA_LLD_PATH; }

FailureOr<std::unique_ptr<llvm::TargetMachine>>
createCPUTargetMachine(const CPUTargetOptions &options, Location loc) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
  });

  llvm::Triple triple(llvm::Triple::normalize(options.triple));
  if ((triple.getArch() != llvm::Triple::x86_64 &&
       triple.getArch() != llvm::Triple::aarch64) ||
      !triple.isOSLinux())
    return emitError(loc) << "unsupported CPU target triple '" << options.triple
                          << "': expected x86_64-linux-gnu or "
                             "aarch64-linux-gnu";
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc) << "no LLVM target for '" << triple.str()
                          << "': " << error;

  std::string cpu = options.cpu;
  std::string features = options.features;
  if (cpu.empty())
    cpu = triple.getArch() == llvm::Triple(llvm::sys::getProcessTriple()).getArch()
              ? "host"
              : "generic";
  if (cpu == "host") {
    llvm::Triple host(llvm::sys::getProcessTriple());
    if (host.getArch() != triple.getArch())
      return emitError(loc) << "--cpu=host needs a " << host.getArchName()
                            << " triple, got '" << options.triple << "'";
    cpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> hostFeatures;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      hostFeatures.push_back((feature.second ? "+" : "-") +
                             feature.first().str());
    if (!features.empty())
      hostFeatures.push_back(features);
    features = llvm::join(hostFeatures, ",");
  }

  llvm::TargetOptions targetOptions;
  // Fused multiply-add: what makes a contraction's inner loop one
  // instruction per vector, and more accurate than a rounded multiply.
  targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, llvm::CodeGenOptLevel::Default));
  if (!machine)
    return emitError(loc) << "cannot create a target machine for '"
                          << triple.str() << "' (cpu '" << cpu << "')";
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(cpu))
    return emitError(loc) << "unknown CPU '" << cpu << "' for "
                          << triple.getArchName();
  return machine;
}

std::string executableFormat(const llvm::TargetMachine &machine) {
  return "cpu-elf-" + machine.getTargetTriple().getArchName().str();
}

int64_t nativeVectorBits(const llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  if (machine.getTargetTriple().getArch() == llvm::Triple::x86_64) {
    if (subtarget->checkFeatures("+avx512f"))
      return 512;
    if (subtarget->checkFeatures("+avx"))
      return 256;
  }
  // SSE and NEON.
  return 128;
}

int64_t nativeVectorRegisters(const llvm::TargetMachine &machine) {
  if (machine.getTargetTriple().getArch() == llvm::Triple::x86_64)
    return machine.getMCSubtargetInfo()->checkFeatures("+avx512f") ? 32 : 16;
  return 32;
}

LogicalResult
lowerToLLVMDialect(ModuleOp module, const llvm::TargetMachine &machine,
                   const CPUCodegenPipelineOptions &options,
                   llvm::function_ref<LogicalResult(PassManager &)> configure) {
  CPUCodegenPipelineOptions effective;
  effective.copyOptionValuesFrom(options);
  if (effective.vectorBits == 0)
    effective.vectorBits = nativeVectorBits(machine);
  if (effective.vectorRegisters == 0)
    effective.vectorRegisters = nativeVectorRegisters(machine);
  PassManager pm(module.getContext());
  if (configure && failed(configure(pm)))
    return failure();
  buildCPUCodegenPipeline(pm, effective);
  return pm.run(module);
}

FailureOr<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &llvmContext,
                  llvm::TargetMachine &machine) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);

  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "strata_cpu_executable");
  if (!llvmModule)
    return module.emitError("cannot translate the kernels to LLVM IR");
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  if (llvm::verifyModule(*llvmModule, &llvm::errs()))
    return module.emitError("the kernels' LLVM IR does not verify");

  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  passes.run(*llvmModule, modules);
  return llvmModule;
}

FailureOr<std::vector<uint8_t>> emitObjectFile(llvm::Module &module,
                                               llvm::TargetMachine &machine,
                                               Location loc) {
  llvm::SmallVector<char, 0> buffer;
  {
    llvm::raw_svector_ostream stream(buffer);
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, stream, nullptr,
                                    llvm::CodeGenFileType::ObjectFile))
      return emitError(loc) << "the target machine cannot emit objects";
    passes.run(module);
  }

  // Whatever the object leaves undefined, the runtime must provide.
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> object =
      llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
          llvm::StringRef(buffer.data(), buffer.size()), "kernels.o"));
  if (!object)
    return emitError(loc) << "cannot read back the object file: "
                          << llvm::toString(object.takeError());
  std::vector<std::string> missing;
  for (const llvm::object::SymbolRef &symbol : (*object)->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!flags || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(name.takeError());
      return emitError(loc) << "cannot read the object file's symbols";
    }
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name->empty() &&
        !isRuntimeImport(*name))
      missing.push_back(name->str());
  }
  if (!missing.empty())
    return emitError(loc)
           << "the kernels need " << llvm::join(missing, ", ")
           << ", which the runtime does not provide to CPU executables (it "
              "provides libm functions, memcpy, memmove and memset)";
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

FailureOr<std::vector<uint8_t>> linkSharedObject(llvm::ArrayRef<uint8_t> object,
                                                 llvm::StringRef lldPath,
                                                 Location loc) {
  llvm::SmallString<128> directory;
  if (std::error_code error =
          llvm::sys::fs::createUniqueDirectory("strata-cpu-link", directory))
    return emitError(loc) << "cannot create a temporary directory: "
                          << error.message();
  llvm::scope_exit cleanup(
      [&] { (void)llvm::sys::fs::remove_directories(directory); });

  auto pathIn = [&](llvm::StringRef name) {
    llvm::SmallString<128> path(directory);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  std::string input = pathIn("kernels.o"), output = pathIn("kernels.so"),
              log = pathIn("lld.log");
  {
    std::error_code error;
    llvm::raw_fd_ostream stream(input, error);
    if (error)
      return emitError(loc)
             << "cannot write " << input << ": " << error.message();
    stream.write(reinterpret_cast<const char *>(object.data()), object.size());
  }

  // -shared without libc or startup files: the imports stay undefined for
  // the runtime's loader; -z now and no build id keep the output small and
  // reproducible; -s drops the static symbol table (exports live in
  // .dynsym).
  llvm::StringRef args[] = {lldPath,       "-shared",         "-z", "now", "-z",
                            "noexecstack", "--build-id=none", "-s", input, "-o",
                            output};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string launchError;
  int status = llvm::sys::ExecuteAndWait(lldPath, args, std::nullopt, redirects,
                                         0, 0, &launchError);
  if (status != 0) {
    InFlightDiagnostic diagnostic = emitError(loc)
                                    << "linking with " << lldPath << " failed";
    if (!launchError.empty())
      diagnostic << ": " << launchError;
    if (auto text = llvm::MemoryBuffer::getFile(log))
      diagnostic << ": " << (*text)->getBuffer().trim();
    return diagnostic;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> linked =
      llvm::MemoryBuffer::getFile(output, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!linked)
    return emitError(loc) << "cannot read " << output << ": "
                          << linked.getError().message();
  llvm::StringRef bytes = (*linked)->getBuffer();
  return std::vector<uint8_t>(bytes.bytes_begin(), bytes.bytes_end());
}

FailureOr<std::vector<EntryPointInfo>> collectEntryPoints(ModuleOp module) {
  std::vector<EntryPointInfo> entries;
  for (auto function : module.getOps<LLVM::LLVMFuncOp>()) {
    auto attr = function->getAttrOfType<DictionaryAttr>(kEntryPointAttr);
    if (!attr)
      continue;
    auto integer = [&](llvm::StringRef key) -> std::optional<uint32_t> {
      if (auto value = attr.getAs<IntegerAttr>(key))
        return uint32_t(value.getInt());
      return std::nullopt;
    };
    auto triple =
        [&](llvm::StringRef key) -> std::optional<std::array<uint32_t, 3>> {
      auto value = attr.getAs<DenseI64ArrayAttr>(key);
      if (!value || value.size() != 3)
        return std::nullopt;
      return std::array<uint32_t, 3>{uint32_t(value[0]), uint32_t(value[1]),
                                     uint32_t(value[2])};
    };
    auto readOnly = attr.getAs<DenseBoolArrayAttr>("binding_read_only");
    std::optional<uint32_t> bindings = integer("binding_count");
    std::optional<uint32_t> constants = integer("constant_count");
    std::optional<std::array<uint32_t, 3>> size = triple("workgroup_size");
    if (!bindings || !constants || !size || !readOnly)
      return function.emitOpError("has a malformed '")
             << kEntryPointAttr << "' attribute";
    EntryPointInfo entry;
    entry.name = function.getSymName().str();
    entry.bindingCount = *bindings;
    entry.constantCount = *constants;
    entry.bindingReadOnly.assign(readOnly.asArrayRef().begin(),
                                 readOnly.asArrayRef().end());
    entry.workgroupSize = *size;
    entry.workgroupCount = triple("workgroup_count");
    entry.workgroupCountConstant = integer("workgroup_count_constant");
    if (auto scratch = attr.getAs<IntegerAttr>("scratch_bytes"))
      entry.scratchBytes = scratch.getInt();
    if (auto local = attr.getAs<IntegerAttr>("local_memory_bytes"))
      entry.localMemoryBytes = local.getInt();
    entry.ascendingWorkgroups = attr.contains("ascending_workgroups");
    if (auto messages = attr.getAs<ArrayAttr>("check_messages"))
      for (auto message : messages.getAsValueRange<StringAttr>())
        entry.checkMessages.push_back(message.str());
    entries.push_back(std::move(entry));
  }
  if (entries.empty())
    return module.emitError("the module holds no kernel (a public "
                            "func.func with a body)");
  llvm::sort(entries, [](const EntryPointInfo &a, const EntryPointInfo &b) {
    return a.name < b.name;
  });
  return entries;
}

std::vector<std::string> requiredFeatures(const llvm::TargetMachine &machine) {
  std::vector<std::string> names;
  if (machine.getTargetTriple().getArch() != llvm::Triple::x86_64)
    return names;
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
#define STRATA_X86_FEATURE(name, ...)                                          \
  if (subtarget->checkFeatures("+" name))                                      \
    names.push_back(name);
#include "schemas/cpu_features.def"
#undef STRATA_X86_FEATURE
  return names;
}

std::vector<uint8_t>
serializeMetadata(llvm::ArrayRef<EntryPointInfo> entries,
                  llvm::ArrayRef<std::string> requiredFeatures) {
  namespace schema = strata::schema::cpu;
  flatbuffers::FlatBufferBuilder builder;
  std::vector<flatbuffers::Offset<schema::EntryPointDef>> defs;
  for (const EntryPointInfo &entry : entries) {
    std::vector<uint8_t> readOnly(entry.bindingReadOnly.begin(),
                                  entry.bindingReadOnly.end());
    std::vector<uint32_t> size(entry.workgroupSize.begin(),
                               entry.workgroupSize.end());
    auto name = builder.CreateString(entry.name);
    auto readOnlyVector = builder.CreateVector(readOnly);
    auto sizeVector = builder.CreateVector(size);
    flatbuffers::Offset<
        flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
        checks;
    if (!entry.checkMessages.empty())
      checks = builder.CreateVectorOfStrings(entry.checkMessages.begin(),
                                             entry.checkMessages.end());
    defs.push_back(schema::CreateEntryPointDef(
        builder, name, entry.bindingCount, entry.constantCount, readOnlyVector,
        sizeVector, checks, entry.scratchBytes, entry.localMemoryBytes,
        entry.ascendingWorkgroups));
  }
  auto entryPoints = builder.CreateVector(defs);
  flatbuffers::Offset<
      flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
      features;
  if (!requiredFeatures.empty())
    features = builder.CreateVectorOfStrings(requiredFeatures.begin(),
                                             requiredFeatures.end());
  auto root = schema::CreateCpuExecutableDef(builder, entryPoints, features);
  schema::FinishCpuExecutableDefBuffer(builder, root);
  return std::vector<uint8_t>(builder.GetBufferPointer(),
                              builder.GetBufferPointer() + builder.GetSize());
}

FailureOr<CPUExecutable>
compileCPUExecutable(ModuleOp module, const CPUTargetOptions &target,
                     const CPUCodegenPipelineOptions &options) {
  Location loc = module.getLoc();
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
      createCPUTargetMachine(target, loc);
  if (failed(machine))
    return failure();
  if (failed(lowerToLLVMDialect(module, **machine, options)))
    return failure();
  CPUExecutable executable;
  executable.format = executableFormat(**machine);
  FailureOr<std::vector<EntryPointInfo>> entries = collectEntryPoints(module);
  if (failed(entries))
    return failure();
  executable.entryPoints = std::move(*entries);

  llvm::LLVMContext llvmContext;
  FailureOr<std::unique_ptr<llvm::Module>> llvmModule =
      translateToLLVMIR(module, llvmContext, **machine);
  if (failed(llvmModule))
    return failure();
  FailureOr<std::vector<uint8_t>> object =
      emitObjectFile(**llvmModule, **machine, loc);
  if (failed(object))
    return failure();
  FailureOr<std::vector<uint8_t>> elf = linkSharedObject(
      *object, target.lldPath.empty() ? defaultLLDPath() : target.lldPath, loc);
  if (failed(elf))
    return failure();
  executable.elf = std::move(*elf);
  executable.requiredFeatures = requiredFeatures(**machine);
  executable.metadata =
      serializeMetadata(executable.entryPoints, executable.requiredFeatures);
  return executable;
}

} // namespace strata::cpu
