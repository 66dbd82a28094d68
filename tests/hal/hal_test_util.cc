#include "tests/hal/hal_test_util.h"

#include <cstdio>
#include <mutex>
#include <set>

#include "drivers/registry.h"
#include "hal/driver_registry.h"

namespace strata::testing {

namespace {
std::string& ChosenDriver() {
  static std::string chosen;
  return chosen;
}
}  // namespace

std::string DriverOf(const std::string& spec) {
  StatusOr<hal::DeviceSpec> parsed = hal::DeviceSpec::Parse(spec);
  return parsed.ok() ? parsed->driver() : spec;
}

Status SetConformanceDriver(const std::string& name) {
  const std::string driver_name = DriverOf(name);
  std::string names;
  for (const auto& [driver, description] : drivers::DefaultRegistry().List()) {
    if (driver == driver_name) {
      ChosenDriver() = name;
      return OkStatus();
    }
    names += (names.empty() ? "" : ", ") + driver;
  }
  return NotFoundError("--hal-driver=", name, ": no such driver in this build (drivers: ", names, ")");
}

const std::vector<std::string>& ConformanceDrivers() {
  static const std::vector<std::string> drivers = [] {
    std::vector<std::string> out;
    for (auto [name, description] : drivers::DefaultRegistry().List()) {
      if (!ChosenDriver().empty()) {
        if (name != DriverOf(ChosenDriver())) continue;
        name = ChosenDriver();
      }
      StatusOr<Ref<hal::Device>> device = drivers::DefaultRegistry().CreateDevice(name);
      if (device.ok()) {
        out.push_back(name);
      } else if (device.status().code() == StatusCode::kUnavailable) {
        std::printf("hal conformance: skipping driver '%s': %s\n", name.c_str(),
                    device.status().message().c_str());
      } else {
        // Not absent hardware but a broken driver: keep it, so its tests fail.
        out.push_back(name);
      }
    }
    return out;
  }();
  return drivers;
}

Ref<hal::Device> CreateDevice(const std::string& driver) {
  StatusOr<Ref<hal::Device>> device = drivers::DefaultRegistry().CreateDevice(driver);
  INFO("creating a device of driver '", driver, "'");
  REQUIRE_MESSAGE(device.ok(), device.status().ToString());
  return std::move(device).value();
}

Ref<hal::Device> CreateDeviceIfAvailable(const std::string& spec, const char* absent) {
  StatusOr<Ref<hal::Device>> device = drivers::DefaultRegistry().CreateDevice(spec);
  if (!device.ok() && device.status().code() == StatusCode::kUnavailable) {
    std::printf("%s: %s\n", absent, device.status().message().c_str());
    return nullptr;
  }
  REQUIRE_MESSAGE(device.ok(), device.status().ToString());
  return std::move(device).value();
}

Ref<hal::CommandBuffer> BeginCommandBuffer(hal::Device& device) {
  StatusOr<Ref<hal::CommandBuffer>> command_buffer = device.CreateCommandBuffer();
  REQUIRE(command_buffer.ok());
  REQUIRE(command_buffer.value()->Begin().ok());
  return std::move(command_buffer).value();
}

void CheckError(const Status& status, StatusCode code, std::initializer_list<std::string_view> fragments) {
  INFO("status: ", status.ToString());
  CHECK(status.code() == code);
  for (std::string_view fragment : fragments) {
    INFO("expected fragment: '", std::string(fragment), "'");
    CHECK(status.message().find(fragment) != std::string::npos);
  }
}

Ref<hal::Executable> PrepareTestKernel(hal::Device& device, std::string_view name) {
  StatusOr<Ref<hal::Executable>> executable = PrepareTestKernelIfSupported(device, name);
  REQUIRE_MESSAGE(executable.ok(), executable.status().ToString());
  if (executable.value()) return std::move(executable).value();
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  if (reported.insert(device.info().driver).second) {
    std::printf("hal conformance: driver '%s' runs none of the test kernels' formats; its dispatch cases "
                "are skipped\n",
                device.info().driver.c_str());
  }
  return nullptr;
}

Ref<hal::Buffer> Allocate(hal::Device& device, uint64_t length, hal::MemoryTypes memory_types) {
  hal::BufferParams params;
  params.memory_types = memory_types;
  params.usage = (memory_types & hal::kMemoryHostVisible) ? hal::kUsageAll : hal::kUsageAll & ~hal::kUsageMapping;
  StatusOr<Ref<hal::Buffer>> buffer = device.allocator()->Allocate(params, length);
  REQUIRE_MESSAGE(buffer.ok(), buffer.status().ToString());
  return std::move(buffer).value();
}

Status SubmitAndWait(hal::Device& device, hal::CommandBuffer* command_buffer) {
  STRATA_ASSIGN_OR_RETURN(Ref<hal::Semaphore> semaphore, device.CreateSemaphore(0));
  hal::SemaphoreValue signal{semaphore.get(), 1};
  hal::CommandBuffer* command_buffers[] = {command_buffer};
  STRATA_RETURN_IF_ERROR(device.QueueExecute({}, {&signal, 1}, command_buffers));
  return semaphore->Wait(1, std::chrono::seconds(10));
}

static bool Mappable(const hal::Buffer* buffer) {
  return (buffer->memory_types() & hal::kMemoryHostVisible) && (buffer->usage() & hal::kUsageMapping);
}

std::vector<uint8_t> ReadBytes(hal::Device& device, hal::Buffer* buffer, uint64_t offset, uint64_t length) {
  if (Mappable(buffer)) {
    StatusOr<hal::MappedRange> range = buffer->Map(hal::kAccessRead, offset, length);
    REQUIRE_MESSAGE(range.ok(), range.status().ToString());
    return {range->bytes().begin(), range->bytes().end()};
  }
  Ref<hal::Buffer> staging = Allocate(device, length);
  Ref<hal::CommandBuffer> command_buffer = device.CreateCommandBuffer().value();
  REQUIRE(command_buffer->Begin().ok());
  Status copied = command_buffer->Copy(buffer, offset, staging.get(), 0, length);
  REQUIRE_MESSAGE(copied.ok(), copied.ToString());
  REQUIRE(command_buffer->End().ok());
  Status done = SubmitAndWait(device, command_buffer.get());
  REQUIRE_MESSAGE(done.ok(), done.ToString());
  return ReadBytes(device, staging.get(), 0, length);
}

void WriteBytes(hal::Device& device, hal::Buffer* buffer, uint64_t offset, std::span<const uint8_t> bytes) {
  if (Mappable(buffer)) {
    StatusOr<hal::MappedRange> range = buffer->Map(hal::kAccessWrite, offset, bytes.size());
    REQUIRE_MESSAGE(range.ok(), range.status().ToString());
    std::memcpy(range->bytes().data(), bytes.data(), bytes.size());
    Status unmapped = range->Unmap();
    REQUIRE_MESSAGE(unmapped.ok(), unmapped.ToString());
    return;
  }
  Ref<hal::CommandBuffer> command_buffer = device.CreateCommandBuffer().value();
  REQUIRE(command_buffer->Begin().ok());
  for (uint64_t done = 0; done < bytes.size(); done += hal::CommandBuffer::kMaxUpdateSize) {
    uint64_t chunk = std::min<uint64_t>(bytes.size() - done, hal::CommandBuffer::kMaxUpdateSize);
    Status updated = command_buffer->Update(bytes.subspan(done, chunk), buffer, offset + done);
    REQUIRE_MESSAGE(updated.ok(), updated.ToString());
  }
  REQUIRE(command_buffer->End().ok());
  Status done = SubmitAndWait(device, command_buffer.get());
  REQUIRE_MESSAGE(done.ok(), done.ToString());
}

void CheckGpuCheckWords(hal::Device& device, const std::function<size_t(hal::CommandBuffer&)>& segment_count) {
  Ref<hal::Executable> add = PrepareTestKernel(device, "add_f32");
  Ref<hal::Executable> select = PrepareTestKernel(device, "select_op");
  Ref<hal::Executable> fail_if = PrepareTestKernel(device, "fail_if");
  REQUIRE((add && select && fail_if));
  Ref<hal::Buffer> shorter = Allocate(device, 64), longer = Allocate(device, 128);
  Ref<hal::Buffer> before = Allocate(device, 64), after = Allocate(device, 64);
  Write(device, before.get(), 0, std::vector<uint8_t>(64, 0x11));
  Write(device, after.get(), 0, std::vector<uint8_t>(64, 0x11));
  // a shorter than c: check 0 fails. The fill beside the dispatch runs; the
  // one after the barrier does not.
  Ref<hal::CommandBuffer> command_buffer = BeginCommandBuffer(device);
  const uint32_t group[] = {64};
  const hal::BufferBinding bindings[] = {{shorter.get(), 0, 64}, {longer.get(), 0, 128}, {longer.get(), 0, 128}};
  REQUIRE(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, group, bindings).ok());
  REQUIRE(command_buffer->Fill(before.get(), 0, 64, 0x22, 1).ok());
  REQUIRE(command_buffer->Barrier().ok());
  REQUIRE(command_buffer->Fill(after.get(), 0, 64, 0x33, 1).ok());
  REQUIRE(command_buffer->End().ok());
  CHECK(segment_count(*command_buffer) == 2);
  CheckError(SubmitAndWait(device, command_buffer.get()), StatusCode::kOutOfRange,
             {"dispatch of 'add_f32'", "failed a check of the model: add_f32: a or b is shorter than c"});
  CHECK(ReadBytes(device, before.get(), 0, 64) == std::vector<uint8_t>(64, 0x22));
  CHECK(ReadBytes(device, after.get(), 0, 64) == std::vector<uint8_t>(64, 0x11));
  // Resubmitted, the check words start from zero again: still the same error.
  CheckError(SubmitAndWait(device, command_buffer.get()), StatusCode::kOutOfRange, {"a or b is shorter than c"});

