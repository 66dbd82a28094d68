// The CUDA driver: "cuda", a HAL device on one NVIDIA GPU through the CUDA
// driver API (libcuda.so.1, opened at run time: cuda_api.h).
//
// Device specs: `cuda` (device 0), `cuda?device=1` or `cuda://1` (by index
// among the devices the driver lists); graphs=0 replays every command buffer
// operation by operation instead of as CUDA graphs from its second
// submission on (cuda_command_buffer.h).
//
// The queue: semaphores are host timelines (hal::HostSemaphore), and
// submissions go through hal::ThreadedHostQueue: when a submission's waits
// are met, the device's queue thread replays its command buffers on the
// device's stream (one CUDA stream per HAL queue), synchronizes, reads the
// check words, and signals or fails the signal semaphores. One submission is
// on the GPU at a time.
//
// Errors: no libcuda, the CUDA toolkit's stub library instead of the NVIDIA
// driver, or no device: UNAVAILABLE with a line saying which (the
// conformance suite and run-module skip the driver with it); an index that
// matches no device: NOT_FOUND, listing the devices; a kernel fault fails
// the submission running then, every later one of the device and every new
// CUDA device of the process with UNAVAILABLE (the CUDA driver allows no
// recovery short of a new process), while the other drivers go on.
//
// Thread safety: see hal/device.h.
#pragma once

#include <memory>

#include "drivers/cuda/cuda_buffer.h"
#include "drivers/cuda/cuda_context.h"
#include "hal/device.h"
#include "hal/driver_registry.h"
#include "hal/host_queue.h"

namespace strata::cuda {

// Runs ready submissions on a thread of its own.
class CudaQueue final : public hal::ThreadedHostQueue {
 public:
  explicit CudaQueue(std::string device_name) : ThreadedHostQueue(std::move(device_name)) {}

 protected:
  Status Execute(hal::CommandBuffer& command_buffer, Tracer* tracer,
                 std::chrono::steady_clock::time_point deadline) override;
};

class CudaDevice final : public hal::Device {
 public:
  CudaDevice(hal::DeviceInfo info, std::shared_ptr<CudaContext> context, Ref<CudaAllocator> allocator,
             std::shared_ptr<CudaQueue> queue, bool graphs);
  ~CudaDevice() override;

  StatusOr<Ref<hal::CommandBuffer>> CreateCommandBuffer() override;
  StatusOr<Ref<hal::Semaphore>> CreateSemaphore(uint64_t initial_value) override;

  const CudaContext& context() const { return *context_; }

 protected:
  const hal::DriverFamily* family() const override { return &kCudaFamily; }
  StatusOr<Ref<hal::Executable>> PrepareExecutableImpl(const hal::ExecutableParams& params) override;
  Status QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits, std::span<const hal::SemaphoreValue> signals,
                          std::span<hal::CommandBuffer* const> command_buffers,
                          std::chrono::steady_clock::time_point deadline) override;

 private:
  std::shared_ptr<CudaContext> context_;
  Ref<CudaAllocator> allocator_;
  std::shared_ptr<CudaQueue> queue_;
  const bool graphs_;
};

// Registration, called by drivers/registry.cc.
Status RegisterCudaDriver(hal::DriverRegistry& registry);

}  // namespace strata::cuda
