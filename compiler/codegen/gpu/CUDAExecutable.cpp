//===- CUDAExecutable.cpp - Dispatch kernels to a CUDA executable ---------===//

#include "compiler/codegen/gpu/CUDAExecutable.h"

#include "compiler/codegen/gpu/Passes.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "strata/schemas/cuda_executable_generated.h"

using namespace mlir;

namespace strata::gpu {
namespace {

/// The PTX ISA version the images declare: the lowest that every arch asked
/// for accepts (times 10).
unsigned ptxVersionFor(unsigned arch) {
  if (arch >= 120)
    return 87;
  if (arch >= 100)
    return 86;
  return 80;
}

/// ptxas, as CUDATargetOptions::ptxas says; empty when there is none.
std::string findPtxas(const std::string &option) {
  if (option == "none")
    return {};
  if (!option.empty())
    return option;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char *home = std::getenv(variable)) {
      SmallString<256> path(home);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(path))
        return std::string(path);
    }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return {};
}

/// The cubin ptxas makes of `ptx` for `arch`.
FailureOr<std::vector<uint8_t>> assemble(Location loc, StringRef ptxas,
                                         StringRef ptx, const CUDAArch &arch) {
  SmallString<128> input, output, log;
  if (llvm::sys::fs::createTemporaryFile("strata-kernels", "ptx", input) ||
      llvm::sys::fs::createTemporaryFile("strata-kernels", "cubin", output) ||
      llvm::sys::fs::createTemporaryFile("strata-ptxas", "log", log))
    return emitError(loc, "cannot create temporary files for ptxas");
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(input);
    llvm::sys::fs::remove(output);
    llvm::sys::fs::remove(log);
  });
  {
    std::error_code error;
    llvm::raw_fd_ostream file(input, error);
    if (error)
      return emitError(loc, "cannot write ") << input << ": " << error.message();
    file << ptx;
  }
  std::string archFlag = "-arch=" + arch.name();
  SmallVector<StringRef> args = {ptxas, archFlag, "-O3", input, "-o", output};
  std::optional<StringRef> redirects[] = {std::nullopt, log, log};
  std::string message;
  int code = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                       /*SecondsToWait=*/300, 0, &message);
  if (code != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    return emitError(loc, "ptxas (")
           << ptxas << ") failed for " << arch.name() << " with exit code "
           << code << (message.empty() ? "" : ": ") << message << "\n"
           << (text ? (*text)->getBuffer() : StringRef());
  }
  auto cubin = llvm::MemoryBuffer::getFile(output);
  if (!cubin)
    return emitError(loc, "ptxas wrote no cubin to ") << output;
  StringRef bytes = (*cubin)->getBuffer();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