  // The second check of a kernel, and a code beyond the checks.
  const uint32_t unknown_op[] = {9};
  const hal::BufferBinding select_bindings[] = {{longer.get(), 0, 128}, {longer.get(), 0, 128}};
  Ref<hal::CommandBuffer> second = BeginCommandBuffer(device);
  REQUIRE(second->Dispatch(select.get(), 0, {1, 1, 1}, unknown_op, select_bindings).ok());
  REQUIRE(second->End().ok());
  CheckError(SubmitAndWait(device, second.get()), StatusCode::kOutOfRange, {"select_op: unknown op"});
  for (uint32_t code : {1u, 7u}) {
    Ref<hal::CommandBuffer> failing = BeginCommandBuffer(device);
    const uint32_t constants[] = {code};
    REQUIRE(failing->Dispatch(fail_if.get(), 0, {2, 1, 1}, constants, {}).ok());
    REQUIRE(failing->End().ok());
    if (code == 1) {
      CheckError(SubmitAndWait(device, failing.get()), StatusCode::kOutOfRange, {"asked to fail with code 1"});
    } else {
      CheckError(SubmitAndWait(device, failing.get()), StatusCode::kAborted,
                 {"the kernel returned 7 in its check-status word"});
    }
  }
  Ref<hal::CommandBuffer> passing = BeginCommandBuffer(device);
  const hal::BufferBinding good[] = {{longer.get(), 0, 128}, {longer.get(), 0, 128}, {longer.get(), 0, 128}};
  REQUIRE(passing->Dispatch(add.get(), 0, {1, 1, 1}, group, good).ok());
  REQUIRE(passing->End().ok());
  CHECK(SubmitAndWait(device, passing.get()).ok());
}

