#include "drivers/cuda/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

static_assert(CUDA_VERSION >= 12000,
              "the CUDA driver needs cuda.h of CUDA 12 or later (cuGraphInstantiate's signature changed in 12.0)");

namespace strata::cuda {
namespace {

#define STRATA_CUDA_STRINGIFY_EXPANDED(name) #name
// The symbol a cuda.h name stands for: "cuMemAlloc_v2" for cuMemAlloc.
#define STRATA_CUDA_SYMBOL(name) STRATA_CUDA_STRINGIFY_EXPANDED(name)

// The CUresult values of cuda.h 13.0, by number, so that a name is known
// whatever cuda.h the build saw and whatever library runs.
struct ResultName {
  int value;
  const char* name;
};
constexpr ResultName kResultNames[] = {
    {0, "CUDA_SUCCESS"},
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {4, "CUDA_ERROR_DEINITIALIZED"},
    {5, "CUDA_ERROR_PROFILER_DISABLED"},
    {6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED"},
    {7, "CUDA_ERROR_PROFILER_ALREADY_STARTED"},
    {8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT"},
    {205, "CUDA_ERROR_MAP_FAILED"},
    {206, "CUDA_ERROR_UNMAP_FAILED"},
    {207, "CUDA_ERROR_ARRAY_IS_MAPPED"},
    {208, "CUDA_ERROR_ALREADY_MAPPED"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {210, "CUDA_ERROR_ALREADY_ACQUIRED"},
    {211, "CUDA_ERROR_NOT_MAPPED"},
    {212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY"},
    {213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE"},
    {215, "CUDA_ERROR_UNSUPPORTED_LIMIT"},
    {216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"},
    {218, "CUDA_ERROR_INVALID_PTX"},
    {219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"},
    {220, "CUDA_ERROR_NVLINK_UNCORRECTABLE"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED"},
    {224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY"},
    {225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC"},
    {226, "CUDA_ERROR_CONTAINED"},
    {300, "CUDA_ERROR_INVALID_SOURCE"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND"},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM"},
    {400, "CUDA_ERROR_INVALID_HANDLE"},
    {401, "CUDA_ERROR_ILLEGAL_STATE"},
    {402, "CUDA_ERROR_LOSSY_QUERY"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {600, "CUDA_ERROR_NOT_READY"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {710, "CUDA_ERROR_ASSERT"},
    {711, "CUDA_ERROR_TOO_MANY_PEERS"},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
    {718, "CUDA_ERROR_INVALID_PC"},
    {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
    {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
    {800, "CUDA_ERROR_NOT_PERMITTED"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED"},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE"},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY"},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED"},
    {809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED"},
    {810, "CUDA_ERROR_MPS_CLIENT_TERMINATED"},
    {811, "CUDA_ERROR_CDP_NOT_SUPPORTED"},
    {812, "CUDA_ERROR_CDP_VERSION_MISMATCH"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE"},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"},
    {907, "CUDA_ERROR_CAPTURED_EVENT"},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"},
    {909, "CUDA_ERROR_TIMEOUT"},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
    {911, "CUDA_ERROR_EXTERNAL_DEVICE"},
    {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"},
    {913, "CUDA_ERROR_FUNCTION_NOT_LOADED"},
    {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE"},
    {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION"},
    {916, "CUDA_ERROR_KEY_ROTATION"},
    {999, "CUDA_ERROR_UNKNOWN"},
};

// What the user should do about a failed call, by code.
const char* Advice(CUresult result) {
  switch (static_cast<int>(result)) {
    case 2: return "free buffers or allocate less";
    case 3:
    case 4: return "the CUDA driver was not initialised or was already shut down (at process exit)";
    case 34:
      return "this is the CUDA toolkit's stub library, not the NVIDIA driver: install the NVIDIA driver, or point "
             "STRATA_CUDA_LIBRARY at its libcuda.so.1";
    case 35:
    case 36:
    case 803:
    case 804: return "the NVIDIA driver is older than this call or this library needs; update the NVIDIA driver";
    case 46:
    case 100:
    case 101: return "no usable CUDA device: check nvidia-smi, CUDA_VISIBLE_DEVICES and the device index";
    case 200:
    case 209:
      return "the executable has no image this GPU can load; recompile the module for this GPU's compute capability";
    case 218:
      return "the driver could not compile the PTX (its log follows, if any): a compiler bug, or PTX for a newer GPU";
    case 221:
    case 223: return "the driver cannot JIT-compile PTX here; ship a cubin for this GPU";
    case 222:
      return "the PTX is newer than this driver can compile; update the NVIDIA driver or compile for an older PTX ISA";
    case 700:
    case 716:
    case 717:
      return "a kernel accessed memory outside its bindings (a compiler bug, or bindings shorter than the kernel "
             "expects); CUDA is unusable in this process from now on: restart it (its other drivers keep working)";
    case 701:
      return "the launch needs more registers or shared memory than the GPU has for this block size; compile with a "
             "smaller workgroup size";
    case 702: return "a kernel ran too long and the display watchdog stopped it; run on a GPU without a display";
    case 710:
    case 714:
    case 715:
    case 718:
    case 719:
      return "a kernel faulted; CUDA is unusable in this process from now on: restart it (its other drivers keep "
             "working)";
    case 999: return "the NVIDIA driver reported an unknown error; check dmesg and nvidia-smi";
    default: return "see the CUDA driver API documentation of this call and code";
  }
}

}  // namespace

std::string CudaLibraryName() {
  const char* overridden = std::getenv("STRATA_CUDA_LIBRARY");
  return overridden && *overridden ? overridden : "libcuda.so.1";
}

StatusOr<const CudaFunctions*> LoadCudaLibrary() {
  static CudaFunctions functions;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string name = CudaLibraryName();
    // Never closed: CUDA objects may be destroyed during static destruction.
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* error = dlerror();
      status = UnavailableError("cuda: the CUDA driver library ", name, " could not be opened (",
                                error ? error : "unknown error",
                                "); install the NVIDIA driver, or set STRATA_CUDA_LIBRARY to its libcuda.so.1");
      return;
    }
#define STRATA_CUDA_LOAD(name)                                                                             \
  functions.name = reinterpret_cast<decltype(functions.name)>(dlsym(library, STRATA_CUDA_SYMBOL(name)));  \
  if (!functions.name) {                                                                                   \
    status = UnavailableError("cuda: ", name_of_library, " does not export " STRATA_CUDA_SYMBOL(name),     \
                              "; the NVIDIA driver is too old for this runtime (it needs CUDA 12 or later)"); \
    return;                                                                                                \
  }
    const std::string& name_of_library = name;
    STRATA_CUDA_FUNCTIONS(STRATA_CUDA_LOAD)
#undef STRATA_CUDA_LOAD
#define STRATA_CUDA_LOAD_OPTIONAL(name) \
  functions.name = reinterpret_cast<decltype(functions.name)>(dlsym(library, STRATA_CUDA_SYMBOL(name)));
    STRATA_CUDA_OPTIONAL_FUNCTIONS(STRATA_CUDA_LOAD_OPTIONAL)
#undef STRATA_CUDA_LOAD_OPTIONAL
    CUresult result = functions.cuInit(0);
    if (result == static_cast<CUresult>(34)) {
      status = UnavailableError("cuda: ", name, " is the CUDA toolkit's stub library, not the NVIDIA driver (cuInit: ",
                                CuResultName(result),
                                "); install the NVIDIA driver, or point STRATA_CUDA_LIBRARY at its libcuda.so.1");
      return;
    }
    if (result == static_cast<CUresult>(100)) {
      status = UnavailableError("cuda: the NVIDIA driver found no CUDA device (cuInit: ", CuResultName(result),
                                "); check nvidia-smi and CUDA_VISIBLE_DEVICES");
      return;
    }
    if (result != CUDA_SUCCESS) {
      status = CuError(result, StrCat("cuda: cuInit (", name, ")"));
      // Whatever cuInit refused, this driver cannot run here.
      if (status.code() != StatusCode::kUnavailable) status = UnavailableError(status.message());
      return;
    }
    result = functions.cuDriverGetVersion(&functions.driver_version);
    if (result != CUDA_SUCCESS) status = UnavailableError(CuError(result, "cuda: cuDriverGetVersion").message());
  });
  if (!status.ok()) return status;
  return &functions;
}

std::string CuResultName(CUresult result) {
  for (const ResultName& entry : kResultNames) {
    if (entry.value == static_cast<int>(result)) return StrCat(entry.name, " (", entry.value, ")");
  }
  return StrCat("unknown CUresult (", static_cast<int>(result), ")");
}

bool IsStickyError(CUresult result) {
  switch (static_cast<int>(result)) {
    case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
    case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
    case 710:  // CUDA_ERROR_ASSERT
    case 714:  // CUDA_ERROR_HARDWARE_STACK_ERROR
    case 715:  // CUDA_ERROR_ILLEGAL_INSTRUCTION
    case 716:  // CUDA_ERROR_MISALIGNED_ADDRESS
    case 717:  // CUDA_ERROR_INVALID_ADDRESS_SPACE
    case 718:  // CUDA_ERROR_INVALID_PC
    case 719:  // CUDA_ERROR_LAUNCH_FAILED
    case 214:  // CUDA_ERROR_ECC_UNCORRECTABLE
    case 220:  // CUDA_ERROR_NVLINK_UNCORRECTABLE
      return true;
    default: return false;
  }
}

Status CuError(CUresult result, std::string_view what) {
  std::string message = StrCat(what, ": ", CuResultName(result), "; ", Advice(result));
  switch (static_cast<int>(result)) {
    case 2: return ResourceExhaustedError(message);
    case 3:
    case 4:
    case 34:
    case 35:
    case 46:
    case 100:
    case 101:
    case 803:
    case 804: return UnavailableError(message);
    case 200:
    case 218: return InvalidArgumentError(message);
    case 209:
    case 221:
    case 222:
    case 223: return IncompatibleError(message);
    default: return IsStickyError(result) ? UnavailableError(message) : InternalError(message);
  }
}

std::string CudaVersionString(int version) { return StrCat(version / 1000, ".", version % 1000 / 10); }

}  // namespace strata::cuda
