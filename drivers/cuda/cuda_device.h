// The CUDA driver: "cuda", a HAL device on one NVIDIA GPU through the CUDA
// driver API (libcuda.so.1, opened at run time: cuda_api.h), on the shared
// core of the stream drivers (drivers/stream: buffers, command buffers
// replayed as CUDA graphs, the queue).
//
// CudaContext is the device as that core reaches it: its primary context
// (retained here, released when the last user goes), the stream its queue
// runs on, and the CUDA calls behind every StreamContext operation. The
// primary context is the one the CUDA runtime uses too, so programs that mix
// Strata with CUDA libraries share memory and modules with them; it is made
// current (cuCtxSetCurrent, a thread-local store in the driver) at the start
// of every entry point that reaches CUDA.
//
// Device specs: `cuda` (device 0), `cuda?device=1` or `cuda://1`;
// graphs=0, pipelined=0 (stream_device.h).
//
// Errors: no libcuda, the CUDA toolkit's stub library instead of the NVIDIA
// driver, or no device: UNAVAILABLE with a line saying which (the
// conformance suite and run-module skip the driver with it); an index that
// matches no device: NOT_FOUND, listing the devices; a kernel fault fails
// the submission running then, every later one of the device and every new
// CUDA device of the process with UNAVAILABLE (seen on an H100 and an H200:
// after CUDA_ERROR_ILLEGAL_ADDRESS, retaining the primary context again,
// with or without cuDevicePrimaryCtxReset, returns the same error), while
// the other drivers go on.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "drivers/cuda/cuda_api.h"
#include "drivers/stream/stream_context.h"
#include "hal/driver_registry.h"

namespace strata::cuda {

extern const hal::DriverFamily kCudaFamily;

class CudaContext final : public stream::StreamContext {
 public:
  // `device` is the index among the CUDA devices the driver lists ("" is
  // 0). UNAVAILABLE when there is no device; NOT_FOUND when the index is
  // not one of them (the message lists them).
  static StatusOr<std::shared_ptr<CudaContext>> Create(const CudaFunctions& cu, const std::string& device);
  ~CudaContext() override;

  const CudaFunctions& cu() const { return cu_; }
  // Compute capability as major * 10 + minor: 90 for sm_90.
  uint32_t compute_capability() const { return compute_capability_; }
  // cuMemHostRegister's READ_ONLY flag works, so read-only host memory can
  // be imported.
  bool read_only_host_register() const { return read_only_host_register_; }

  std::string Describe() const override;
  std::vector<std::string> Details() const override;
  const char* executable_format() const override;
  Status MakeCurrent() const override;

  StatusOr<stream::DevicePtr> AllocateDevice(uint64_t size) const override;
  StatusOr<stream::DevicePtr> AllocateManaged(uint64_t size) const override;
  StatusOr<stream::PinnedMemory> AllocatePinned(uint64_t size) const override;
  void FreeDevice(stream::DevicePtr address) const override;
  void FreePinned(void* host) const override;
  StatusOr<bool> RegisterHost(void* host, uint64_t size, bool read_only) const override;
  void UnregisterHost(void* host) const override;

  Status MemsetD8(stream::DevicePtr target, uint8_t value, uint64_t count) const override;
  Status MemsetD32(stream::DevicePtr target, uint32_t value, uint64_t count) const override;
  Status Copy(stream::DevicePtr target, stream::DevicePtr source, uint64_t length) const override;
  Status Launch(stream::FunctionHandle function, const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                void** parameters) const override;
  Status Synchronize(bool* sticky) const override;

  bool BeginCapture() const override;
  stream::GraphHandle EndCapture(bool keep) const override;
  Status LaunchGraph(stream::GraphHandle graph) const override;
  void DestroyGraph(stream::GraphHandle graph) const override;
  StatusOr<stream::EventHandle> CreateEvent() const override;
  Status RecordEvent(stream::EventHandle event) const override;
  Status WaitEvent(stream::EventHandle event, bool* sticky) const override;
  void DestroyEvent(stream::EventHandle event) const override;

  StatusOr<Ref<stream::StreamExecutable>> LoadExecutable(const hal::ExecutableParams& params) override;
  void UnloadModule(stream::ModuleHandle module) const override;

 private:
  explicit CudaContext(const CudaFunctions& cu) : StreamContext(&kCudaFamily), cu_(cu) {}
  CUstream cu_stream() const { return static_cast<CUstream>(stream_); }

  const CudaFunctions& cu_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  uint32_t compute_capability_ = 0;
  int max_shared_memory_per_block_optin_ = 0;
  bool read_only_host_register_ = false;
  // Every device the driver lists ("0: NVIDIA H100 80GB HBM3, sm_90"), and
  // which of them this is.
  std::vector<std::string> device_list_;
  size_t device_index_ = 0;
};

// Registration, called by drivers/registry.cc.
Status RegisterCudaDriver(hal::DriverRegistry& registry);

}  // namespace strata::cuda