SubmissionChain::SubmissionChain(hal::Device& device, uint32_t count, uint32_t group)
    : device_(device), count_(count) {
  add_ = PrepareTestKernel(device, "add_f32");
  fail_if_ = PrepareTestKernel(device, "fail_if");
  REQUIRE(add_);
  REQUIRE(fail_if_);
  for (Ref<hal::Buffer>& buffer : buffers_) buffer = Allocate(device, uint64_t{count} * 4, hal::kMemoryDeviceLocal);
  const uint32_t constants[] = {group};
  for (uint32_t i = 0; i < kSteps; ++i) {
    hal::Buffer* from = buffers_[i % 2].get();
    hal::Buffer* to = buffers_[1 - i % 2].get();
    const uint64_t bytes = uint64_t{count} * 4;
    const hal::BufferBinding bindings[] = {{from, 0, bytes}, {from, 0, bytes}, {to, 0, bytes}};
    steps_.push_back(BeginCommandBuffer(device));
    REQUIRE(steps_.back()->Dispatch(add_.get(), 0, {count / group, 1, 1}, constants, bindings).ok());
    REQUIRE(steps_.back()->End().ok());
  }
}

Status SubmissionChain::Run(hal::Semaphore* chain, uint64_t first, hal::CommandBuffer* failing, uint32_t fail_at) {
  for (uint32_t i = 0; i < kSteps; ++i) {
    hal::CommandBuffer* step = i == fail_at ? failing : steps_[i].get();
    hal::SemaphoreValue wait{chain, first + i}, signal{chain, first + i + 1};
    STRATA_RETURN_IF_ERROR(device_.QueueExecute({&wait, 1}, {&signal, 1}, {&step, 1}));
  }
  return chain->Wait(first + kSteps, std::chrono::seconds(120));
}

void SubmissionChain::RunAndCheck() {
  Write(device_, buffers_[0].get(), 0, std::vector<float>(count_, 1.0f));
  Ref<hal::Semaphore> chain = device_.CreateSemaphore(0).value();
  REQUIRE(chain->Signal(1).ok());
  Status status = Run(chain.get(), 1);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  std::vector<float> result = Read<float>(device_, buffers_[0].get(), 0, count_);
  size_t wrong = 0;
  for (float value : result) wrong += value != float(1 << kSteps);
  CHECK(wrong == 0);
}

Ref<hal::CommandBuffer> SubmissionChain::Failing() {
  Ref<hal::CommandBuffer> step = BeginCommandBuffer(device_);
  const uint32_t code[] = {7};
  REQUIRE(step->Dispatch(fail_if_.get(), 0, {1, 1, 1}, code, {}).ok());
  REQUIRE(step->End().ok());
  return step;
}

void SubmissionChain::CheckFailedStep() {
  Ref<hal::CommandBuffer> failing = Failing();
  Ref<hal::Semaphore> broken = device_.CreateSemaphore(0).value();
  CheckError(Run(broken.get(), 0, failing.get(), 5), StatusCode::kAborted, {"returned 7"});
  CheckError(broken->Query().status(), StatusCode::kAborted, {"returned 7"});
}

}  // namespace strata::testing
