// The CUDA driver API as the driver reaches it: libcuda.so.1 opened at run
// time with dlopen (or the file STRATA_CUDA_LIBRARY names, which tests use),
// every entry point taken with dlsym, and cuInit called once. cuda.h is
// included for its types only: nothing links against libcuda, so a runtime
// built with the CUDA driver starts and runs its other drivers on a machine
// without an NVIDIA driver (tests/hal checks the binaries' NEEDED entries).
//
// The table below lists functions by their cuda.h names; cuda.h defines many
// of those as macros for versioned symbols (cuMemAlloc is cuMemAlloc_v2,
// cuStreamDestroy is cuStreamDestroy_v2), so both the member and the symbol
// dlsym looks up are the versioned ones, with the prototype cuda.h declares
// for them.
//
// Errors: cuGetErrorName gives nothing with the toolkit's stub library, so
// CuResultName maps codes to names itself, and CuError makes every failed
// call a Status naming the call, the code's name and number, and what to do.
//
// Thread safety: LoadCudaLibrary is thread-safe (the library is opened and
// initialised once per process and never closed); the table is immutable
// once filled.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

#include "vm/base/status.h"

namespace strata::cuda {

// Every function the driver calls.
#define STRATA_CUDA_FUNCTIONS(X)  \
  X(cuInit)                       \
  X(cuDriverGetVersion)           \
  X(cuDeviceGetCount)             \
  X(cuDeviceGet)                  \
  X(cuDeviceGetName)              \
  X(cuDeviceGetAttribute)         \
  X(cuDeviceTotalMem)             \
  X(cuDevicePrimaryCtxRetain)     \
  X(cuDevicePrimaryCtxRelease)    \
  X(cuCtxSetCurrent)              \
  X(cuStreamCreate)               \
  X(cuStreamDestroy)              \
  X(cuStreamSynchronize)          \
  X(cuMemAlloc)                   \
  X(cuMemFree)                    \
  X(cuMemAllocManaged)            \
  X(cuMemHostAlloc)               \
  X(cuMemHostGetDevicePointer)    \
  X(cuMemFreeHost)                \
  X(cuMemHostRegister)            \
  X(cuMemHostUnregister)          \
  X(cuMemcpyAsync)                \
  X(cuMemsetD8Async)              \
  X(cuMemsetD32Async)             \
  X(cuModuleLoadDataEx)           \
  X(cuModuleUnload)               \
  X(cuModuleGetFunction)          \
  X(cuFuncGetAttribute)           \
  X(cuFuncSetAttribute)           \
  X(cuLaunchKernel)               \
  X(cuStreamBeginCapture)         \
  X(cuStreamEndCapture)           \
  X(cuGraphInstantiate)           \
  X(cuGraphLaunch)                \
  X(cuGraphDestroy)               \
  X(cuGraphExecDestroy)           \
  X(cuEventCreate)                \
  X(cuEventRecord)                \
  X(cuEventSynchronize)           \
  X(cuEventDestroy)

// Functions of newer drivers, null where the library lacks them.
#define STRATA_CUDA_OPTIONAL_FUNCTIONS(X) \
  X(cuFuncGetParamInfo)

#define STRATA_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
struct CudaFunctions {
  STRATA_CUDA_FUNCTIONS(STRATA_CUDA_DECLARE)
  STRATA_CUDA_OPTIONAL_FUNCTIONS(STRATA_CUDA_DECLARE)
  // What cuDriverGetVersion reported: 12040 for CUDA 12.4.
  int driver_version = 0;
};
#undef STRATA_CUDA_DECLARE

// The library's file name, as LoadCudaLibrary opens it: $STRATA_CUDA_LIBRARY
// when set, else libcuda.so.1.
std::string CudaLibraryName();

// Opens the library, resolves every function and calls cuInit, once per
// process. UNAVAILABLE, saying which and what to do, when the library cannot
// be opened, lacks a function, is the CUDA toolkit's stub library (cuInit:
// CUDA_ERROR_STUB_LIBRARY) or finds no device or no working driver.
StatusOr<const CudaFunctions*> LoadCudaLibrary();

// "CUDA_ERROR_OUT_OF_MEMORY (2)"; "unknown CUresult (12345)".
std::string CuResultName(CUresult result);

// Whether `result` leaves the context unusable (a kernel fault: illegal
// address, illegal instruction, launch failure, ...): every later CUDA call
// of the process fails too, new contexts included (seen on an H100 and an
// H200: after CUDA_ERROR_ILLEGAL_ADDRESS, retaining the primary context
// again, with or without cuDevicePrimaryCtxReset, returns the same error).
bool IsStickyError(CUresult result);

// The error for a failed call: "what: CUDA_ERROR_X (N); advice". Out of
// memory is RESOURCE_EXHAUSTED; sticky errors and a missing device or
// driver are UNAVAILABLE; invalid or unsupported images INVALID_ARGUMENT or
// INCOMPATIBLE; anything else INTERNAL.
Status CuError(CUresult result, std::string_view what);

// "13.0" for a cuDriverGetVersion value of 13000.
std::string CudaVersionString(int version);

}  // namespace strata::cuda
