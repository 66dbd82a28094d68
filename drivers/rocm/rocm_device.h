// The ROCm driver: "rocm", a HAL device on one AMD GPU through HIP
// (libamdhip64, opened at run time: hip_api.h), on the shared core of the
// stream drivers (drivers/stream: buffers, command buffers replayed as HIP
// graphs, the queue).
//
// RocmContext is the device as that core reaches it: its index (made
// current with hipSetDevice, a thread-local setting of HIP, at the start of
// every entry point that reaches HIP), the stream its queue runs on, and the
// HIP calls behind every StreamContext operation. Its architecture is
// gcnArchName ("gfx90a:sramecc+:xnack-"), whose name before the features
// picks the executable's code object (rocm_executable.h).
//
// Device specs: `rocm` (device 0), `rocm?device=1` or `rocm://1`; graphs=0, pipelined=0
// (stream_device.h).
//
// Errors: no HIP library, or one that finds no AMD GPU: UNAVAILABLE with a
// line saying which (the conformance suite and run-module skip the driver
// with it); an index that matches no device: NOT_FOUND, listing the devices;
// no code object for the device's architecture: INCOMPATIBLE, naming those
// there are; a kernel fault fails the submission running then and every
// later one of the device with UNAVAILABLE (ROCm's runtime may instead end
// the process on a GPU memory fault, as it does by default: that is outside
// this driver's reach).
//
// This driver has not run on AMD hardware: what it does without a GPU (the
// library absent, or present with no device) is tested; docs/hal.md says
// what to run first on a GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "drivers/rocm/hip_api.h"
#include "drivers/stream/stream_context.h"
#include "hal/driver_registry.h"

namespace strata::rocm {

extern const hal::DriverFamily kRocmFamily;

class RocmContext final : public stream::StreamContext {
 public:
  // `device` is the index among the devices HIP lists ("" is 0).
  static StatusOr<std::shared_ptr<RocmContext>> Create(const HipFunctions& hip, const std::string& device);
  ~RocmContext() override;

  const HipFunctions& hip() const { return hip_; }

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
  explicit RocmContext(const HipFunctions& hip) : StreamContext(&kRocmFamily), hip_(hip) {}
  hipStream_t hip_stream() const { return static_cast<hipStream_t>(stream_); }

  const HipFunctions& hip_;
  int device_ = 0;
  // Every device HIP lists ("0: AMD Instinct MI250X, gfx90a"), and which of
  // them this is.
  std::vector<std::string> device_list_;
  size_t device_index_ = 0;
};

// Registration, called by drivers/registry.cc.
Status RegisterRocmDriver(hal::DriverRegistry& registry);

}  // namespace strata::rocm
