#include "drivers/cuda/cuda_executable.h"

#include <cstring>
#include <map>

#include "drivers/cuda/cuda_device.h"
#include "strata/schemas/cuda_executable_generated.h"

namespace strata::cuda {
namespace {

std::string Prefix(const hal::ExecutableParams& params) {
  return StrCat("executable '", params.name, "' (", kCudaPtxFormat, "): ");
}

std::string ArchName(uint32_t arch) { return StrCat("sm_", arch); }

// "8.0" for a ptx_version of 80.
std::string PtxVersionString(uint32_t version) { return StrCat(version / 10, ".", version % 10); }

std::string JoinSizes(const std::vector<size_t>& sizes) {
  std::string out;
  for (size_t size : sizes) out += StrCat(out.empty() ? "" : ", ", size);
  return out;
}

}  // namespace

std::string DescribeImage(const CudaImage& image) {
  return StrCat(image.kind == ImageKind::kPtx ? "PTX" : "cubin", " for ", ArchName(image.arch),
                image.arch_specific ? "a" : "");
}

StatusOr<CudaExecutableInfo> ParseCudaExecutable(const hal::ExecutableParams& params,
                                                 const stream::KernelLimits& limits) {
  const std::string prefix = Prefix(params);
  std::span<const uint8_t> bytes = params.metadata;
  if (bytes.size() < 8 || !flatbuffers::BufferHasIdentifier(bytes.data(), schema::cuda::CudaExecutableDefIdentifier())) {
    return InvalidArgumentError(prefix, "metadata (", bytes.size(),
                                " bytes) is not a CUDA executable description (expected FlatBuffer identifier '",
                                schema::cuda::CudaExecutableDefIdentifier(), "')");
  }
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!schema::cuda::VerifyCudaExecutableDefBuffer(verifier)) {
    return DataLossError(prefix, "metadata (", bytes.size(), " bytes) is a corrupt FlatBuffer");
  }
  const schema::cuda::CudaExecutableDef* def = schema::cuda::GetCudaExecutableDef(bytes.data());
  CudaExecutableInfo info;
  info.ptx_version = def->ptx_version();

  if (!def->images() || def->images()->size() == 0) return InvalidArgumentError(prefix, "metadata lists no images");
  const std::span<const uint8_t> data = params.data;
  for (uint32_t i = 0; i < def->images()->size(); ++i) {
    const schema::cuda::ImageDef* image = def->images()->Get(i);
    const auto kind = static_cast<uint8_t>(image->kind());
    if (kind > static_cast<uint8_t>(schema::cuda::ImageKind::MAX)) {
      return InvalidArgumentError(prefix, "image ", i, " has kind ", kind, "; expected 0 (PTX) or 1 (cubin)");
    }
    CudaImage parsed;
    parsed.kind = image->kind() == schema::cuda::ImageKind::Ptx ? ImageKind::kPtx : ImageKind::kCubin;
    parsed.arch = image->arch();
    parsed.arch_specific = image->arch_specific();
    if (parsed.arch < 10) {
      return InvalidArgumentError(prefix, "image ", i, " has arch ", parsed.arch,
                                  "; expected a compute capability times 10, such as 80 for sm_80");
    }
    const std::string what = StrCat("image ", i, " (", DescribeImage(parsed), ")");
    if (image->size() == 0) return InvalidArgumentError(prefix, what, " is empty");
    if (image->offset() > data.size() || image->size() > data.size() - image->offset()) {
      return OutOfRangeError(prefix, what, " spans bytes [", image->offset(), ", ", image->offset() + image->size(),
                             ") of the executable's data, which has ", data.size(), " bytes");
    }
    parsed.bytes = data.subspan(image->offset(), image->size());
    if (parsed.kind == ImageKind::kPtx && parsed.bytes.back() != 0) {
      return InvalidArgumentError(prefix, what, " is not NUL-terminated: its last byte is 0x", Hex(parsed.bytes.back()),
                                  ", expected 0x0 (the driver reads PTX as a C string)");
    }
    static constexpr uint8_t kElfMagic[4] = {0x7F, 'E', 'L', 'F'};
    if (parsed.kind == ImageKind::kCubin &&
        (parsed.bytes.size() < 4 || std::memcmp(parsed.bytes.data(), kElfMagic, 4) != 0)) {
      return InvalidArgumentError(prefix, what, " is not an ELF file (it does not start with 0x7f 'E' 'L' 'F')");
    }
    info.images.push_back(parsed);
  }

