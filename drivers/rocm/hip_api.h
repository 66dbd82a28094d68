// HIP as the ROCm driver reaches it: libamdhip64.so.6, else libamdhip64.so.5
// (or the file STRATA_ROCM_LIBRARY names, which tests use), opened at run
// time with dlopen, every entry point taken with dlsym, and hipInit called
// once. hip_runtime_api.h is included for its types only (Debian's
// libamdhip64-dev, HIP 5.2): nothing links against libamdhip64, so a runtime
// built with the ROCm driver starts and runs its other drivers on a machine
// without ROCm (tests/hal checks the binaries' NEEDED entries).
//
// Every function used is in the ABI that HIP 5 and HIP 6 libraries share;
// where HIP 6 changed a struct (hipDeviceProp_t), the unversioned symbol
// (hipGetDeviceProperties) still fills the HIP 5 layout, which is what is
// read here.
//
// Errors: HipError makes every failed call a Status naming the call, the
// code's name and number (hipGetErrorName) and what to do.
//
// Thread safety: LoadHipLibrary is thread-safe (the library is opened and
// initialised once per process and never closed); the table is immutable
// once filled.
#pragma once

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>

#include <string>
#include <string_view>

#include "vm/base/status.h"

namespace strata::rocm {

// hipMalloc, hipHostMalloc and hipMallocManaged are overloaded in C++: their
// C functions' types, spelt out.
using HipMallocFunction = hipError_t (*)(void**, size_t);
using HipMallocFlagsFunction = hipError_t (*)(void**, size_t, unsigned);

// Every function the driver calls, with its hip_runtime_api.h prototype.
#define STRATA_HIP_FUNCTIONS(X)                                               \
  X(hipInit, decltype(&::hipInit))                                            \
  X(hipDriverGetVersion, decltype(&::hipDriverGetVersion))                    \
  X(hipGetDeviceCount, decltype(&::hipGetDeviceCount))                        \
  X(hipDeviceGetName, decltype(&::hipDeviceGetName))                          \
  X(hipDeviceTotalMem, decltype(&::hipDeviceTotalMem))                        \
  X(hipDeviceGetAttribute, decltype(&::hipDeviceGetAttribute))                \
  X(hipGetDeviceProperties, decltype(&::hipGetDeviceProperties))              \
  X(hipSetDevice, decltype(&::hipSetDevice))                                  \
  X(hipStreamCreateWithFlags, decltype(&::hipStreamCreateWithFlags))          \
  X(hipStreamDestroy, decltype(&::hipStreamDestroy))                          \
  X(hipStreamSynchronize, decltype(&::hipStreamSynchronize))                  \
  X(hipMalloc, HipMallocFunction)                                             \
  X(hipFree, decltype(&::hipFree))                                            \
  X(hipMallocManaged, HipMallocFlagsFunction)                               \
  X(hipHostMalloc, HipMallocFlagsFunction)                                  \
  X(hipHostGetDevicePointer, decltype(&::hipHostGetDevicePointer))            \
  X(hipHostFree, decltype(&::hipHostFree))                                    \
  X(hipHostRegister, decltype(&::hipHostRegister))                            \
  X(hipHostUnregister, decltype(&::hipHostUnregister))                        \
  X(hipMemcpyAsync, decltype(&::hipMemcpyAsync))                              \
  X(hipMemsetD8Async, decltype(&::hipMemsetD8Async))                          \
  X(hipMemsetD32Async, decltype(&::hipMemsetD32Async))                        \
  X(hipModuleLoadData, decltype(&::hipModuleLoadData))                        \
  X(hipModuleUnload, decltype(&::hipModuleUnload))                            \
  X(hipModuleGetFunction, decltype(&::hipModuleGetFunction))                  \
  X(hipFuncGetAttribute, decltype(&::hipFuncGetAttribute))                    \
  X(hipModuleLaunchKernel, decltype(&::hipModuleLaunchKernel))                \
  X(hipStreamBeginCapture, decltype(&::hipStreamBeginCapture))                \
  X(hipStreamEndCapture, decltype(&::hipStreamEndCapture))                    \
  X(hipGraphInstantiate, decltype(&::hipGraphInstantiate))                    \
  X(hipGraphLaunch, decltype(&::hipGraphLaunch))                              \
  X(hipGraphDestroy, decltype(&::hipGraphDestroy))                            \
  X(hipGraphExecDestroy, decltype(&::hipGraphExecDestroy))                    \
  X(hipEventCreateWithFlags, decltype(&::hipEventCreateWithFlags))            \
  X(hipEventRecord, decltype(&::hipEventRecord))                              \
  X(hipEventSynchronize, decltype(&::hipEventSynchronize))                    \
  X(hipEventDestroy, decltype(&::hipEventDestroy))                            \
  X(hipGetErrorName, decltype(&::hipGetErrorName))

#define STRATA_HIP_DECLARE(name, type) type name = nullptr;
struct HipFunctions {
  STRATA_HIP_FUNCTIONS(STRATA_HIP_DECLARE)
  // What hipDriverGetVersion reported: 50221153 for HIP 5.2.21153.
  int driver_version = 0;
  // The file that was opened.
  std::string library;
};
#undef STRATA_HIP_DECLARE

// Opens the library ($STRATA_ROCM_LIBRARY when set, else libamdhip64.so.6,
// then libamdhip64.so.5), resolves every function and calls hipInit, once per
// process. UNAVAILABLE, saying which and what to do, when no library can be
// opened, it lacks a function, or it finds no AMD GPU.
StatusOr<const HipFunctions*> LoadHipLibrary();

// "hipErrorOutOfMemory (2)"; names of codes this build's header lacks come
// from the library when it is loaded, else "unknown hipError_t (N)".
std::string HipResultName(hipError_t result);

// Whether `result` leaves the device unusable in this process (a kernel
// fault: illegal address, launch failure, assert).
bool IsStickyError(hipError_t result);

// The error for a failed call: "what: hipErrorX (N); advice", with codes
// as CUDA's driver maps them (cuda_api.h).
Status HipError(hipError_t result, std::string_view what);

// "5.2" for a hipDriverGetVersion value of 50221153.
std::string HipVersionString(int version);

}  // namespace strata::rocm
