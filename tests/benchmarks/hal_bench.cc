// HAL benchmarks on the CPU drivers, and Vulkan where there is a device
// (Google Benchmark; built, never a test).
//
//   DispatchChain/<device>/{replay,record}
//       one command buffer of 100 dependent dispatches (16-element adds with
//       a barrier between each): `replay` submits a recorded command buffer,
//       `record` also records it every time. The ns_per_dispatch counter is
//       the time per dispatch, submission and wait included.
//   SubmitRoundTrip/<device>
//       one dispatch, submitted and waited for on the host.
//   SubmissionChain/<device>
//       16 submissions of one small dispatch each, every one waiting for the
//       last one's signal, waited for on the host at the end; on `vulkan`
//       (pipelined: queued on the device back to back) beside
//       `vulkan?pipelined=0` (one submission at a time) when there is a
//       Vulkan device. ns_per_submission: the time per submission.
//   SplitChain/<device>
//       one command buffer of 100 dependent dispatches of scale * exp(x) over
//       4K floats in 16 workgroups, each reading what the last wrote (a
//       barrier between each): small dispatches that are still worth
//       splitting, where what a split costs per dispatch (handing out the
//       shares, waiting for the last) shows against cpu-sync.
//       ns_per_dispatch: the time per dispatch.
//   Elementwise16M/<device>/{add,scale_exp}
//       one dispatch over 16M floats (256 workgroups of 64K elements):
//       memory-bound add, and scale * exp(x), which computes more per byte.
//
// Compare with PyTorch eager: tests/benchmarks/torch_chained_adds.py.
#include <benchmark/benchmark.h>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "drivers/registry.h"
#include "tests/hal/test_executables.h"

