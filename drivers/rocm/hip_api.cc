#include "drivers/rocm/hip_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace strata::rocm {
namespace {

// The hipError_t values of HIP 5.2 and 6, by number, so that a name is known
// whatever header the build saw and whatever library runs.
struct ResultName {
  int value;
  const char* name;
};
constexpr ResultName kResultNames[] = {
    {0, "hipSuccess"},
    {1, "hipErrorInvalidValue"},
    {2, "hipErrorOutOfMemory"},
    {3, "hipErrorNotInitialized"},
    {4, "hipErrorDeinitialized"},
    {9, "hipErrorInvalidConfiguration"},
    {17, "hipErrorInvalidDevicePointer"},
    {21, "hipErrorInvalidMemcpyDirection"},
    {35, "hipErrorInsufficientDriver"},
    {53, "hipErrorPriorLaunchFailure"},
    {98, "hipErrorInvalidDeviceFunction"},
    {100, "hipErrorNoDevice"},
    {101, "hipErrorInvalidDevice"},
    {200, "hipErrorInvalidImage"},
    {201, "hipErrorInvalidContext"},
    {209, "hipErrorNoBinaryForGpu"},
    {214, "hipErrorECCNotCorrectable"},
    {218, "hipErrorInvalidKernelFile"},
    {301, "hipErrorFileNotFound"},
    {302, "hipErrorSharedObjectSymbolNotFound"},
    {303, "hipErrorSharedObjectInitFailed"},
    {304, "hipErrorOperatingSystem"},
    {400, "hipErrorInvalidHandle"},
    {401, "hipErrorIllegalState"},
    {500, "hipErrorNotFound"},
    {600, "hipErrorNotReady"},
    {700, "hipErrorIllegalAddress"},
    {701, "hipErrorLaunchOutOfResources"},
    {702, "hipErrorLaunchTimeOut"},
    {704, "hipErrorPeerAccessAlreadyEnabled"},
    {705, "hipErrorPeerAccessNotEnabled"},
    {708, "hipErrorSetOnActiveProcess"},
    {709, "hipErrorContextIsDestroyed"},
    {710, "hipErrorAssert"},
    {712, "hipErrorHostMemoryAlreadyRegistered"},
    {713, "hipErrorHostMemoryNotRegistered"},
    {719, "hipErrorLaunchFailure"},
    {720, "hipErrorCooperativeLaunchTooLarge"},
    {801, "hipErrorNotSupported"},
    {900, "hipErrorStreamCaptureUnsupported"},
    {901, "hipErrorStreamCaptureInvalidated"},
    {902, "hipErrorStreamCaptureMerge"},
    {903, "hipErrorStreamCaptureUnmatched"},
    {904, "hipErrorStreamCaptureUnjoined"},
    {905, "hipErrorStreamCaptureIsolation"},
    {906, "hipErrorStreamCaptureImplicit"},
    {907, "hipErrorCapturedEvent"},
    {908, "hipErrorStreamCaptureWrongThread"},
    {910, "hipErrorGraphExecUpdateFailure"},
    {999, "hipErrorUnknown"},
    {1052, "hipErrorRuntimeMemory"},
    {1053, "hipErrorRuntimeOther"},
};

// What the user should do about a failed call, by code.
const char* Advice(hipError_t result) {
  switch (static_cast<int>(result)) {
    case 2: return "free buffers or allocate less";
    case 3:
    case 4: return "HIP was not initialised or was already shut down (at process exit)";
    case 35: return "the ROCm kernel driver (amdgpu) is older than this HIP library needs; update ROCm";
    case 100:
    case 101:
      return "no usable AMD GPU: check rocminfo, that the user may open /dev/kfd and /dev/dri, "
             "HIP_VISIBLE_DEVICES and the device index";
    case 200:
    case 209:
    case 218:
      return "the executable has no code object this GPU can load; recompile the module with --rocm-arch naming "
             "this GPU's architecture";
    case 700:
    case 719:
    case 710:
      return "a kernel faulted (a compiler bug, or bindings shorter than the kernel expects); the GPU is unusable "
             "in this process from now on: restart it (its other drivers keep working)";
    case 701:
      return "the launch needs more registers or LDS than the GPU has for this block size; compile with a smaller "
             "workgroup size";
    case 999: return "HIP reported an unknown error; check dmesg and rocminfo";
    default: return "see the HIP documentation of this call and code";
  }
}

}  // namespace