std::vector<uint8_t> serializeMetadata(const CUDAExecutable &executable,
                                       const std::vector<uint64_t> &offsets,
                                       unsigned ptxVersion) {
  namespace fb = flatbuffers;
  fb::FlatBufferBuilder fbb;
  std::vector<fb::Offset<schema::cuda::EntryPointDef>> entries;
  for (const EntryPointInfo &entry : executable.entryPoints)
    entries.push_back(serializeEntryPoint<schema::cuda::EntryPointDefBuilder>(
        fbb, entry, [&](schema::cuda::EntryPointDefBuilder &builder) {
          const auto bytes = uint32_t(entry.workgroupMemoryBytes);
          if (entry.dynamicWorkgroupMemory)
            builder.add_dynamic_shared_memory_bytes(bytes);
          else
            builder.add_shared_memory_bytes(bytes);
        }));
  auto entryVector = fbb.CreateVector(entries);
  std::vector<fb::Offset<schema::cuda::ImageDef>> images;
  for (auto [image, offset] : llvm::zip_equal(executable.images, offsets))
    images.push_back(schema::cuda::CreateImageDef(
        fbb, image.cubin ? schema::cuda::ImageKind::Cubin
                         : schema::cuda::ImageKind::Ptx,
        image.arch.capability, offset, image.bytes.size(), image.arch.specific));
  auto imageVector = fbb.CreateVector(images);
  fbb.Finish(schema::cuda::CreateCudaExecutableDef(fbb, entryVector,
                                                   imageVector, ptxVersion),
             schema::cuda::CudaExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

} // namespace

std::string CUDAArch::name() const {
  return "sm_" + std::to_string(capability) + (specific ? "a" : "");
}

FailureOr<CUDAArch> parseCUDAArch(StringRef arch) {
  CUDAArch parsed;
  if (!arch.consume_front("sm_"))
    return failure();
  parsed.specific = arch.consume_back("a");
  if (arch.getAsInteger(10, parsed.capability) || parsed.capability < 50 ||
      parsed.capability > 121 || (parsed.specific && parsed.capability < 90))
    return failure();
  return parsed;
}

std::string cudaTargetEnv() { return llvmGPUTargetEnv(49152, 64, 32); }

/// The shared memory a block may have on `arch` once the kernel opts in
/// (CUDA's CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, per the
/// CUDA programming guide's table of compute capabilities).
int64_t optInSharedMemory(unsigned arch) {
  switch (arch) {
  case 80: case 87: return 166912;              // 163 KiB
  case 86: case 89: return 101376;              // 99 KiB
  case 90: case 100: case 101: case 103: return 232448;  // 227 KiB
  case 120: case 121: return 101376;
  case 75: return 65536;
  case 70: case 72: return 98304;
  default: return 49152;
  }
}

namespace {

/// The images of `archs` (one group of the archs asked for, whose kernels
/// take the matrix tiles `kind`) and the entry points: the shared pipeline
/// and the NVVM back end run on `module`, PTX for each arch, a cubin beside
/// each where `ptxas` is given.
FailureOr<CUDAExecutable> compileArchGroup(
    ModuleOp module, const GPUCodegenPipelineOptions &options,
    llvm::function_ref<LogicalResult(PassManager &)> configure,
    ArrayRef<CUDAArch> archs, StringRef kind, int64_t sharedMemory,
    unsigned ptxVersion, StringRef ptxas) {
  MLIRContext *context = module.getContext();
  Location loc = module.getLoc();
  // Three runs: the shared pipeline (its entry points are read before the
  // NVVM lowering replaces the gpu.func ops), the NVVM back end, and the
  // serialization once the targets are attached.
  auto runPasses = [&](llvm::function_ref<void(PassManager &)> build) {
    return runConfigured(module, configure, build);
  };
  GPUCodegenPipelineOptions cudaOptions;
  copyWithDefaultMatrixTiles(cudaOptions, options, kind);
  cudaOptions.mmaWorkgroupMemory = sharedMemory;
  FailureOr<GPUKernels> shared =
      runGPUCodegen(module, cudaOptions, cudaTargetEnv(), configure);
  if (failed(shared))
    return failure();
  mlir::gpu::GPUModuleOp kernels = shared->module;
  CUDAExecutable executable;
  executable.entryPoints = std::move(shared->entryPoints);

  if (failed(runPasses(buildNVVMPipeline)))
    return failure();
  // Dynamic shared memory (strata.dynamic_workgroup_memory): the lowering
  // of gpu.dynamic_shared_memory declares an internal zero-length array,
  // which PTX gets as one static byte; as an external declaration it is
  // `.extern .shared .align 16 .b8 NAME[]`, the start of what the launch
  // gives.
  kernels.walk([](LLVM::GlobalOp global) {
    if (global.getAddrSpace() == 3 && global.getSymName().starts_with("__dynamic_shmem__"))
      global.setLinkage(LLVM::Linkage::External);
  });

  // One NVVM target per arch; gpu-module-to-binary writes PTX for each.
  std::string features = "+ptx" + std::to_string(ptxVersion);
  SmallVector<Attribute> targets;
  for (const CUDAArch &arch : archs)
    targets.push_back(NVVM::NVVMTargetAttr::get(
        context, /*optLevel=*/3, "nvptx64-nvidia-cuda", arch.name(), features));
  kernels.setTargetsAttr(ArrayAttr::get(context, targets));
  DialectRegistry translations;
  registerBuiltinDialectTranslation(translations);
  registerLLVMDialectTranslation(translations);
  registerNVVMDialectTranslation(translations);
  registerGPUDialectTranslation(translations);
  context->appendDialectRegistry(translations);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  if (failed(runPasses([&](PassManager &pm) {
        pm.addPass(createGpuModuleToBinaryPass(binary));
      })))
    return failure();
  auto binaries = module.getOps<mlir::gpu::BinaryOp>();
  if (binaries.empty())
    return module.emitError("NVVM serialization left no gpu.binary");
  mlir::gpu::BinaryOp binaryOp = *binaries.begin();

  for (auto [arch, attr] : llvm::zip_equal(archs, binaryOp.getObjects())) {
    auto object = cast<mlir::gpu::ObjectAttr>(attr);
    StringRef ptx = object.getObject().getValue();
    // An undefined function (a libdevice call for a math function the
    // pipeline left) would fail only when the driver loads the image.
    for (StringRef line : llvm::split(ptx, '\n'))
      if (line.starts_with(".extern .func"))
        return emitError(loc, "the CUDA kernels call a function no image "
                              "defines: ")
               << line.drop_front(strlen(".extern .func")).trim();
    CUDAImage image;
    image.arch = arch;
    image.bytes.assign(ptx.begin(), ptx.end());
    image.bytes.push_back(0);
    executable.images.push_back(std::move(image));
    if (!ptxas.empty()) {
      FailureOr<std::vector<uint8_t>> cubin = assemble(loc, ptxas, ptx, arch);
      if (failed(cubin))
        return failure();
      CUDAImage assembled;
      assembled.cubin = true;
      assembled.arch = arch;
      assembled.bytes = std::move(*cubin);
      executable.images.push_back(std::move(assembled));
    }
  }
  return executable;
}

/// Whether two lowerings of the same kernels describe their entry points
/// alike (one metadata serves the images of both).
bool sameEntryPoints(ArrayRef<EntryPointInfo> a, ArrayRef<EntryPointInfo> b) {
  return llvm::equal(a, b, [](const EntryPointInfo &x, const EntryPointInfo &y) {
    return x.name == y.name && x.bindingCount == y.bindingCount &&
           x.constantCount == y.constantCount &&
           x.bindingReadOnly == y.bindingReadOnly &&
           x.checkMessages == y.checkMessages &&
           x.workgroupMemoryBytes == y.workgroupMemoryBytes &&
           x.dynamicWorkgroupMemory == y.dynamicWorkgroupMemory &&
           x.dispatch.sameCount(y.dispatch) &&
           x.dispatch.workgroupSize == y.dispatch.workgroupSize &&
           x.dispatch.scratchBytes == y.dispatch.scratchBytes;
  });
}

} // namespace

FailureOr<CUDAExecutable> compileCUDAExecutable(
    ModuleOp module, const GPUCodegenPipelineOptions &options,
    const CUDATargetOptions &target,
    llvm::function_ref<LogicalResult(PassManager &)> configure) {
  Location loc = module.getLoc();
  if (target.archs.empty())
    return emitError(loc, "no CUDA arch to compile for; name one or more "
                          "with --cuda-arch (sm_80,sm_90)");
  std::vector<CUDAArch> archs;
  for (const std::string &name : target.archs) {
    FailureOr<CUDAArch> arch = parseCUDAArch(name);
    if (failed(arch))
      return emitError(loc, "unknown CUDA arch '")
             << name << "'; expected sm_<major><minor> from sm_50 to "
             << "sm_121, such as sm_80 or sm_90, or an arch-specific one "
             << "from sm_90a on";
    if (llvm::is_contained(archs, *arch))
      return emitError(loc, "CUDA arch '") << name << "' is named twice";
    archs.push_back(*arch);
  }
  unsigned ptxVersion = 0;
  for (const CUDAArch &arch : archs)
    ptxVersion = std::max(ptxVersion, ptxVersionFor(arch.capability));
  // The tensor-core buffers may take what every arch offers a kernel that
  // opts in (dynamic shared memory past 48 KiB), or less if asked.
  int64_t sharedMemory = std::numeric_limits<int64_t>::max();
  for (const CUDAArch &arch : archs)
    sharedMemory = std::min(sharedMemory, optInSharedMemory(arch.capability));
  if (options.mmaWorkgroupMemory > 0)
    sharedMemory = std::min<int64_t>(sharedMemory, options.mmaWorkgroupMemory);
  const std::string ptxas = findPtxas(target.ptxas);

  // Matmuls staged in shared memory unless the options say otherwise, f16
  // and bf16 ones on the tensor cores where every arch has mma.sync
  // m16n8k16 (sm_80 and later). sm_90a's kernels take wgmma: they are
  // lowered apart from the others' (on a copy of the kernels), with the
  // same entry points (mma.sync's tiles, workgroups and buffers).
  std::vector<CUDAArch> common, hopper;
  for (const CUDAArch &arch : archs)
    (arch.capability == 90 && arch.specific ? hopper : common).push_back(arch);
  const bool tensorCores =
      llvm::all_of(archs, [](const CUDAArch &arch) { return arch.capability >= 80; });
  FailureOr<CUDAExecutable> executable = failure();
  if (!common.empty()) {
    OwningOpRef<ModuleOp> copy;
    if (!hopper.empty())
      copy = module.clone();
    executable = compileArchGroup(module, options, configure, common,
                                  tensorCores ? "mma" : "shared", sharedMemory,
                                  ptxVersion, ptxas);
    if (failed(executable))
      return failure();
    if (copy) {
      FailureOr<CUDAExecutable> wgmma = compileArchGroup(
          *copy, options, configure, hopper, tensorCores ? "wgmma" : "shared",
          sharedMemory, ptxVersion, ptxas);
      if (failed(wgmma))
        return failure();
      if (!sameEntryPoints(executable->entryPoints, wgmma->entryPoints))
        return emitError(loc, "the kernels for ")
               << hopper.front().name() << " have other entry points (workgroups, "
               << "workgroup memory) than those for the other archs; compile "
               << "them into modules of their own";
      for (CUDAImage &image : wgmma->images)
        executable->images.push_back(std::move(image));
    }
  } else {
    executable = compileArchGroup(module, options, configure, hopper,
                                  tensorCores ? "wgmma" : "shared", sharedMemory,
                                  ptxVersion, ptxas);
    if (failed(executable))
      return failure();
  }
  // The images in the order the archs were named.
  llvm::stable_sort(executable->images, [&](const CUDAImage &x, const CUDAImage &y) {
    return llvm::find(archs, x.arch) < llvm::find(archs, y.arch);
  });
  SmallVector<ArrayRef<uint8_t>> images;
  for (const CUDAImage &image : executable->images)
    images.push_back(image.bytes);
  std::vector<uint64_t> offsets = concatenateImages(images, executable->data);
  executable->metadata = serializeMetadata(*executable, offsets, ptxVersion);
  return executable;
}

} // namespace strata::gpu
