// CudaContext: one CUDA device as a HAL device sees it: its primary context
// (retained here, released when the last user goes), the stream its queue
// runs on, and what the driver learnt about the device (name, compute
// capability, limits, memory features). Every object the device creates
// keeps it alive through a shared_ptr, so buffers, executables and command
// buffers outlive the HAL device as the HAL requires.
//
// The primary context is the one the CUDA runtime uses too, so programs that
// mix Strata with CUDA libraries share memory and modules with them. It must
// be current on every thread that calls the driver API: MakeCurrent, called
// at the start of every driver entry point that reaches CUDA, makes it so
// (cuCtxSetCurrent, a thread-local store in the driver).
//
// A kernel fault (illegal address, launch failure, ...) leaves a CUDA context
// unusable ("sticky" errors): the context records the first one, and every
// later submission fails at once with it. The CUDA driver gives no way back
// within the process: new devices of the GPU fail to start with the same
// error (cuDevicePrimaryCtxRetain returns it), while the other drivers go on.
//
// Thread safety: immutable after creation, except the sticky failure, which
// is under a mutex. The stream is used by the device's queue thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drivers/cuda/cuda_api.h"

namespace strata::cuda {

class CudaContext {
 public:
  // `device` is the index among the CUDA devices the driver lists ("" is
  // 0). UNAVAILABLE when there is no device; NOT_FOUND when the index is
  // not one of them (the message lists them).
  static StatusOr<std::shared_ptr<CudaContext>> Create(const CudaFunctions& cu, const std::string& device);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  const CudaFunctions& cu() const { return cu_; }
  CUdevice device() const { return device_; }
  CUstream stream() const { return stream_; }
  // Makes the primary context current on the calling thread.
  Status MakeCurrent() const;

  // Compute capability as major * 10 + minor: 90 for sm_90.
  uint32_t arch() const { return arch_; }
  std::string name() const { return name_; }
  uint64_t total_memory() const { return total_memory_; }
  int max_threads_per_block() const { return max_threads_per_block_; }
  const int* max_block_dim() const { return max_block_dim_; }
  const int* max_grid_dim() const { return max_grid_dim_; }
  // Static shared memory a block may declare.
  int max_shared_memory_per_block() const { return max_shared_memory_per_block_; }
  int multiprocessors() const { return multiprocessors_; }
  // Managed memory the host and the device may touch at once: backs the
  // device-local, host-visible heap.
  bool concurrent_managed_access() const { return concurrent_managed_access_; }
  // cuMemHostRegister's READ_ONLY flag works, so read-only host memory can
  // be imported.
  bool read_only_host_register() const { return read_only_host_register_; }
  // Registered host memory has the same address on the device.
  bool host_pointer_for_registered_memory() const { return host_pointer_for_registered_memory_; }

  // "NVIDIA H100 80GB HBM3, sm_90, 132 multiprocessors, 79.1 GiB, CUDA 13.0".
  std::string Describe() const;
  // Lines for `run-module --list-devices`.
  std::vector<std::string> Details() const;

  // The first sticky error of the context (OK while there is none); see
  // above. Fail records `status` unless one is recorded already.
  Status failure() const;
  void Fail(const Status& status);

 private:
  explicit CudaContext(const CudaFunctions& cu) : cu_(cu) {}

  const CudaFunctions& cu_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  uint32_t arch_ = 0;
  std::string name_;
  uint64_t total_memory_ = 0;
  int max_threads_per_block_ = 0;
  int max_block_dim_[3] = {0, 0, 0};
  int max_grid_dim_[3] = {0, 0, 0};
  int max_shared_memory_per_block_ = 0;
  int max_shared_memory_per_block_optin_ = 0;
  int multiprocessors_ = 0;
  bool concurrent_managed_access_ = false;
  bool read_only_host_register_ = false;
  bool host_pointer_for_registered_memory_ = false;
  // Every device the driver lists ("0: NVIDIA H100 80GB HBM3, sm_90"), and
  // which of them this is.
  std::vector<std::string> device_list_;
  size_t device_index_ = 0;

  mutable std::mutex failure_mutex_;
  Status failure_;
};

}  // namespace strata::cuda
