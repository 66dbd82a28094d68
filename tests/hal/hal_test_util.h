// Helpers for the HAL conformance suite: the drivers it runs on, test kernels
// prepared for a device, and buffer contents read and written through the HAL
// itself (mapping where the memory allows it, staging copies where not), so
// every helper works unchanged on a GPU driver.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "hal/device.h"
#include "tests/hal/test_executables.h"
#include "vm/base/status.h"

namespace strata::testing {

// Restricts ConformanceDrivers to the driver `name` (hal_tests
// --hal-driver=NAME, so that CTest runs the suite once per driver and a
// failure names it); call before the first ConformanceDrivers. Fails for a
// name the registry does not have.
Status SetConformanceDriver(const std::string& name);

// The registered drivers that can create a device on this machine, by name
// (only the one SetConformanceDriver chose, if any). Drivers whose hardware
// or runtime library is absent are left out, each with one line on stdout
// saying why (printed once per process).
const std::vector<std::string>& ConformanceDrivers();

// The driver a device spec names ("vulkan" for "vulkan?unified_memory=0"),
// as hal::DeviceSpec parses it; the spec itself when it does not parse.
std::string DriverOf(const std::string& spec);

// A fresh device of `driver`; fails the test if it cannot be created.
Ref<hal::Device> CreateDevice(const std::string& driver);

// A device from `spec`, or null when its driver is unavailable here, after
// printing "`absent`: why" (the line a driver's CTest skips on); fails the
// test on any other error.
Ref<hal::Device> CreateDeviceIfAvailable(const std::string& spec, const char* absent);

// A new command buffer of `device`, begun.
Ref<hal::CommandBuffer> BeginCommandBuffer(hal::Device& device);

// Runs `body(device)` once per conformance driver, each in its own doctest
// subcase named after the driver (so a failure names it, and one driver's
// failure does not hide another's).
#define FOR_EACH_DRIVER(device)                                                         \
  for (const std::string& _strata_driver : ::strata::testing::ConformanceDrivers())      \
    SUBCASE(_strata_driver.c_str())                                                      \
    for (Ref<hal::Device> device = ::strata::testing::CreateDevice(_strata_driver); \
         device; device = nullptr)

// CHECKs that `status` failed with `code` and that its message contains each
// of `fragments`.
void CheckError(const Status& status, StatusCode code, std::initializer_list<std::string_view> fragments);

// Prepares test kernel `name` (tests/hal/kernels) for `device`, in the first
// of the device's formats the kernels are built for. Returns null (and says
// so once per device) when the device runs none of them.
Ref<hal::Executable> PrepareTestKernel(hal::Device& device, std::string_view name);

// A buffer with every usage, of the given memory types.
Ref<hal::Buffer> Allocate(hal::Device& device, uint64_t length,
                              hal::MemoryTypes memory_types = hal::kMemoryHostVisible);

// Submits one command buffer with no waits and waits for it (10 s limit);
// returns the submission's outcome.
Status SubmitAndWait(hal::Device& device, hal::CommandBuffer* command_buffer);

// Bytes [offset, offset + length) of `buffer`, read by mapping it or, when it
// cannot be mapped, through a copy into a mappable staging buffer.
std::vector<uint8_t> ReadBytes(hal::Device& device, hal::Buffer* buffer, uint64_t offset, uint64_t length);
// Writes `bytes` at `offset`, by mapping or through an update command.
void WriteBytes(hal::Device& device, hal::Buffer* buffer, uint64_t offset, std::span<const uint8_t> bytes);

// The check-status words of a GPU driver (hal/gpu_commands.h) on `device`,
// with the test kernels: a failed check fails the submission with its
// message, and a barrier after it stops what follows while what came
// before runs (`segment_count` says into how many parts the driver split
// such a command buffer: 2); resubmitted, the words start from zero again;
// a kernel's second check, and a code beyond its checks (ABORTED); a
// passing dispatch afterwards succeeds.
void CheckGpuCheckWords(hal::Device& device, const std::function<size_t(hal::CommandBuffer&)>& segment_count);

// A chain of kSteps submissions on a GPU driver's device, each waiting for
// the last one's signal: step i doubles buffer i % 2 (of `count` floats,
// device-local) into the other with `add_f32` in workgroups of `group`,
// each step a command buffer of its own (a driver launches one command
// buffer once at a time). For the pipelined queues.
class SubmissionChain {
 public:
  static constexpr uint32_t kSteps = 24;
  SubmissionChain(hal::Device& device, uint32_t count, uint32_t group);

  // Submits the chain on `chain`, waiting for `first` and signalling first
  // + 1 ..., step `fail_at` replaced by `failing`, and waits for its end.
  Status Run(hal::Semaphore* chain, uint64_t first, hal::CommandBuffer* failing = nullptr,
             uint32_t fail_at = kSteps);
  // Runs the chain from ones and checks that every element is 2^kSteps.
  void RunAndCheck();
  // A command buffer whose one dispatch fails its check with code 7.
  Ref<hal::CommandBuffer> Failing();
  // With step 5 failing, the steps after it fail with its message, and so
  // does the chain's semaphore.
  void CheckFailedStep();

  hal::Executable* add() const { return add_.get(); }
  hal::Buffer* buffer(int i) const { return buffers_[i].get(); }

 private:
  hal::Device& device_;
  const uint32_t count_;
  Ref<hal::Executable> add_, fail_if_;
  Ref<hal::Buffer> buffers_[2];
  std::vector<Ref<hal::CommandBuffer>> steps_;
};

template <typename T>
std::vector<T> Read(hal::Device& device, hal::Buffer* buffer, uint64_t offset, size_t count) {
  std::vector<uint8_t> bytes = ReadBytes(device, buffer, offset, count * sizeof(T));
  std::vector<T> out(count);
  if (bytes.size() == count * sizeof(T)) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}
template <typename T>
void Write(hal::Device& device, hal::Buffer* buffer, uint64_t offset, const std::vector<T>& values) {
  WriteBytes(device, buffer, offset,
             {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(T)});
}

}  // namespace strata::testing