StatusOr<const HipFunctions*> LoadHipLibrary() {
  static HipFunctions functions;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* overridden = std::getenv("STRATA_ROCM_LIBRARY");
    const std::vector<std::string> names = overridden && *overridden
                                               ? std::vector<std::string>{overridden}
                                               : std::vector<std::string>{"libamdhip64.so.6", "libamdhip64.so.5"};
    // Never closed: HIP objects may be destroyed during static destruction.
    void* library = nullptr;
    std::string errors;
    for (const std::string& name : names) {
      library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (library) {
        functions.library = name;
        break;
      }
      const char* error = dlerror();
      errors += StrCat(errors.empty() ? "" : "; ", error ? error : name + ": unknown error");
    }
    if (!library) {
      status = UnavailableError("rocm: the HIP library could not be opened (", errors,
                                "); install ROCm's HIP runtime (libamdhip64), or set STRATA_ROCM_LIBRARY to it");
      return;
    }
#define STRATA_HIP_LOAD(name, type)                                                                         \
  functions.name = reinterpret_cast<type>(dlsym(library, #name));                                            \
  if (!functions.name) {                                                                                    \
    status = UnavailableError("rocm: ", functions.library, " does not export " #name,                       \
                              "; the HIP library is too old for this runtime (it needs HIP 5.2 or later)"); \
    return;                                                                                                 \
  }
    STRATA_HIP_FUNCTIONS(STRATA_HIP_LOAD)
#undef STRATA_HIP_LOAD
    hipError_t result = functions.hipInit(0);
    int count = 0;
    // With no GPU, hipInit returns hipErrorInvalidDevice or hipErrorNoDevice
    // (HIP 5.2 on a machine without /dev/kfd: 101), and hipGetDeviceCount 0.
    if (result == hipErrorNoDevice || result == hipErrorInvalidDevice ||
        (result == hipSuccess && functions.hipGetDeviceCount(&count) == hipSuccess && count == 0)) {
      status = UnavailableError("rocm: ", functions.library, " found no AMD GPU (hipInit: ", HipResultName(result),
                                "); check rocminfo, access to /dev/kfd and /dev/dri, and HIP_VISIBLE_DEVICES");
      return;
    }
    if (result != hipSuccess) {
      status = HipError(result, StrCat("rocm: hipInit (", functions.library, ")"));
      // Whatever hipInit refused, this driver cannot run here.
      if (status.code() != StatusCode::kUnavailable) status = UnavailableError(status.message());
      return;
    }
    result = functions.hipDriverGetVersion(&functions.driver_version);
    if (result != hipSuccess) status = UnavailableError(HipError(result, "rocm: hipDriverGetVersion").message());
  });
  if (!status.ok()) return status;
  return &functions;
}

std::string HipResultName(hipError_t result) {
  for (const ResultName& entry : kResultNames) {
    if (entry.value == static_cast<int>(result)) return StrCat(entry.name, " (", entry.value, ")");
  }
  return StrCat("unknown hipError_t (", static_cast<int>(result), ")");
}

bool IsStickyError(hipError_t result) {
  switch (static_cast<int>(result)) {
    case 700:  // hipErrorIllegalAddress
    case 702:  // hipErrorLaunchTimeOut
    case 710:  // hipErrorAssert
    case 719:  // hipErrorLaunchFailure
    case 214:  // hipErrorECCNotCorrectable
      return true;
    default: return false;
  }
}

Status HipError(hipError_t result, std::string_view what) {
  std::string message = StrCat(what, ": ", HipResultName(result), "; ", Advice(result));
  switch (static_cast<int>(result)) {
    case 2: return ResourceExhaustedError(message);
    case 3:
    case 4:
    case 35:
    case 100:
    case 101: return UnavailableError(message);
    case 200:
    case 218: return InvalidArgumentError(message);
    case 209: return IncompatibleError(message);
    default: return IsStickyError(result) ? UnavailableError(message) : InternalError(message);
  }
}

std::string HipVersionString(int version) { return StrCat(version / 10000000, ".", version / 100000 % 100); }

}  // namespace strata::rocm
