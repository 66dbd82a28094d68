//===- ROCmExecutable.cpp - Dispatch kernels to a ROCm executable ---------===//

#include "compiler/codegen/gpu/ROCmExecutable.h"

#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/TargetParser/TargetParser.h"
#include "strata/schemas/rocm_executable_generated.h"

using namespace mlir;

namespace strata::gpu {
namespace {

/// ld.lld, as ROCmTargetOptions::lld says; empty when there is none.
std::string findLld(const std::string &option) {
  if (!option.empty())
    return option;
  for (const char *name : {"ld.lld-22", "ld.lld"})
    if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
      return *found;
  if (llvm::sys::fs::can_execute("/usr/lib/llvm-22/bin/ld.lld"))
    return "/usr/lib/llvm-22/bin/ld.lld";
  return {};
}

/// The folder with ocml.bc, as ROCmTargetOptions::deviceLibs says; empty
/// when there is none.
std::string findDeviceLibs(const std::string &option) {
  auto holds = [](StringRef folder) {
    SmallString<256> path(folder);
    llvm::sys::path::append(path, "ocml.bc");
    return llvm::sys::fs::exists(path);
  };
  if (!option.empty())
    return holds(option) ? option : std::string();
  SmallVector<std::string> candidates;
  for (const char *variable : {"ROCM_PATH", "HIP_PATH"})
    if (const char *root = std::getenv(variable))
      candidates.push_back(std::string(root) + "/amdgcn/bitcode");
  candidates.push_back("/opt/rocm/amdgcn/bitcode");
  candidates.push_back("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
  candidates.push_back("/usr/lib/aarch64-linux-gnu/amdgcn/bitcode");
  candidates.push_back("/usr/lib/amdgcn/bitcode");
  for (const std::string &folder : candidates)
    if (holds(folder))
      return folder;
  return {};
}

/// The first ROCm device-library function the kernels call (__ocml_...,
/// __ockl_...), or empty.
std::string deviceLibraryCall(mlir::gpu::GPUModuleOp kernels) {
  std::string name;
  kernels.walk([&](LLVM::LLVMFuncOp function) {
    StringRef symbol = function.getSymName();
    if (function.isExternal() &&
        (symbol.starts_with("__ocml_") || symbol.starts_with("__ockl_")) &&
        name.empty())
      name = symbol.str();
  });
  return name;
}

/// A folder laid out as gpu-module-to-binary's ROCDL serializer expects a
/// ROCm installation: llvm/bin/ld.lld, and amdgcn/bitcode when there are
/// device libraries. Removed when the returned guard goes.
FailureOr<std::string> makeToolkit(Location loc, StringRef lld,
                                   StringRef deviceLibs) {
  SmallString<128> root;
  if (llvm::sys::fs::createUniqueDirectory("strata-rocm-toolkit", root))
    return emitError(loc, "cannot create a temporary folder for ld.lld");
  SmallString<256> bin(root);
  llvm::sys::path::append(bin, "llvm", "bin");
  SmallString<256> linker(bin);
  llvm::sys::path::append(linker, "ld.lld");
  if (llvm::sys::fs::create_directories(bin) ||
      llvm::sys::fs::create_link(lld, linker))
    return emitError(loc, "cannot link ") << lld << " into " << root;
  if (!deviceLibs.empty()) {
    SmallString<256> amdgcn(root);
    llvm::sys::path::append(amdgcn, "amdgcn");
    SmallString<256> bitcode(amdgcn);
    llvm::sys::path::append(bitcode, "bitcode");
    if (llvm::sys::fs::create_directories(amdgcn) ||
        llvm::sys::fs::create_link(deviceLibs, bitcode))
      return emitError(loc, "cannot link ") << deviceLibs << " into " << root;
  }
  return std::string(root);
}

std::vector<uint8_t> serializeMetadata(const ROCmExecutable &executable,
                                       const std::vector<uint64_t> &offsets) {
  namespace fb = flatbuffers;
  fb::FlatBufferBuilder fbb;
  std::vector<fb::Offset<schema::rocm::EntryPointDef>> entries;
  for (const EntryPointInfo &entry : executable.entryPoints)
    entries.push_back(serializeEntryPoint<schema::rocm::EntryPointDefBuilder>(
        fbb, entry, [&](schema::rocm::EntryPointDefBuilder &builder) {
          builder.add_shared_memory_bytes(uint32_t(entry.workgroupMemoryBytes));
          builder.add_kernarg_bytes(rocmKernargBytes(entry));
        }));
  auto entryVector = fbb.CreateVector(entries);
  std::vector<fb::Offset<schema::rocm::CodeObjectDef>> objects;
  for (auto [object, offset] : llvm::zip_equal(executable.codeObjects, offsets))
    objects.push_back(schema::rocm::CreateCodeObjectDefDirect(
        fbb, object.arch.c_str(), object.version, offset, object.bytes.size()));
  auto objectVector = fbb.CreateVector(objects);
  fbb.Finish(schema::rocm::CreateRocmExecutableDef(fbb, entryVector, objectVector),
             schema::rocm::RocmExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

} // namespace

unsigned rocmDefaultCodeObjectVersion(StringRef arch) {
  return arch == "gfx90a" || arch == "gfx908" || arch == "gfx906" ? 4 : 5;
}

bool isKnownROCmArch(StringRef arch) {
  return llvm::AMDGPU::parseArchAMDGCN(arch) != llvm::AMDGPU::GK_NONE;
}

uint32_t rocmKernargBytes(const EntryPointInfo &entry) {
  const uint32_t pointers =
      entry.bindingCount + (entry.checkMessages.empty() ? 0 : 1);
  return 8 * pointers + 4 * entry.constantCount;
}

std::string rocmTargetEnv() { return llvmGPUTargetEnv(65536, 1024, 64); }

StringRef rocmMatrixTiles(StringRef arch) {
  FailureOr<amdgpu::Chipset> chipset = amdgpu::Chipset::parse(arch);
  if (failed(chipset))
    return "scalar";
  // MFMA: gfx908 and later gfx9 (CDNA); WMMA: gfx11 (RDNA3), in wave 32.
  if (chipset->majorVersion == 9 &&
      (chipset->minorVersion > 0 || chipset->steppingVersion >= 8))
    return "mfma";
  if (chipset->majorVersion == 11)
    return "wmma32";
  return "scalar";
}

namespace {

/// Whether two runs of the shared code generator gave the same entry
/// points, as one executable's metadata needs for all its code objects.
bool sameEntryPoints(ArrayRef<EntryPointInfo> a, ArrayRef<EntryPointInfo> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b)) {
    if (x.name != y.name || x.bindingCount != y.bindingCount ||
        x.constantCount != y.constantCount ||
        x.bindingReadOnly != y.bindingReadOnly ||
        x.checkMessages != y.checkMessages ||
        x.workgroupMemoryBytes != y.workgroupMemoryBytes ||
        !x.dispatch.sameCount(y.dispatch) ||
        x.dispatch.workgroupSize != y.dispatch.workgroupSize ||
        x.dispatch.scratchBytes != y.dispatch.scratchBytes)
      return false;
  }
  return true;
}

} // namespace

FailureOr<ROCmExecutable> compileROCmExecutable(
    ModuleOp module, const GPUCodegenPipelineOptions &options,
    const ROCmTargetOptions &target,
    llvm::function_ref<LogicalResult(PassManager &)> configure) {
  MLIRContext *context = module.getContext();
  Location loc = module.getLoc();
  if (target.archs.empty())
    return emitError(loc, "no ROCm arch to compile for; name one or more "
                          "with --rocm-arch (gfx90a,gfx942,gfx1100)");
  if (target.codeObjectVersion != 0 &&
      (target.codeObjectVersion < 4 || target.codeObjectVersion > 6))
    return emitError(loc, "ROCm code object version ")
           << target.codeObjectVersion << " is not one of 4, 5 and 6";
  for (auto [i, arch] : llvm::enumerate(target.archs)) {
    if (!isKnownROCmArch(arch))
      return emitError(loc, "unknown ROCm arch '")
             << arch << "'; expected an AMD GPU architecture LLVM knows, "
             << "such as gfx90a, gfx942 or gfx1100";
    if (llvm::is_contained(ArrayRef(target.archs).take_front(i), arch))
      return emitError(loc, "ROCm arch '") << arch << "' is named twice";
  }
  const std::string lld = findLld(target.lld);
  if (lld.empty())
    return emitError(loc, "ld.lld, which links ROCm code objects, is not "
                          "installed (apt-get install lld-22), or give it "
                          "with --rocm-lld");
  const std::string deviceLibs = findDeviceLibs(target.deviceLibs);
  if (!target.deviceLibs.empty() && deviceLibs.empty())
    return emitError(loc, "the ROCm device-library folder '")
           << target.deviceLibs << "' holds no ocml.bc";

  // The shared code generator runs once per kind of matrix instruction the
  // archs have (rocmMatrixTiles), each on its own copy of the kernels; every
  // kind gives the same grid, so the entry points agree.
  SmallVector<StringRef> kinds;
  for (const std::string &arch : target.archs)
    if (!llvm::is_contained(kinds, rocmMatrixTiles(arch)))
      kinds.push_back(rocmMatrixTiles(arch));
  llvm::StringMap<mlir::gpu::GPUModuleOp> kernelsOfKind;
  SmallVector<OwningOpRef<ModuleOp>> copies;
  ROCmExecutable executable;
  for (auto [i, kind] : llvm::enumerate(kinds)) {
    ModuleOp input = module;
    if (i + 1 < kinds.size()) {
      copies.push_back(cast<ModuleOp>(module->clone()));
      input = *copies.back();
    }
    GPUCodegenPipelineOptions kindOptions;
    kindOptions.copyOptionValuesFrom(options);
    kindOptions.matrixTiles = kind.str();
    FailureOr<GPUKernels> shared =
        runGPUCodegen(input, kindOptions, rocmTargetEnv(), configure);
    if (failed(shared))
      return failure();
    if (i == 0)
      executable.entryPoints = std::move(shared->entryPoints);
    else if (!sameEntryPoints(executable.entryPoints, shared->entryPoints))
      return emitError(loc, "the ROCm kernels for ")
             << kinds.front() << " and " << kind
             << " matrix tiles have different entry points; compile for the "
                "archs of one kind at a time";
    kernelsOfKind[kind] = shared->module;
  }

  DialectRegistry translations;
  registerBuiltinDialectTranslation(translations);
  registerLLVMDialectTranslation(translations);
  registerROCDLDialectTranslation(translations);
  registerGPUDialectTranslation(translations);
  ROCDL::registerROCDLTargetInterfaceExternalModels(translations);
  context->appendDialectRegistry(translations);

  FailureOr<std::string> toolkit = makeToolkit(loc, lld, deviceLibs);
  if (failed(toolkit))
    return failure();
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(*toolkit); });

