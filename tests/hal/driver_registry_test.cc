// The driver registry and device specs, and the options of the CPU drivers and
// the timings cpu-task chooses by.
#include <doctest/doctest.h>

#include "drivers/cpu/way_timings.h"
#include "drivers/registry.h"
#include "tests/hal/hal_test_util.h"

namespace strata::testing {
namespace {

using hal::DeviceSpec;

TEST_CASE("registry: device specs") {
  DeviceSpec plain = DeviceSpec::Parse("cpu-sync").value();
  CHECK(plain.driver() == "cpu-sync");
  CHECK(plain.options().empty());

  DeviceSpec spec = DeviceSpec::Parse("cpu-task?threads=2&name=x=y").value();
  CHECK(spec.spec() == "cpu-task?threads=2&name=x=y");
  CHECK(spec.driver() == "cpu-task");
  REQUIRE(spec.options().size() == 2);
  CHECK(spec.options()[0] == std::make_pair(std::string("threads"), std::string("2")));
  CHECK(spec.options()[1] == std::make_pair(std::string("name"), std::string("x=y")));
  CHECK(spec.GetInt("threads", 7, 1, 8).value() == 2);
  CHECK(spec.GetInt("absent", 7, 1, 8).value() == 7);
  CheckError(spec.GetInt("threads", 7, 3, 8).status(), StatusCode::kInvalidArgument,
             {"threads='2' must be an integer in [3, 8]"});
  CheckError(spec.CheckKnownOptions({"threads"}), StatusCode::kInvalidArgument,
             {"no option 'name'", "(options: threads)"});

  // "driver://X" is short for "driver?device=X", and combines with options.
  DeviceSpec scheme = DeviceSpec::Parse("vulkan://1?validation=1").value();
  CHECK(scheme.driver() == "vulkan");
  CHECK(scheme.spec() == "vulkan://1?validation=1");
  REQUIRE(scheme.options().size() == 2);
  CHECK(scheme.options()[0] == std::make_pair(std::string("device"), std::string("1")));
  CHECK(scheme.options()[1] == std::make_pair(std::string("validation"), std::string("1")));
  CheckError(DeviceSpec::Parse("vulkan://").status(), StatusCode::kInvalidArgument, {"expected a device after '://'"});
  CheckError(DeviceSpec::Parse("://1").status(), StatusCode::kInvalidArgument, {"expected a driver name"});
  CheckError(DeviceSpec::Parse("vulkan://1?device=2").status(), StatusCode::kInvalidArgument,
             {"'device' is given twice"});

  CheckError(DeviceSpec::Parse("").status(), StatusCode::kInvalidArgument, {"expected a driver name"});
  CheckError(DeviceSpec::Parse("?threads=1").status(), StatusCode::kInvalidArgument, {"expected a driver name"});
  CheckError(DeviceSpec::Parse("cpu-task?threads").status(), StatusCode::kInvalidArgument,
             {"option 'threads' is not of the form key=value"});
  CheckError(DeviceSpec::Parse("cpu-task?=2").status(), StatusCode::kInvalidArgument, {"key=value"});
  CheckError(DeviceSpec::Parse("cpu-task?threads=1&threads=2").status(), StatusCode::kInvalidArgument,
             {"'threads' is given twice"});
}

TEST_CASE("registry: enumeration and creation by name") {
  hal::DriverRegistry& registry = drivers::DefaultRegistry();
  auto drivers = registry.List();
  auto has = [&](const char* name) {
    for (const auto& [driver, description] : drivers) {
      if (driver == name) return !description.empty();
    }
    return false;
  };
  CHECK(has("cpu-sync"));
#if STRATA_DRIVER_CPU_TASK
  CHECK(has("cpu-task"));
#endif
  CheckError(registry.CreateDevice("warp-drive").status(), StatusCode::kNotFound,
             {"no driver named 'warp-drive'", "(available: cpu-sync"});
  CheckError(registry.Register({"cpu-sync", "again", nullptr}), StatusCode::kInvalidArgument,
             {"'cpu-sync' is already registered"});

  // A registry of one's own, with a driver that is absent on this machine.
  hal::DriverRegistry own;
  REQUIRE(own.Register({"absent", "needs hardware this machine lacks", [](const DeviceSpec&) {
                          return StatusOr<Ref<hal::Device>>(UnavailableError("no such GPU here"));
                        }}).ok());
  CHECK(own.List().size() == 1);
  CheckError(own.CreateDevice("absent").status(), StatusCode::kUnavailable, {"no such GPU here"});
  CheckError(own.CreateDevice("cpu-sync").status(), StatusCode::kNotFound, {"(available: absent)"});
}

#if STRATA_DRIVER_CPU_TASK
TEST_CASE("registry: CPU driver options") {
  hal::DriverRegistry& registry = drivers::DefaultRegistry();
  Ref<hal::Device> task = registry.CreateDevice("cpu-task?threads=3").value();
  CHECK(task->info().name == "cpu-task?threads=3");
  CHECK(task->info().driver == "cpu-task");
  CHECK(task->info().concurrency == 3);
  CHECK(task->info().description.find("3 worker threads") != std::string::npos);
  Ref<hal::Device> sync = registry.CreateDevice("cpu-sync").value();
  CHECK(sync->info().concurrency == 1);
  // Objects of one CPU driver work on the other.
  CHECK(sync->info().executable_formats == task->info().executable_formats);

  CheckError(registry.CreateDevice("cpu-task?threads=0").status(), StatusCode::kInvalidArgument,
             {"threads='0' must be an integer in [1, 1024]"});
  CheckError(registry.CreateDevice("cpu-task?threads=two").status(), StatusCode::kInvalidArgument,
             {"threads='two'"});
  CheckError(registry.CreateDevice("cpu-task?thread=2").status(), StatusCode::kInvalidArgument,
             {"no option 'thread'", "(options: threads, max_allocation, stream)"});
  CHECK(registry.CreateDevice("cpu-task?stream=never").ok());
  CheckError(registry.CreateDevice("cpu-task?stream=sometimes").status(), StatusCode::kInvalidArgument,
             {"option stream='sometimes' must be one of auto, always, never"});
  CheckError(registry.CreateDevice("cpu-sync?threads=2").status(), StatusCode::kInvalidArgument,
             {"driver 'cpu-sync' has no option 'threads'", "(options: max_allocation)"});
  // max_allocation caps every allocation of the device.
  auto capped = registry.CreateDevice("cpu-sync?max_allocation=4096");
  REQUIRE(capped.ok());
  hal::BufferParams params;
  params.memory_types = hal::kMemoryDeviceLocal;
  params.usage = hal::kUsageDispatchStorage;
  CHECK((*capped)->allocator()->Allocate(params, 4096).ok());
  CheckError((*capped)->allocator()->Allocate(params, 4097).status(), StatusCode::kResourceExhausted,
             {"4097 bytes requested", "is 4096 bytes"});
  CheckError(registry.CreateDevice("cpu-task?max_allocation=0").status(), StatusCode::kInvalidArgument,
             {"max_allocation"});
}

TEST_CASE("registry: work moves between the two CPU drivers") {
  hal::DriverRegistry& registry = drivers::DefaultRegistry();
  Ref<hal::Device> task = registry.CreateDevice("cpu-task?threads=2").value();
  Ref<hal::Device> sync = registry.CreateDevice("cpu-sync").value();
  // A buffer from one device, filled by the other, in a submission that waits
  // on a semaphore of the first.
  Ref<hal::Buffer> buffer = Allocate(*task, 64);
  Ref<hal::Semaphore> gate = task->CreateSemaphore(0).value();
  Ref<hal::Semaphore> done = sync->CreateSemaphore(0).value();
  Ref<hal::CommandBuffer> command_buffer = sync->CreateCommandBuffer().value();
  REQUIRE(command_buffer->Begin().ok());
  REQUIRE(command_buffer->Fill(buffer.get(), 0, 64, 0x7F, 1).ok());
  REQUIRE(command_buffer->End().ok());
  hal::SemaphoreValue wait{gate.get(), 1}, signal{done.get(), 1};
  hal::CommandBuffer* raw = command_buffer.get();
  REQUIRE(task->QueueExecute({&wait, 1}, {&signal, 1}, {&raw, 1}).ok());
  REQUIRE(gate->Signal(1).ok());
  REQUIRE(done->Wait(1, std::chrono::seconds(10)).ok());
  CHECK(Read<uint8_t>(*sync, buffer.get(), 0, 64) == std::vector<uint8_t>(64, 0x7F));
}
#endif  // STRATA_DRIVER_CPU_TASK

TEST_CASE("cpu drivers: way timings") {
  cpu::WayTimings timings;
  CHECK(timings.Get(false).samples == 0);
  CHECK(timings.Get(true).nanos == 0);
  // The first run stands alone; a faster one pulls the average halfway
  // down, a slower one an eighth of the way up; each way on its own.
  timings.Record(/*alone=*/false, 800);
  CHECK(timings.Get(false).nanos == 800);
  CHECK(timings.Get(false).samples == 1);
  timings.Record(false, 400);
  CHECK(timings.Get(false).nanos == 600);
  timings.Record(false, 1400);
  CHECK(timings.Get(false).nanos == 700);
  CHECK(timings.Get(false).samples == 3);
  CHECK(timings.Get(true).samples == 0);
  // A run of 0 ns counts as 1, so a measured way never reads as unmeasured;
  // one too long for 32 bits is clamped.
  timings.Record(true, 0);
  CHECK(timings.Get(true).nanos == 1);
  CHECK(timings.Get(true).samples == 1);
  cpu::WayTimings slow;
  slow.Record(true, uint64_t{1} << 40);
  CHECK(slow.Get(true).nanos == UINT32_MAX);
  // The count stops at 255.
  for (int i = 0; i < 300; ++i) timings.Record(false, 700);
  CHECK(timings.Get(false).samples == 255);
  CHECK(timings.Get(false).nanos == 700);
  timings.Reset();
  CHECK(timings.Get(false).samples == 0);
  CHECK(timings.Get(true).samples == 0);
}

}  // namespace
}  // namespace strata::testing