  STRATA_ASSIGN_OR_RETURN(info.entry_points, stream::ReadKernelEntryPoints(def->entry_points(), prefix, limits));
  for (uint32_t i = 0; i < def->entry_points()->size(); ++i) {
    const schema::cuda::EntryPointDef* entry = def->entry_points()->Get(i);
    const uint32_t dynamic = entry->dynamic_shared_memory_bytes();
    const uint64_t total = uint64_t{dynamic} + entry->shared_memory_bytes();
    if (dynamic && total > limits.max_shared_memory_per_block_optin) {
      return FailedPreconditionError(prefix, "entry point '", info.entry_points[i].name, "' uses ", total,
                                     " bytes of shared memory (", dynamic, " dynamic); the device allows at most ",
                                     limits.max_shared_memory_per_block_optin,
                                     " per block once a kernel opts in; compile it with fewer buffers "
                                     "(--gpu-codegen-options=mma-stages=N)");
    }
    info.dynamic_shared_bytes.push_back(dynamic);
  }
  return info;
}

StatusOr<size_t> SelectCudaImage(std::span<const CudaImage> images, uint32_t arch) {
  // An arch-specific image of the device's own capability first (a cubin
  // before PTX), then the others as their compatibility allows.
  for (ImageKind kind : {ImageKind::kCubin, ImageKind::kPtx}) {
    for (size_t i = 0; i < images.size(); ++i) {
      if (images[i].arch_specific && images[i].arch == arch && images[i].kind == kind) return i;
    }
  }
  size_t cubin = images.size(), ptx = images.size();
  for (size_t i = 0; i < images.size(); ++i) {
    const CudaImage& image = images[i];
    if (image.arch > arch || image.arch_specific) continue;
    if (image.kind == ImageKind::kCubin) {
      if (image.arch / 10 == arch / 10 && (cubin == images.size() || image.arch > images[cubin].arch)) cubin = i;
    } else if (ptx == images.size() || image.arch > images[ptx].arch) {
      ptx = i;
    }
  }
  if (cubin != images.size()) return cubin;
  if (ptx != images.size()) return ptx;
  std::string have;
  for (const CudaImage& image : images) have += StrCat(have.empty() ? "" : ", ", DescribeImage(image));
  return IncompatibleError("no image runs on ", ArchName(arch), " (compute capability ", arch / 10, ".", arch % 10,
                           "): the executable has ", have,
                           "; a cubin runs on its major version at an equal or higher minor one, PTX on any equal or "
                           "higher capability, an arch-specific image (sm_90a) on its own capability alone; "
                           "recompile the module for ", ArchName(arch));
}