  // Each arch lowers a copy of the kernels of its own: the ROCDL lowering
  // depends on the chip.
  for (const std::string &arch : target.archs) {
    OwningOpRef<ModuleOp> copy = ModuleOp::create(loc);
    OpBuilder b = OpBuilder::atBlockBegin(copy->getBody());
    auto archKernels = cast<mlir::gpu::GPUModuleOp>(
        b.clone(*kernelsOfKind.lookup(rocmMatrixTiles(arch))));
    if (failed(runConfigured(*copy, configure, [&](PassManager &pm) {
          buildROCDLPipeline(pm, arch);
        })))
      return failure();
    if (std::string call = deviceLibraryCall(archKernels);
        !call.empty() && deviceLibs.empty())
      return emitError(loc, "the ROCm kernels call ")
             << call << " of ROCm's device math library, and no ocml.bc "
             << "was found (apt-get install rocm-device-libs, or give its "
             << "folder with --rocm-device-libs)";
    const unsigned version = target.codeObjectVersion
                                 ? target.codeObjectVersion
                                 : rocmDefaultCodeObjectVersion(arch);
    archKernels.setTargetsAttr(ArrayAttr::get(
        context, {ROCDL::ROCDLTargetAttr::get(
                     context, /*optLevel=*/3, "amdgcn-amd-amdhsa", arch, "",
                     std::to_string(version * 100))}));
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "bin";
    binary.toolkitPath = *toolkit;
    if (failed(runConfigured(*copy, configure, [&](PassManager &pm) {
          pm.addPass(createGpuModuleToBinaryPass(binary));
        })))
      return failure();
    auto binaries = copy->getOps<mlir::gpu::BinaryOp>();
    if (binaries.empty())
      return module.emitError("ROCDL serialization left no gpu.binary");
    auto object =
        cast<mlir::gpu::ObjectAttr>((*binaries.begin()).getObjects()[0]);
    StringRef bytes = object.getObject().getValue();
    ROCmCodeObject codeObject;
    codeObject.arch = arch;
    codeObject.version = version;
    codeObject.bytes.assign(bytes.begin(), bytes.end());
    executable.codeObjects.push_back(std::move(codeObject));
  }
  SmallVector<ArrayRef<uint8_t>> images;
  for (const ROCmCodeObject &object : executable.codeObjects)
    images.push_back(object.bytes);
  std::vector<uint64_t> offsets = concatenateImages(images, executable.data);
  executable.metadata = serializeMetadata(executable, offsets);
  return executable;
}

} // namespace strata::gpu
