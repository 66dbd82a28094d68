// The shared core of the drivers on a CUDA-style GPU API: the CUDA driver API
// (drivers/cuda) and HIP (drivers/rocm). Both offer the same model: a device
// with a current context per thread, device memory, pinned and managed host
// memory, host-memory registration, streams that run copies, fills and
// kernel launches in order, modules of kernels loaded from an image, and
// stream capture into graphs. This core holds everything a HAL device does
// with that model once (buffers and heaps, the import registry, command
// buffers lowered to stream operations and replayed as graphs, checks,
// sticky faults, the queue); each driver adds how its library is opened,
// how its errors read, and how its executables are parsed and loaded.
//
// StreamContext: one GPU as a HAL device of such a driver sees it. The
// driver subclasses it with the calls of its API, each returning a Status
// that names the call and the API's error ("cuMemAlloc_v2:
// CUDA_ERROR_OUT_OF_MEMORY (2); free buffers or allocate less"), to which
// the shared code adds what it was doing. Every object the device creates
// keeps the context alive through a shared_ptr, so buffers, executables and
// command buffers outlive the HAL device as the HAL requires.
//
// A kernel fault (illegal address, launch failure, ...) leaves the context
// unusable ("sticky" errors, in CUDA and HIP alike): the context records the
// first one, and every later submission fails at once with it, while the
// other drivers go on.
//
// Thread safety: immutable after creation, except the sticky failure, which
// is under a mutex. The stream is used by the device's queue thread only;
// MakeCurrent is called at the start of every entry point that reaches the
// API, on whatever thread it runs.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hal/allocator.h"
#include "hal/executable.h"
#include "vm/base/status.h"

namespace strata::stream {

// A device address (CUdeviceptr; a hipDeviceptr_t as an integer).
using DevicePtr = uint64_t;
// The API's handles, opaque here: its stream, module, kernel function and
// instantiated graph.
using StreamHandle = void*;
using ModuleHandle = void*;
using FunctionHandle = void*;
using GraphHandle = void*;
using EventHandle = void*;

// Pinned host memory mapped for the device: its two addresses.
struct PinnedMemory {
  uint8_t* host = nullptr;
  DevicePtr device = 0;
};

// What the driver learnt about the device when it opened it.
struct DeviceFacts {
  std::string name;  // "NVIDIA H100 80GB HBM3", "AMD Instinct MI250X"
  std::string arch;  // "sm_90", "gfx90a"
  uint64_t total_memory = 0;
  uint32_t max_threads_per_block = 0;
  uint32_t max_block_dim[3] = {0, 0, 0};
  uint32_t max_grid_dim[3] = {0, 0, 0};
  // Static shared memory (LDS) a block may declare.
  uint32_t max_shared_memory_per_block = 0;
  // Shared memory a block may have once its kernel opts in (CUDA's dynamic
  // shared memory past the static limit); the static limit where the API
  // has no such step.
  uint32_t max_shared_memory_per_block_optin = 0;
  uint32_t multiprocessors = 0;  // SMs, CUs
  // Managed memory the host and the device may touch at once: backs the
  // device-local, host-visible heap (stream_buffer.h).
  bool concurrent_managed_access = false;
  // Registered host memory has the same address on the device, so caller
  // memory can be imported in place.
  bool host_pointer_for_registered_memory = false;
};

class StreamExecutable;

class StreamContext : public std::enable_shared_from_this<StreamContext> {
 public:
  virtual ~StreamContext() = default;
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;

  // The driver's family: its buffers, executables and command buffers mix
  // only with each other.
  const hal::DriverFamily* family() const { return family_; }
  const DeviceFacts& facts() const { return facts_; }
  const std::string& name() const { return facts_.name; }
  StreamHandle stream() const { return stream_; }

  // "NVIDIA H100 80GB HBM3, sm_90, 132 multiprocessors, 79.1 GiB, CUDA 13.0".
  virtual std::string Describe() const = 0;
  // Lines for `run-module --list-devices`.
  virtual std::vector<std::string> Details() const = 0;
  // The executable format the device runs ("cuda-ptx", "rocm-hsaco").
  virtual const char* executable_format() const = 0;