namespace strata {
namespace {


constexpr auto kTimeout = std::chrono::seconds(60);

// Benchmarks cannot report errors as values: stop with the message.
template <typename T>
T Check(StatusOr<T> result) {
  if (!result.ok()) {
    std::fprintf(stderr, "hal_bench: %s\n", result.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(result).value();
}
void Check(const Status& status) {
  if (!status.ok()) {
    std::fprintf(stderr, "hal_bench: %s\n", status.ToString().c_str());
    std::exit(1);
  }
}

// Everything one benchmark needs on one device.
struct Setup {
  explicit Setup(const std::string& spec) : device(Check(drivers::DefaultRegistry().CreateDevice(spec))) {
    semaphore = Check(device->CreateSemaphore(0));
  }

  Ref<hal::Buffer> Filled(uint64_t count, float value) {
    Ref<hal::Buffer> buffer = Check(device->allocator()->Allocate({hal::kMemoryHostVisible}, count * 4));
    hal::MappedRange range = Check(buffer->Map(hal::kAccessWrite));
    for (float& x : range.As<float>()) x = value;
    return buffer;
  }
  Ref<hal::Executable> Kernel(const char* name) {
    Ref<hal::Executable> executable = Check(testing::PrepareTestKernelIfSupported(*device, name));
    if (!executable) Check(UnavailableError("device ", device->info().name, " runs none of the kernels' formats"));
    return executable;
  }
  // Submits and waits on the host.
  void Run(hal::CommandBuffer* command_buffer) {
    hal::SemaphoreValue signal{semaphore.get(), ++value};
    Check(device->QueueExecute({}, {&signal, 1}, {&command_buffer, 1}));
    Check(semaphore->Wait(value, kTimeout));
  }

  Ref<hal::Device> device;
  Ref<hal::Semaphore> semaphore;
  uint64_t value = 0;
};

// acc = acc + ones over 16 elements, `count` times, each after a barrier.
void RecordChain(hal::CommandBuffer* command_buffer, hal::Executable* add, hal::Buffer* acc, hal::Buffer* ones,
                 int count) {
  Check(command_buffer->Begin());
  const uint32_t constants[] = {16};
  const hal::BufferBinding bindings[] = {{acc, 0, 64}, {ones, 0, 64}, {acc, 0, 64}};
  for (int i = 0; i < count; ++i) {
    Check(command_buffer->Dispatch(add, 0, {1, 1, 1}, constants, bindings));
    Check(command_buffer->Barrier());
  }
  Check(command_buffer->End());
}

// acc = acc + ones over 16 elements, on one device, for the chained
// benchmarks.
struct AddChain : Setup {
  explicit AddChain(const std::string& spec)
      : Setup(spec), add(Kernel("add_f32")), acc(Filled(16, 0.0f)), ones(Filled(16, 1.0f)) {}

  // A command buffer of `count` dependent adds.
  Ref<hal::CommandBuffer> Record(int count) {
    Ref<hal::CommandBuffer> command_buffer = Check(device->CreateCommandBuffer());
    RecordChain(command_buffer.get(), add.get(), acc.get(), ones.get(), count);
    return command_buffer;
  }
  // Every add added 1: checks that `adds` per iteration really ran, in order,
  // and reports the time per `unit` (an add, a submission) as ns_per_<unit>.
  void Finish(benchmark::State& state, int adds, const std::string& unit) {
    hal::MappedRange range = Check(acc->Map(hal::kAccessRead));
    const float expected = float(adds) * float(state.iterations());
    if (range.As<float>()[15] != expected && expected < (1 << 24)) {
      state.SkipWithError("the chain computed a wrong sum");
    }
    state.counters["ns_per_" + unit] = benchmark::Counter(double(state.iterations()) * adds,
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  }

  Ref<hal::Executable> add;
  Ref<hal::Buffer> acc, ones;
};

void DispatchChain(benchmark::State& state, std::string spec, bool record) {
  constexpr int kDispatches = 100;
  AddChain chain(spec);
  Ref<hal::CommandBuffer> command_buffer = chain.Record(kDispatches);
  for (auto _ : state) {
    if (record) RecordChain(command_buffer.get(), chain.add.get(), chain.acc.get(), chain.ones.get(), kDispatches);
    chain.Run(command_buffer.get());
  }
  chain.Finish(state, kDispatches, "dispatch");
}

void SubmitRoundTrip(benchmark::State& state, std::string spec) {
  AddChain chain(spec);
  Ref<hal::CommandBuffer> command_buffer = chain.Record(1);
  for (auto _ : state) chain.Run(command_buffer.get());
}

void SubmissionChain(benchmark::State& state, std::string spec) {
  constexpr int kSubmissions = 16;
  AddChain chain(spec);
  std::vector<Ref<hal::CommandBuffer>> command_buffers;
  for (int i = 0; i < kSubmissions; ++i) command_buffers.push_back(chain.Record(1));
  for (auto _ : state) {
    for (Ref<hal::CommandBuffer>& command_buffer : command_buffers) {
      hal::CommandBuffer* raw = command_buffer.get();
      hal::SemaphoreValue wait{chain.semaphore.get(), chain.value}, signal{chain.semaphore.get(), chain.value + 1};
      Check(chain.device->QueueExecute({&wait, 1}, {&signal, 1}, {&raw, 1}));
      ++chain.value;
    }
    Check(chain.semaphore->Wait(chain.value, kTimeout));
  }
  chain.Finish(state, kSubmissions, "submission");
}

void SplitChain(benchmark::State& state, std::string spec) {
  constexpr int kDispatches = 100;
  constexpr uint32_t kCount = 4u << 10;
  constexpr uint32_t kGroup = 256;
  Setup setup(spec);
  Ref<hal::Executable> kernel = setup.Kernel("scale_exp");
  // x -> 0.1 * exp(x) converges (to about 0.112), so every dispatch computes
  // ordinary floats.
  Ref<hal::Buffer> buffers[2] = {setup.Filled(kCount, 1.0f), setup.Filled(kCount, 0.0f)};
  Ref<hal::CommandBuffer> command_buffer = Check(setup.device->CreateCommandBuffer());
  Check(command_buffer->Begin());
  const uint32_t constants[] = {std::bit_cast<uint32_t>(0.1f), kGroup};
  for (int i = 0; i < kDispatches; ++i) {
    const hal::BufferBinding bindings[] = {{buffers[i % 2].get()}, {buffers[(i + 1) % 2].get()}};
    Check(command_buffer->Dispatch(kernel.get(), 0, {kCount / kGroup, 1, 1}, constants, bindings));
    Check(command_buffer->Barrier());
  }
  Check(command_buffer->End());
  for (auto _ : state) setup.Run(command_buffer.get());
  hal::MappedRange range = Check(buffers[kDispatches % 2]->Map(hal::kAccessRead));
  const float last = range.As<float>()[kCount - 1];
  if (!(last > 0.11f && last < 0.115f)) state.SkipWithError("the chain computed a wrong value");
  state.counters["ns_per_dispatch"] = benchmark::Counter(double(state.iterations()) * kDispatches,
                                                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void Elementwise16M(benchmark::State& state, std::string spec, bool exp) {
  constexpr uint32_t kCount = 16u << 20;
  constexpr uint32_t kGroup = 64u << 10;
  Setup setup(spec);
  Ref<hal::Executable> kernel = setup.Kernel(exp ? "scale_exp" : "add_f32");
  Ref<hal::Buffer> a = setup.Filled(kCount, 1.0f);
  Ref<hal::Buffer> b = setup.Filled(kCount, 2.0f);
  Ref<hal::Buffer> c = setup.Filled(kCount, 0.0f);
  Ref<hal::CommandBuffer> command_buffer = Check(setup.device->CreateCommandBuffer());
  Check(command_buffer->Begin());
  const hal::WorkgroupCount groups = {kCount / kGroup, 1, 1};
  if (exp) {
    const uint32_t constants[] = {std::bit_cast<uint32_t>(0.5f), kGroup};
    const hal::BufferBinding bindings[] = {{a.get()}, {c.get()}};
    Check(command_buffer->Dispatch(kernel.get(), 0, groups, constants, bindings));
  } else {
    const uint32_t constants[] = {kGroup};
    const hal::BufferBinding bindings[] = {{a.get()}, {b.get()}, {c.get()}};
    Check(command_buffer->Dispatch(kernel.get(), 0, groups, constants, bindings));
  }
  Check(command_buffer->End());
  for (auto _ : state) setup.Run(command_buffer.get());
  state.SetBytesProcessed(int64_t(state.iterations()) * kCount * 4 * (exp ? 2 : 3));
}

// The devices each benchmark runs on (cpu-task only when it is built).
#if STRATA_DRIVER_CPU_TASK
const std::vector<const char*> kDevices = {"cpu-sync", "cpu-task"};
const std::vector<const char*> kElementwiseDevices = {"cpu-sync", "cpu-task?threads=1", "cpu-task?threads=2"};
#else
const std::vector<const char*> kDevices = {"cpu-sync"};
const std::vector<const char*> kElementwiseDevices = {"cpu-sync"};
#endif

void RegisterAll() {
  for (const char* spec : kDevices) {
    for (bool record : {false, true}) {
      benchmark::RegisterBenchmark(
          (std::string("DispatchChain/") + spec + (record ? "/record" : "/replay")).c_str(),
          [spec, record](benchmark::State& state) { DispatchChain(state, spec, record); })
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark((std::string("SubmitRoundTrip/") + spec).c_str(),
                                 [spec](benchmark::State& state) { SubmitRoundTrip(state, spec); })
        ->UseRealTime();
  }
  std::vector<std::string> chain_devices(kDevices.begin(), kDevices.end());
  if (drivers::DefaultRegistry().CreateDevice("vulkan").ok()) {
    chain_devices.insert(chain_devices.end(), {"vulkan", "vulkan?pipelined=0"});
  }
  for (const std::string& spec : chain_devices) {
    benchmark::RegisterBenchmark(("SubmissionChain/" + spec).c_str(),
                                 [spec](benchmark::State& state) { SubmissionChain(state, spec); })
        ->UseRealTime();
  }
  for (const char* spec : kElementwiseDevices) {
    benchmark::RegisterBenchmark((std::string("SplitChain/") + spec).c_str(),
                                 [spec](benchmark::State& state) { SplitChain(state, spec); })
        ->UseRealTime();
  }
  for (const char* spec : kElementwiseDevices) {
    for (bool exp : {false, true}) {
      benchmark::RegisterBenchmark(
          (std::string("Elementwise16M/") + spec + (exp ? "/scale_exp" : "/add")).c_str(),
          [spec, exp](benchmark::State& state) { Elementwise16M(state, spec, exp); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  strata::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