StatusOr<Ref<stream::StreamExecutable>> LoadCudaExecutable(std::shared_ptr<CudaContext> context,
                                                           const hal::ExecutableParams& params) {
  const std::string prefix = Prefix(params);
  STRATA_ASSIGN_OR_RETURN(CudaExecutableInfo info, ParseCudaExecutable(params, stream::DeviceKernelLimits(*context)));
  StatusOr<size_t> selected = SelectCudaImage(info.images, context->compute_capability());
  if (!selected.ok()) {
    return std::move(selected).status().Annotate(prefix, "device '", context->name(), "': ");
  }
  const CudaImage& image = info.images[*selected];
  const std::string on_device = StrCat(" on '", context->name(), "' (", context->facts().arch, ")");

  STRATA_RETURN_IF_ERROR(context->MakeCurrent());
  const CudaFunctions& cu = context->cu();
  // A cubin is an ELF file, read with its own alignment; the module's bytes
  // promise none.
  std::vector<uint64_t> aligned;
  const void* bytes = image.bytes.data();
  if (image.kind == ImageKind::kCubin) {
    aligned.resize((image.bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), image.bytes.data(), image.bytes.size());
    bytes = aligned.data();
  }
  char log[4096] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(uintptr_t{sizeof(log)})};
  CUmodule module = nullptr;
  CUresult result = cu.cuModuleLoadDataEx(&module, bytes, 2, options, values);
  if (result != CUDA_SUCCESS) {
    std::string what = StrCat(prefix, "cuModuleLoadDataEx of its ", DescribeImage(image), on_device);
    if (image.kind == ImageKind::kPtx) {
      what += StrCat(" (PTX ISA ", info.ptx_version ? PtxVersionString(info.ptx_version) : "unknown",
                     ", metadata ptx_version ", info.ptx_version, "; the driver is CUDA ",
                     CudaVersionString(cu.driver_version), ")");
    }
    Status status = CuError(result, what);
    log[sizeof(log) - 1] = 0;
    if (log[0]) status = Status(status.code(), StrCat(status.message(), "; the driver's log: ", log));
    return status;
  }
  std::map<std::string, uint32_t> dynamic_shared_bytes;
  for (size_t i = 0; i < info.entry_points.size(); ++i) {
    dynamic_shared_bytes[info.entry_points[i].name] = info.dynamic_shared_bytes[i];
  }
  auto lookup = [&](const hal::EntryPointInfo& entry) -> StatusOr<stream::KernelFunction> {
    CUfunction function = nullptr;
    CUresult result = cu.cuModuleGetFunction(&function, module, entry.name.c_str());
    if (result == static_cast<CUresult>(500)) {
      return NotFoundError("named in the metadata, it is not a .entry function of its ", DescribeImage(image),
                           " (cuModuleGetFunction: ", CuResultName(result), ")");
    }
    if (result != CUDA_SUCCESS) return CuError(result, "cuModuleGetFunction");
    int max_threads = 0, registers = 0;
    result = cu.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function);
    if (result == CUDA_SUCCESS) result = cu.cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function);
    if (result != CUDA_SUCCESS) return CuError(result, "cuFuncGetAttribute");

    // The parameters the kernel declares, where the driver can list them.
    if (cu.cuFuncGetParamInfo) {
      std::vector<size_t> declared;
      for (size_t index = 0;; ++index) {
        size_t offset = 0, size = 0;
        if (cu.cuFuncGetParamInfo(function, index, &offset, &size) != CUDA_SUCCESS) break;
        declared.push_back(size);
      }
      std::vector<size_t> expected = stream::AbiParameterSizes(entry);
      std::vector<size_t> with_lengths = expected;
      with_lengths.insert(with_lengths.end(), entry.binding_count, sizeof(uint64_t));
      if (declared != expected && declared != with_lengths) {
        return InvalidArgumentError(
            "declares ", declared.size(), " parameters of ", JoinSizes(declared), " bytes; the kernel ABI ",
            "(schemas/cuda_executable.fbs) passes ", expected.size(), " (", entry.binding_count, " binding pointers, ",
            entry.check_messages.empty() ? "" : "the check-status pointer, ", entry.constant_count,
            " 32-bit constants), optionally followed by ", entry.binding_count, " 64-bit binding lengths");
      }
    }
    // Dynamic shared memory past the default limit needs the kernel's opt-in.
    const uint32_t dynamic = dynamic_shared_bytes[entry.name];
    if (dynamic) {
      result = cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     static_cast<int>(dynamic));
      if (result != CUDA_SUCCESS) {
        return CuError(result, StrCat("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, ", dynamic, ")"));
      }
    }
    return stream::KernelFunction{function, static_cast<uint32_t>(max_threads), static_cast<uint32_t>(registers),
                                  dynamic};
  };
  return stream::StreamExecutable::Create(context, params, std::move(info.entry_points), module, lookup, on_device);
}

}  // namespace strata::cuda