  // Makes the device current on the calling thread.
  virtual Status MakeCurrent() const = 0;

  // Memory. The frees drop errors: a buffer released at process exit may
  // outlive the driver.
  virtual StatusOr<DevicePtr> AllocateDevice(uint64_t size) const = 0;
  virtual StatusOr<DevicePtr> AllocateManaged(uint64_t size) const = 0;
  virtual StatusOr<PinnedMemory> AllocatePinned(uint64_t size) const = 0;
  virtual void FreeDevice(DevicePtr address) const = 0;  // device and managed memory
  virtual void FreePinned(void* host) const = 0;
  // Registers [host, host + size) (whole pages) for the device, read-only
  // where `read_only` and the device allows it; false when the range was
  // registered already by someone else (a library of the program), which
  // leaves it usable, and theirs to unregister.
  virtual StatusOr<bool> RegisterHost(void* host, uint64_t size, bool read_only) const = 0;
  virtual void UnregisterHost(void* host) const = 0;

  // Operations on the stream, in order.
  virtual Status MemsetD8(DevicePtr target, uint8_t value, uint64_t count) const = 0;
  virtual Status MemsetD32(DevicePtr target, uint32_t value, uint64_t count) const = 0;
  virtual Status Copy(DevicePtr target, DevicePtr source, uint64_t length) const = 0;
  // `shared_bytes`: the kernel's dynamic shared memory (0: none).
  virtual Status Launch(FunctionHandle function, const uint32_t grid[3], const uint32_t block[3],
                        uint32_t shared_bytes, void** parameters) const = 0;
  // Waits for the stream; on failure, `sticky` says whether the context is
  // unusable from now on.
  virtual Status Synchronize(bool* sticky) const = 0;

  // Graphs: BeginCapture starts capturing the stream (false when it
  // cannot); EndCapture stops it and, when `keep`, instantiates what was
  // captured (null when that fails: the operations cannot run as a graph).
  virtual bool BeginCapture() const = 0;
  virtual GraphHandle EndCapture(bool keep) const = 0;
  virtual Status LaunchGraph(GraphHandle graph) const = 0;
  virtual void DestroyGraph(GraphHandle graph) const = 0;

  // Events (without timing), for a queue that launches work without
  // waiting for it: RecordEvent marks the stream's work so far, WaitEvent
  // blocks until that work has run (on failure, `sticky` as for
  // Synchronize). DestroyEvent drops errors.
  virtual StatusOr<EventHandle> CreateEvent() const = 0;
  virtual Status RecordEvent(EventHandle event) const = 0;
  virtual Status WaitEvent(EventHandle event, bool* sticky) const = 0;
  virtual void DestroyEvent(EventHandle event) const = 0;

  // Loads the executable (parsed and checked against this device first).
  virtual StatusOr<Ref<StreamExecutable>> LoadExecutable(const hal::ExecutableParams& params) = 0;
  virtual void UnloadModule(ModuleHandle module) const = 0;

  // The first sticky error of the context (OK while there is none); see
  // above. Fail records `status` unless one is recorded already.
  Status failure() const;
  void Fail(const Status& status);

 protected:
  explicit StreamContext(const hal::DriverFamily* family) : family_(family) {}

  DeviceFacts facts_;
  StreamHandle stream_ = nullptr;

 private:
  const hal::DriverFamily* family_;
  mutable std::mutex failure_mutex_;
  Status failure_;
};

// "79.1 GiB".
std::string Gibibytes(uint64_t bytes);

// The device index a spec's `device` option names: "" is 0; NOT_FOUND,
// listing `devices` ("0: NAME, ARCH" each), when it is not an index among
// them.
StatusOr<int> DeviceIndex(const std::string& driver, const std::string& device,
                          const std::vector<std::string>& devices);

}  // namespace strata::stream
