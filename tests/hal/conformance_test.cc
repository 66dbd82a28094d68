// The HAL conformance suite: every case runs on every driver of the registry
// that can create a device here (FOR_EACH_DRIVER), or on the one that
// hal_tests --hal-driver=NAME names (CTest runs hal.conformance.NAME per
// driver). A driver is done when it passes all of them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hal/buffer_view.h"
#include "tests/hal/hal_test_util.h"
#include "vm/base/trace.h"
#include "tests/hal/kernels/test_kernels.h"

namespace strata::testing {
namespace {

using hal::Buffer;
using hal::BufferBinding;
using hal::CommandBuffer;
using hal::Semaphore;
using hal::SemaphoreValue;
using hal::WorkgroupCount;

constexpr auto kTimeout = std::chrono::seconds(10);

Ref<Semaphore> CreateSemaphore(hal::Device& device, uint64_t value) {
  StatusOr<Ref<Semaphore>> semaphore = device.CreateSemaphore(value);
  REQUIRE(semaphore.ok());
  return std::move(semaphore).value();
}

// Records c = a + b over `count` floats in workgroups of `group` elements.
Status RecordAdd(CommandBuffer* command_buffer, hal::Executable* add, Buffer* a, Buffer* b, Buffer* c,
                 uint32_t count, uint32_t group, uint64_t offset = 0) {
  const uint32_t constants[] = {group};
  const BufferBinding bindings[] = {{a, offset, uint64_t{count} * 4}, {b, offset, uint64_t{count} * 4},
                                    {c, offset, uint64_t{count} * 4}};
  return command_buffer->Dispatch(add, 0, {(count + group - 1) / group, 1, 1}, constants, bindings);
}

std::vector<float> Iota(size_t count, float start) {
  std::vector<float> v(count);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// ---------------------------------------------------------------------------
// Devices and the registry

TEST_CASE("conformance: device info") {
  FOR_EACH_DRIVER(device) {
    const hal::DeviceInfo& info = device->info();
    // The spec may carry options ("vulkan?unified_memory=0").
    CHECK(info.driver == DriverOf(_strata_driver));
    CHECK(info.name == _strata_driver);
    CHECK(!info.description.empty());
    CHECK(!info.executable_formats.empty());
    CHECK(info.concurrency >= 1);
    const uint64_t alignment = info.limits.min_binding_alignment;
    CHECK((alignment != 0 && (alignment & (alignment - 1)) == 0));
    for (uint32_t count : info.limits.max_workgroup_count) CHECK(count >= 65535);
    for (const std::string& format : info.executable_formats) CHECK(device->SupportsExecutableFormat(format));
    CHECK(!device->SupportsExecutableFormat("no-such-format"));
    REQUIRE(device->allocator());
    CHECK(!device->allocator()->heaps().empty());
  }
}

// ---------------------------------------------------------------------------
// Allocation and mapping

TEST_CASE("conformance: allocation and mapping in every memory type") {
  FOR_EACH_DRIVER(device) {
    hal::Allocator* allocator = device->allocator();
    // Every heap by its exact types, and every combination a program asks
    // for: device-local and host-visible memory on every device, both in one
    // only where a heap has both (not on a discrete GPU without a
    // host-visible window into its memory).
    std::vector<hal::MemoryTypes> requests = {hal::kMemoryDeviceLocal, hal::kMemoryHostVisible,
                                              hal::kMemoryHostVisible | hal::kMemoryHostCoherent};
    const hal::MemoryTypes both = hal::kMemoryDeviceLocal | hal::kMemoryHostVisible;
    for (const hal::MemoryHeap& heap : allocator->heaps()) {
      requests.push_back(heap.memory_types);
      if ((heap.memory_types & both) == both) requests.push_back(both);
    }
    for (hal::MemoryTypes types : requests) {
      INFO("memory types: ", hal::DescribeMemoryTypes(types));
      const bool visible = types & hal::kMemoryHostVisible;
      hal::BufferParams params;
      params.memory_types = types;
      params.usage = visible ? hal::kUsageAll : hal::kUsageAll & ~hal::kUsageMapping;
      StatusOr<Ref<Buffer>> allocated = allocator->Allocate(params, 4096);
      REQUIRE_MESSAGE(allocated.ok(), allocated.status().ToString());
      Ref<Buffer> buffer = std::move(allocated).value();
      CHECK((buffer->memory_types() & types) == types);
      CHECK(buffer->byte_length() == 4096);
      CHECK(buffer->allocated_buffer() == buffer.get());
      CHECK(buffer->byte_offset() == 0);

      std::vector<uint32_t> pattern(1024);
      for (uint32_t i = 0; i < pattern.size(); ++i) pattern[i] = i * 2654435761u;
      if (visible) {
        {
          StatusOr<hal::MappedRange> range = buffer->Map(hal::kAccessWrite);
          REQUIRE(range.ok());
          REQUIRE(range->bytes().size() == 4096);
          std::memcpy(range->bytes().data(), pattern.data(), 4096);
          CHECK(range->Unmap().ok());
        }
        StatusOr<hal::MappedRange> range = buffer->Map(hal::kAccessRead, 1024, 2048);
        REQUIRE(range.ok());
        CHECK(std::memcmp(range->bytes().data(), pattern.data() + 256, 2048) == 0);
      } else {
        // Without the mapping usage, mapping is refused whatever the memory.
        CheckError(buffer->Map(hal::kAccessRead).status(), StatusCode::kInvalidArgument, {"mapping"});
        Write(*device, buffer.get(), 0, pattern);
      }
      CHECK(Read<uint32_t>(*device, buffer.get(), 0, 1024) == pattern);
    }
  }
}

TEST_CASE("conformance: allocation errors") {
  FOR_EACH_DRIVER(device) {
    hal::Allocator* allocator = device->allocator();
    hal::BufferParams params;
    params.memory_types = hal::kMemoryHostCoherent;
    CheckError(allocator->Allocate(params, 64).status(), StatusCode::kInvalidArgument,
               {"host-coherent requires host-visible"});
    params = {};
    params.usage = 0;
    CheckError(allocator->Allocate(params, 64).status(), StatusCode::kInvalidArgument, {"usage"});
    params = {};
    params.memory_types = 1u << 7;
    CheckError(allocator->Allocate(params, 64).status(), StatusCode::kInvalidArgument, {"unknown memory type"});
    params = {};
    CheckError(allocator->Allocate(params, uint64_t{1} << 62).status(), StatusCode::kResourceExhausted,
               {"bytes requested"});
    // Zero bytes is a valid, empty buffer.
    StatusOr<Ref<Buffer>> empty = allocator->Allocate({}, 0);
    REQUIRE(empty.ok());
    CHECK(empty.value()->byte_length() == 0);
  }
}

TEST_CASE("conformance: subspans and mapping ranges") {
  FOR_EACH_DRIVER(device) {
    Ref<Buffer> buffer = Allocate(*device, 1024);
    Write(*device, buffer.get(), 0, std::vector<uint8_t>(1024, 0));
    StatusOr<Ref<Buffer>> subspan = buffer->Subspan(256, 512);
    REQUIRE(subspan.ok());
    Ref<Buffer> middle = std::move(subspan).value();
    CHECK(middle->byte_length() == 512);
    CHECK(middle->allocated_buffer() == buffer.get());
    CHECK(middle->byte_offset() == 256);
    // A subspan of a subspan views the allocated buffer directly.
    Ref<Buffer> inner = middle->Subspan(128, Buffer::kWholeBuffer).value();
    CHECK(inner->allocated_buffer() == buffer.get());
    CHECK(inner->byte_offset() == 384);
    CHECK(inner->byte_length() == 384);

    Write(*device, inner.get(), 0, std::vector<uint8_t>(384, 0xAB));
    std::vector<uint8_t> all = ReadBytes(*device, buffer.get(), 0, 1024);
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i] != (i >= 384 && i < 768 ? 0xAB : 0)) FAIL_CHECK("byte ", i, " is ", int(all[i]));
    }

    CheckError(buffer->Subspan(1000, 100).status(), StatusCode::kOutOfRange,
               {"[1000, 1100)", "1024-byte buffer"});
    CheckError(middle->Subspan(513, Buffer::kWholeBuffer).status(), StatusCode::kOutOfRange, {"offset 513"});
    CheckError(buffer->Map(hal::kAccessRead, 1000, 100).status(), StatusCode::kOutOfRange, {"1024-byte buffer"});
    CheckError(buffer->Map(0).status(), StatusCode::kInvalidArgument, {"access"});
  }
}

TEST_CASE("conformance: imported host memory is used in place and released last") {
  FOR_EACH_DRIVER(device) {
    alignas(64) uint32_t host[256];
    std::fill(std::begin(host), std::end(host), 7u);
    std::atomic<int> released{0};
    hal::BufferParams params;
    params.memory_types = hal::kMemoryHostVisible;
    StatusOr<Ref<Buffer>> imported = device->allocator()->Import(
        params, {reinterpret_cast<uint8_t*>(host), sizeof(host)}, [&released] { released.fetch_add(1); });
    REQUIRE_MESSAGE(imported.ok(), imported.status().ToString());
    Ref<Buffer> buffer = std::move(imported).value();
    CHECK(buffer->byte_length() == sizeof(host));
    CHECK(Read<uint32_t>(*device, buffer.get(), 0, 256) == std::vector<uint32_t>(256, 7u));

    // Device writes land in the caller's memory: no copy was made.
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    REQUIRE(command_buffer->Fill(buffer.get(), 64, 128, 0x01020304, 4).ok());
    REQUIRE(command_buffer->End().ok());
    // The command buffer keeps the buffer alive: dropping ours releases nothing.
    buffer = nullptr;
    CHECK(released.load() == 0);
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    CHECK(host[15] == 7u);
    CHECK(host[16] == 0x01020304u);
    CHECK(host[47] == 0x01020304u);
    CHECK(host[48] == 7u);
    CHECK(released.load() == 0);
    command_buffer = nullptr;
    CHECK(released.load() == 1);

    // A failed import takes nothing over.
    params.memory_types = hal::kMemoryHostCoherent;
    CheckError(device->allocator()
                   ->Import(params, {reinterpret_cast<uint8_t*>(host), sizeof(host)}, [&released] { released++; })
                   .status(),
               StatusCode::kInvalidArgument, {"host-coherent"});
    CHECK(released.load() == 1);
  }
}

TEST_CASE("conformance: read-only imports") {
  FOR_EACH_DRIVER(device) {
    static const uint32_t rodata[16] = {1, 2, 3};
    hal::BufferParams params;
    params.memory_types = hal::kMemoryHostVisible;
    params.access = hal::kAccessRead;
    params.usage = hal::kUsageTransferSource | hal::kUsageMapping | hal::kUsageDispatchStorage;
    Ref<Buffer> buffer = device->allocator()
                             ->Import(params, {const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(rodata)),
                                               sizeof(rodata)},
                                      nullptr)
                             .value();
    CHECK(buffer->allowed_access() == hal::kAccessRead);
    CheckError(buffer->Map(hal::kAccessWrite).status(), StatusCode::kFailedPrecondition, {"read-only"});
    CHECK(Read<uint32_t>(*device, buffer.get(), 0, 3) == std::vector<uint32_t>{1, 2, 3});
    Ref<Buffer> target = Allocate(*device, 64);
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    CHECK(command_buffer->Copy(buffer.get(), 0, target.get(), 0, 64).ok());
    CheckError(command_buffer->Copy(target.get(), 0, buffer.get(), 0, 64), StatusCode::kInvalidArgument,
               {"copy target", "transfer-target"});

    params.usage |= hal::kUsageTransferTarget;
    CheckError(device->allocator()
                   ->Import(params, {const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(rodata)),
                                     sizeof(rodata)},
                            nullptr)
                   .status(),
               StatusCode::kInvalidArgument, {"read-only", "transfer-target"});
  }
}

// ---------------------------------------------------------------------------
// Transfer commands

TEST_CASE("conformance: fill, copy and update with sub-ranges") {
  FOR_EACH_DRIVER(device) {
    for (hal::MemoryTypes types : {hal::kMemoryHostVisible, hal::kMemoryDeviceLocal}) {
      INFO("memory types: ", hal::DescribeMemoryTypes(types));
      Ref<Buffer> a = Allocate(*device, 256, types);
      Ref<Buffer> b = Allocate(*device, 256, types);
      Write(*device, a.get(), 0, std::vector<uint8_t>(256, 0xEE));
      Write(*device, b.get(), 0, std::vector<uint8_t>(256, 0xEE));

      Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
      REQUIRE(command_buffer->Fill(a.get(), 1, 3, 0x11, 1).ok());
      REQUIRE(command_buffer->Fill(a.get(), 8, 6, 0x2233, 2).ok());
      REQUIRE(command_buffer->Fill(a.get(), 16, 8, 0x44556677, 4).ok());
      // To the end of the buffer.
      REQUIRE(command_buffer->Fill(a.get(), 240, Buffer::kWholeBuffer, 0x99, 1).ok());
      const std::vector<uint8_t> update = {1, 2, 3, 4, 5, 6, 7, 8};
      REQUIRE(command_buffer->Update(update, a.get(), 32).ok());
      REQUIRE(command_buffer->Barrier().ok());
      // Copy what was just written, through a subspan, to an odd offset.
      Ref<Buffer> b_tail = b->Subspan(100, 100).value();
      REQUIRE(command_buffer->Copy(a.get(), 0, b_tail.get(), 3, 48).ok());
      REQUIRE(command_buffer->End().ok());
      REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());

      std::vector<uint8_t> expected_a(256, 0xEE);
      std::fill_n(expected_a.begin() + 1, 3, 0x11);
      for (int i = 8; i < 14; i += 2) expected_a[i] = 0x33, expected_a[i + 1] = 0x22;
      for (int i = 16; i < 24; i += 4) {
        expected_a[i] = 0x77, expected_a[i + 1] = 0x66, expected_a[i + 2] = 0x55, expected_a[i + 3] = 0x44;
      }
      std::fill(expected_a.begin() + 240, expected_a.end(), 0x99);
      std::copy(update.begin(), update.end(), expected_a.begin() + 32);
      CHECK(ReadBytes(*device, a.get(), 0, 256) == expected_a);
      std::vector<uint8_t> expected_b(256, 0xEE);
      std::copy_n(expected_a.begin(), 48, expected_b.begin() + 103);
      CHECK(ReadBytes(*device, b.get(), 0, 256) == expected_b);
    }
  }
}

TEST_CASE("conformance: fills and updates at any offset, through subspans") {
  FOR_EACH_DRIVER(device) {
    // GPU fills write whole words at aligned addresses (hal/gpu_commands.h);
    // a subspan at an odd offset moves every fill off that grid.
    constexpr uint64_t kSize = 256;
    std::mt19937 random(7);
    for (hal::MemoryTypes types : {hal::kMemoryHostVisible, hal::kMemoryDeviceLocal}) {
      INFO("memory types: ", hal::DescribeMemoryTypes(types));
      Ref<Buffer> buffer = Allocate(*device, kSize + 8, types);
      for (int round = 0; round < 20; ++round) {
        const uint64_t base = random() % 4;
        Ref<Buffer> view = buffer->Subspan(base, kSize).value();
        std::vector<uint8_t> expected(kSize + 8, 0xEE);
        Write(*device, buffer.get(), 0, expected);
        Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
        for (int i = 0; i < 6; ++i) {
          const uint32_t length = 1u << (random() % 3);
          const uint64_t offset = random() % (kSize / length) * length;
          const uint64_t count = random() % ((kSize - offset) / length + 1) * length;
          const uint32_t pattern =
              static_cast<uint32_t>(random()) & (length == 4 ? 0xFFFFFFFFu : (1u << (8 * length)) - 1);
          INFO("round ", round, " base ", base, " fill ", offset, "+", count, " of ", length, "-byte 0x", pattern);
          REQUIRE(command_buffer->Fill(view.get(), offset, count, pattern, length).ok());
          REQUIRE(command_buffer->Barrier().ok());
          for (uint64_t b = 0; b < count; ++b) {
            expected[base + offset + b] = static_cast<uint8_t>(pattern >> (8 * (b % length)));
          }
        }
        // An update at a 4-byte offset of the subspan, off the grid of its
        // memory unless base is 0.
        const std::vector<uint8_t> update = {1, 2, 3, 4, 5, 6, 7, 8};
        REQUIRE(command_buffer->Update(update, view.get(), 8).ok());
        std::copy(update.begin(), update.end(), expected.begin() + base + 8);
        REQUIRE(command_buffer->End().ok());
        REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
        CHECK(ReadBytes(*device, buffer.get(), 0, kSize + 8) == expected);
      }
    }
  }
}

TEST_CASE("conformance: transfer validation") {
  FOR_EACH_DRIVER(device) {
    Ref<Buffer> buffer = Allocate(*device, 256);
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    const std::vector<uint8_t> eight(8, 1);
    // Alignment.
    CheckError(command_buffer->Fill(buffer.get(), 2, 8, 0, 4), StatusCode::kInvalidArgument,
               {"offset 2", "multiples of the pattern length 4"});
    CheckError(command_buffer->Fill(buffer.get(), 0, 5, 0, 2), StatusCode::kInvalidArgument, {"length 5"});
    CheckError(command_buffer->Fill(buffer.get(), 0, 8, 0, 3), StatusCode::kInvalidArgument,
               {"1, 2 or 4 bytes, got 3"});
    CheckError(command_buffer->Fill(buffer.get(), 0, 8, 0x1FF, 1), StatusCode::kInvalidArgument,
               {"does not fit in 1 byte"});
    CheckError(command_buffer->Update(eight, buffer.get(), 2), StatusCode::kInvalidArgument,
               {"target offset 2", "multiples of 4"});
    CheckError(command_buffer->Update(std::vector<uint8_t>(6), buffer.get(), 0), StatusCode::kInvalidArgument,
               {"size 6"});
    CheckError(command_buffer->Update(std::vector<uint8_t>(CommandBuffer::kMaxUpdateSize + 4), buffer.get(), 0),
               StatusCode::kInvalidArgument, {"65540 bytes exceed the limit of 65536"});
    // Ranges.
    CheckError(command_buffer->Fill(buffer.get(), 128, 256, 0, 1), StatusCode::kOutOfRange,
               {"fill target", "[128, 384)", "256-byte buffer"});
    CheckError(command_buffer->Fill(buffer.get(), 300, Buffer::kWholeBuffer, 0, 1), StatusCode::kOutOfRange,
               {"offset 300 is past the end"});
    CheckError(command_buffer->Update(eight, buffer.get(), 252), StatusCode::kOutOfRange, {"[252, 260)"});
    Ref<Buffer> other = Allocate(*device, 64);
    CheckError(command_buffer->Copy(buffer.get(), 0, other.get(), 0, 128), StatusCode::kOutOfRange,
               {"copy target", "[0, 128)", "64-byte buffer"});
    CheckError(command_buffer->Copy(other.get(), 60, buffer.get(), 0, 8), StatusCode::kOutOfRange,
               {"copy source", "[60, 68)"});
    CheckError(command_buffer->Copy(buffer.get(), 0, buffer.get(), 4, 8), StatusCode::kInvalidArgument,
               {"overlap"});
    Ref<Buffer> alias = buffer->Subspan(4, 64).value();
    CheckError(command_buffer->Copy(buffer.get(), 0, alias.get(), 0, 8), StatusCode::kInvalidArgument,
               {"overlap"});
    CheckError(command_buffer->Copy(buffer.get(), 0, other.get(), 0, Buffer::kWholeBuffer),
               StatusCode::kInvalidArgument, {"length must be given"});
    CheckError(command_buffer->Fill(nullptr, 0, 4, 0, 1), StatusCode::kInvalidArgument, {"null"});
    // Usage.
    hal::BufferParams params;
    params.usage = hal::kUsageDispatchStorage;
    Ref<Buffer> storage_only = device->allocator()->Allocate(params, 64).value();
    CheckError(command_buffer->Fill(storage_only.get(), 0, 4, 0, 1), StatusCode::kInvalidArgument,
               {"fill target", "needs usage transfer-target", "created with dispatch-storage"});
    CheckError(storage_only->Map(hal::kAccessRead).status(), StatusCode::kInvalidArgument, {"mapping"});

    // Failed commands were not recorded: the command buffer still works.
    REQUIRE(command_buffer->Fill(buffer.get(), 0, 256, 0x5A, 1).ok());
    REQUIRE(command_buffer->End().ok());
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    CHECK(ReadBytes(*device, buffer.get(), 0, 256) == std::vector<uint8_t>(256, 0x5A));
  }
}

TEST_CASE("conformance: command buffer life cycle") {
  FOR_EACH_DRIVER(device) {
    Ref<Buffer> buffer = Allocate(*device, 64);
    Ref<CommandBuffer> command_buffer = device->CreateCommandBuffer().value();
    CHECK(command_buffer->state() == CommandBuffer::State::kInitial);
    CheckError(command_buffer->Fill(buffer.get(), 0, 64, 0, 1), StatusCode::kFailedPrecondition,
               {"not recording", "initial"});
    CheckError(command_buffer->End(), StatusCode::kFailedPrecondition, {"not recording"});
    CommandBuffer* raw = command_buffer.get();
    CheckError(device->QueueExecute({}, {}, {&raw, 1}), StatusCode::kFailedPrecondition,
               {"must be ended before it is submitted"});
    REQUIRE(command_buffer->Begin().ok());
    CheckError(device->QueueExecute({}, {}, {&raw, 1}), StatusCode::kFailedPrecondition, {"recording"});
    REQUIRE(command_buffer->Fill(buffer.get(), 0, 64, 1, 1).ok());
    REQUIRE(command_buffer->End().ok());
    CheckError(command_buffer->Fill(buffer.get(), 0, 64, 0, 1), StatusCode::kFailedPrecondition,
               {"not recording", "executable (ended)"});

    // Resubmission runs the same commands again.
    REQUIRE(SubmitAndWait(*device, raw).ok());
    Write(*device, buffer.get(), 0, std::vector<uint8_t>(64, 0));
    REQUIRE(SubmitAndWait(*device, raw).ok());
    CHECK(ReadBytes(*device, buffer.get(), 0, 64) == std::vector<uint8_t>(64, 1));

    // While a submission is pending it cannot be re-recorded.
    Ref<Semaphore> gate = CreateSemaphore(*device, 0);
    Ref<Semaphore> done = CreateSemaphore(*device, 0);
    SemaphoreValue wait{gate.get(), 1}, signal{done.get(), 1};
    REQUIRE(device->QueueExecute({&wait, 1}, {&signal, 1}, {&raw, 1}).ok());
    CheckError(command_buffer->Begin(), StatusCode::kFailedPrecondition, {"1 pending submission"});
    REQUIRE(gate->Signal(1).ok());
    REQUIRE(done->Wait(1, kTimeout).ok());
    CHECK(command_buffer->Begin().ok());
    CHECK(command_buffer->state() == CommandBuffer::State::kRecording);

    // An empty submission is valid.
    CHECK(device->QueueExecute({}, {}, {}).ok());
  }
}

// ---------------------------------------------------------------------------
// Dispatch

TEST_CASE("conformance: dispatch over 1-D workgroup counts") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    CHECK(add->entry_points().size() == 1);
    CHECK(add->entry_points()[0].binding_count == 3);
    CHECK(add->LookupEntryPoint("add_f32").value() == 0);
    CheckError(add->LookupEntryPoint("sub_f32").status(), StatusCode::kNotFound, {"sub_f32", "add_f32"});

    // (elements, elements per workgroup): one workgroup, a ragged last one,
    // and more workgroups than the 16-bit range.
    const std::pair<uint32_t, uint32_t> shapes[] = {{16, 16}, {1, 64}, {1000, 7}, {1 << 20, 16}};
    for (auto [count, group] : shapes) {
      INFO("elements ", count, " per workgroup ", group);
      Ref<Buffer> a = Allocate(*device, uint64_t{count} * 4);
      Ref<Buffer> b = Allocate(*device, uint64_t{count} * 4);
      Ref<Buffer> c = Allocate(*device, uint64_t{count} * 4);
      Write(*device, a.get(), 0, Iota(count, 0.0f));
      Write(*device, b.get(), 0, Iota(count, 0.5f));
      Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
      const uint32_t workgroups = (count + group - 1) / group;
      if (workgroups > device->info().limits.max_workgroup_count[0]) {
        // Beyond the device's limit (Vulkan guarantees 65535 only): refused
        // when recorded, with the limit named.
        CheckError(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), c.get(), count, group),
                   StatusCode::kOutOfRange, {"workgroup count x = " + std::to_string(workgroups)});
        continue;
      }
      REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), c.get(), count, group).ok());
      REQUIRE(command_buffer->End().ok());
      Status status = SubmitAndWait(*device, command_buffer.get());
      REQUIRE_MESSAGE(status.ok(), status.ToString());
      std::vector<float> result = Read<float>(*device, c.get(), 0, count);
      size_t wrong = 0;
      for (uint32_t i = 0; i < count; ++i) wrong += result[i] != 2.0f * i + 0.5f;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("conformance: dispatch over 2-D and 3-D workgroup counts") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> fill = PrepareTestKernel(*device, "fill_pattern");
    if (!fill) continue;
    const WorkgroupCount counts[] = {{1, 1, 1}, {3, 5, 1}, {1, 1, 9}, {4, 3, 2}, {64, 32, 16}, {1, 70000, 1}};
    for (WorkgroupCount count : counts) {
      INFO("workgroups ", count.x, "x", count.y, "x", count.z);
      const uint64_t cells = uint64_t{count.x} * count.y * count.z;
      Ref<Buffer> grid = Allocate(*device, cells * 16);
      if (count.y > device->info().limits.max_workgroup_count[1]) {
        Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
        const BufferBinding binding = {grid.get(), 0, Buffer::kWholeBuffer};
        CheckError(command_buffer->Dispatch(fill.get(), 0, count, {}, {&binding, 1}), StatusCode::kOutOfRange,
                   {"workgroup count y = 70000 exceeds the device's maximum"});
        continue;
      }
      Write(*device, grid.get(), 0, std::vector<uint32_t>(cells * 4, 0));
      Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
      const BufferBinding binding = {grid.get(), 0, Buffer::kWholeBuffer};
      REQUIRE(command_buffer->Dispatch(fill.get(), 0, count, {}, {&binding, 1}).ok());
      REQUIRE(command_buffer->End().ok());
      // Twice: the CPU drivers take the workgroups in descending order on
      // the second run; each cell counts its workgroup's runs.
      for (uint32_t run = 1; run <= 2; ++run) {
        Status status = SubmitAndWait(*device, command_buffer.get());
        REQUIRE_MESSAGE(status.ok(), status.ToString());
        std::vector<uint32_t> result = Read<uint32_t>(*device, grid.get(), 0, cells * 4);
        size_t wrong = 0;
        for (uint32_t z = 0; z < count.z; ++z) {
          for (uint32_t y = 0; y < count.y; ++y) {
            for (uint32_t x = 0; x < count.x; ++x) {
              const uint32_t* cell = &result[4 * ((uint64_t{z} * count.y + y) * count.x + x)];
              wrong += cell[0] != x || cell[1] != y || cell[2] != z || cell[3] != run;
            }
          }
        }
        CHECK_MESSAGE(wrong == 0, "run ", run);
      }
    }
  }
}

TEST_CASE("conformance: commands between barriers may run at once") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    Ref<hal::Executable> fail_if = PrepareTestKernel(*device, "fail_if");
    if (!add || !fail_if) continue;
    // Six additions of different sizes and workgroup counts, a fill long
    // enough to be split and a copy, none touching what another writes, with
    // no barrier between them (cpu-task spreads their workgroups and chunks
    // together over its threads); then, after a barrier, one that reads a
    // result of the first group.
    const std::pair<uint32_t, uint32_t> shapes[] = {{16, 16}, {1000, 7}, {4096, 64}, {1 << 16, 16}, {3, 1}, {777, 5}};
    std::vector<Ref<Buffer>> a, b, c;
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    for (size_t i = 0; i < std::size(shapes); ++i) {
      const auto [count, group] = shapes[i];
      a.push_back(Allocate(*device, uint64_t{count} * 4));
      b.push_back(Allocate(*device, uint64_t{count} * 4));
      c.push_back(Allocate(*device, uint64_t{count} * 4));
      Write(*device, a.back().get(), 0, Iota(count, float(i)));
      Write(*device, b.back().get(), 0, Iota(count, 0.5f));
      REQUIRE(RecordAdd(command_buffer.get(), add.get(), a[i].get(), b[i].get(), c[i].get(), count, group).ok());
    }
    constexpr uint64_t kFillBytes = uint64_t{3} << 20, kCopyBytes = 4096;
    Ref<Buffer> filled = Allocate(*device, kFillBytes);
    Ref<Buffer> source = Allocate(*device, kCopyBytes);
    Ref<Buffer> target = Allocate(*device, kCopyBytes);
    std::vector<uint8_t> pattern(kCopyBytes);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 7);
    WriteBytes(*device, source.get(), 0, pattern);
    REQUIRE(command_buffer->Fill(filled.get(), 0, kFillBytes, 0x5A, 1).ok());
    REQUIRE(command_buffer->Copy(source.get(), 0, target.get(), 0, kCopyBytes).ok());
    REQUIRE(command_buffer->Barrier().ok());
    Ref<Buffer> d = Allocate(*device, uint64_t{1 << 16} * 4);
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), c[3].get(), b[3].get(), d.get(), 1 << 16, 16).ok());
    REQUIRE(command_buffer->End().ok());
    Status status = SubmitAndWait(*device, command_buffer.get());
    REQUIRE_MESSAGE(status.ok(), status.ToString());
    for (size_t i = 0; i < std::size(shapes); ++i) {
      const uint32_t count = shapes[i].first;
      std::vector<float> result = Read<float>(*device, c[i].get(), 0, count);
      size_t wrong = 0;
      for (uint32_t j = 0; j < count; ++j) wrong += result[j] != float(i) + 2.0f * j + 0.5f;
      CHECK_MESSAGE(wrong == 0, "addition ", i);
    }
    std::vector<float> sum = Read<float>(*device, d.get(), 0, 1 << 16);
    size_t wrong = 0;
    for (uint32_t j = 0; j < (1u << 16); ++j) wrong += sum[j] != 3.0f + 3.0f * j + 1.0f;
    CHECK(wrong == 0);
    CHECK(ReadBytes(*device, filled.get(), 0, kFillBytes) == std::vector<uint8_t>(kFillBytes, 0x5A));
    CHECK(ReadBytes(*device, target.get(), 0, kCopyBytes) == pattern);

    // Submitted again and again (cpu-task runs a group split, then alone,
    // then whichever way was faster, sometimes the other, and the whole
    // command buffer so or in order on one thread, as it chooses likewise),
    // with the results cleared before each submission, it computes them
    // every time.
    for (int round = 0; round < 40; ++round) {
      for (size_t i = 0; i < std::size(shapes); ++i) Write(*device, c[i].get(), 0, std::vector<float>(shapes[i].first, -1.0f));
      Write(*device, d.get(), 0, std::vector<float>(1 << 16, -1.0f));
      status = SubmitAndWait(*device, command_buffer.get());
      REQUIRE_MESSAGE(status.ok(), status.ToString());
      size_t wrong_again = 0;
      for (size_t i = 0; i < std::size(shapes); ++i) {
        std::vector<float> result = Read<float>(*device, c[i].get(), 0, shapes[i].first);
        for (uint32_t j = 0; j < shapes[i].first; ++j) wrong_again += result[j] != float(i) + 2.0f * j + 0.5f;
      }
      sum = Read<float>(*device, d.get(), 0, 1 << 16);
      for (uint32_t j = 0; j < (1u << 16); ++j) wrong_again += sum[j] != 3.0f + 3.0f * j + 1.0f;
      CHECK_MESSAGE(wrong_again == 0, "round ", round);
    }

    // A failing dispatch among others that may run beside it fails the
    // submission with its error, every time.
    Ref<CommandBuffer> failing = BeginCommandBuffer(*device);
    REQUIRE(RecordAdd(failing.get(), add.get(), a[3].get(), b[3].get(), c[3].get(), 1 << 16, 16).ok());
    const uint32_t code[] = {9};
    REQUIRE(failing->Dispatch(fail_if.get(), 0, {3, 2, 1}, code, {}).ok());
    REQUIRE(RecordAdd(failing.get(), add.get(), a[1].get(), b[1].get(), c[1].get(), 1000, 7).ok());
    REQUIRE(failing->End().ok());
    for (int round = 0; round < 5; ++round) {
      CheckError(SubmitAndWait(*device, failing.get()), StatusCode::kAborted, {"dispatch of 'fail_if'", "returned 9"});
    }
  }
}

TEST_CASE("conformance: dispatch bindings, constants and imports") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    Ref<hal::Executable> scale_exp = PrepareTestKernel(*device, "scale_exp");
    if (!add || !scale_exp) continue;
    const uint64_t alignment = device->info().limits.min_binding_alignment;
    // Bindings at offsets into larger buffers, and whole-buffer lengths.
    Ref<Buffer> a = Allocate(*device, 4096);
    Ref<Buffer> out = Allocate(*device, 4096);
    // Small, exactly representable inputs: a[i] = i / 64.
    std::vector<float> inputs(1024);
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = i / 64.0f;
    Write(*device, a.get(), 0, inputs);
    Write(*device, out.get(), 0, std::vector<float>(1024, -1.0f));
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    const uint64_t offset = 4 * alignment;  // in bytes
    const uint32_t count = 100;
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), a.get(), out.get(), count, 8, offset).ok());
    REQUIRE(command_buffer->Barrier().ok());
    // Then a[0, count) = 0.5 * exp(out[first, first + count)), which also
    // calls expf imported from the runtime.
    const float scale = 0.5f;
    uint32_t scale_bits;
    std::memcpy(&scale_bits, &scale, 4);
    const uint32_t constants[] = {scale_bits, 32};
    const BufferBinding bindings[] = {{out.get(), offset, count * 4}, {a.get(), 0, count * 4}};
    REQUIRE(command_buffer->Dispatch(scale_exp.get(), 0, {4, 1, 1}, constants, bindings).ok());
    REQUIRE(command_buffer->End().ok());
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    std::vector<float> sums = Read<float>(*device, out.get(), 0, 1024);
    std::vector<float> exps = Read<float>(*device, a.get(), 0, count);
    const size_t first = offset / 4;
    for (size_t i = 0; i < 1024; ++i) {
      float expected = (i >= first && i < first + count) ? i / 32.0f : -1.0f;
      if (sums[i] != expected) FAIL_CHECK("sum ", i, " is ", sums[i], ", expected ", expected);
    }
    for (size_t i = 0; i < count; ++i) {
      float expected = 0.5f * std::exp((first + i) / 32.0f);
      if (std::fabs(exps[i] - expected) > 1e-5f * expected) FAIL_CHECK("exp ", i, " is ", exps[i]);
    }
  }
}

TEST_CASE("conformance: dispatch validation") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    Ref<Buffer> buffer = Allocate(*device, 1024);
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    const uint32_t constants[] = {16};
    BufferBinding bindings[] = {{buffer.get(), 0, 64}, {buffer.get(), 64, 64}, {buffer.get(), 128, 64}};
    CheckError(command_buffer->Dispatch(add.get(), 1, {1, 1, 1}, constants, bindings), StatusCode::kOutOfRange,
               {"entry point 1 is out of range", "has 1 entry points"});
    CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, {bindings, 2}),
               StatusCode::kInvalidArgument, {"dispatch of 'add_f32'", "expected 3 bindings, got 2"});
    CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, {}, bindings), StatusCode::kInvalidArgument,
               {"expected 1 push constants, got 0"});
    bindings[2].offset = 1000;
    CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, bindings), StatusCode::kInvalidArgument,
               {"binding 2 offset 1000 is not a multiple"});
    bindings[2].offset = 1024 - 16;
    CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, bindings), StatusCode::kOutOfRange,
               {"binding 2", "[1008, 1072)", "1024-byte buffer"});
    bindings[2] = {nullptr, 0, 64};
    CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, bindings), StatusCode::kInvalidArgument,
               {"binding 2 buffer is null"});
    bindings[2] = {buffer.get(), 128, 64};
    CheckError(command_buffer->Dispatch(nullptr, 0, {1, 1, 1}, constants, bindings), StatusCode::kInvalidArgument,
               {"executable is null"});
    const uint32_t max_x = device->info().limits.max_workgroup_count[0];
    if (max_x < UINT32_MAX) {
      CheckError(command_buffer->Dispatch(add.get(), 0, {max_x + 1, 1, 1}, constants, bindings),
                 StatusCode::kOutOfRange, {"workgroup count x", "exceeds the device's maximum"});
    }
    // Read-only memory may be bound only where the kernel only reads.
    static const float rodata[16] = {};
    hal::BufferParams params;
    params.access = hal::kAccessRead;
    params.usage = hal::kUsageDispatchStorage | hal::kUsageTransferSource;
    Ref<Buffer> readonly =
        device->allocator()
            ->Import(params, {const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(rodata)), sizeof(rodata)}, nullptr)
            .value();
    BufferBinding ro_bindings[] = {{readonly.get(), 0, 64}, {readonly.get(), 0, 64}, {buffer.get(), 0, 64}};
    CHECK(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, ro_bindings).ok());
    ro_bindings[2] = {readonly.get(), 0, 64};
    CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, ro_bindings),
               StatusCode::kFailedPrecondition, {"binding 2", "read-only and cannot be written"});
    // A zero workgroup count records nothing and is valid.
    CHECK(command_buffer->Dispatch(add.get(), 0, {0, 1, 1}, constants, bindings).ok());
  }
}

// ---------------------------------------------------------------------------
// Semaphores and submission

TEST_CASE("conformance: semaphore values, signals and timeouts") {
  FOR_EACH_DRIVER(device) {
    Ref<Semaphore> semaphore = CreateSemaphore(*device, 5);
    CHECK(semaphore->Query().value() == 5);
    CHECK(semaphore->Wait(5, std::chrono::nanoseconds(0)).ok());
    CHECK(semaphore->Wait(3, kTimeout).ok());
    CheckError(semaphore->Wait(6, std::chrono::nanoseconds(0)), StatusCode::kDeadlineExceeded,
               {"value 6 not reached", "current value 5"});
    auto start = std::chrono::steady_clock::now();
    CheckError(semaphore->Wait(6, std::chrono::milliseconds(20)), StatusCode::kDeadlineExceeded,
               {"not reached within 20000000 ns"});
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(20));
    CheckError(semaphore->Signal(5), StatusCode::kFailedPrecondition, {"value 5 is not greater than", "5"});
    CHECK(semaphore->Signal(7).ok());
    CHECK(semaphore->Query().value() == 7);

    // A waiter blocked on another thread wakes when the value is reached.
    std::thread signaller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      CHECK(semaphore->Signal(8).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      CHECK(semaphore->Signal(10).ok());
    });
    CHECK(semaphore->Wait(10, kTimeout).ok());
    signaller.join();
    CHECK(semaphore->Query().value() == 10);
    CHECK(semaphore->Wait(UINT64_MAX, std::chrono::nanoseconds(1)).code() == StatusCode::kDeadlineExceeded);

    // Submitting a signal to a value not above the current one is refused.
    SemaphoreValue signal{semaphore.get(), 10};
    CheckError(device->QueueExecute({}, {&signal, 1}, {}), StatusCode::kInvalidArgument,
               {"would go from 10 to 10"});
  }
}

TEST_CASE("conformance: submissions are ordered by semaphores") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    // A chain of steps, each adding 1 to an accumulator and copying it into a
    // history slot; submitted last-first, released by one host signal.
    constexpr uint32_t kSteps = 32;
    Ref<Buffer> accumulator = Allocate(*device, 64);
    Ref<Buffer> ones = Allocate(*device, 64);
    Ref<Buffer> history = Allocate(*device, kSteps * 64);
    Write(*device, accumulator.get(), 0, std::vector<float>(16, 0.0f));
    Write(*device, ones.get(), 0, std::vector<float>(16, 1.0f));
    Ref<Semaphore> timeline = CreateSemaphore(*device, 0);
    std::vector<Ref<CommandBuffer>> steps;
    for (uint32_t i = 0; i < kSteps; ++i) {
      Ref<CommandBuffer> step = BeginCommandBuffer(*device);
      REQUIRE(RecordAdd(step.get(), add.get(), accumulator.get(), ones.get(), accumulator.get(), 16, 16).ok());
      REQUIRE(step->Barrier().ok());
      REQUIRE(step->Copy(accumulator.get(), 0, history.get(), i * 64, 64).ok());
      REQUIRE(step->End().ok());
      steps.push_back(std::move(step));
    }
    for (uint32_t i = kSteps; i-- > 0;) {
      SemaphoreValue wait{timeline.get(), i + 1}, signal{timeline.get(), i + 2};
      CommandBuffer* raw = steps[i].get();
      REQUIRE(device->QueueExecute({&wait, 1}, {&signal, 1}, {&raw, 1}).ok());
    }
    CHECK(timeline->Query().value() == 0);
    REQUIRE(timeline->Signal(1).ok());
    REQUIRE(timeline->Wait(kSteps + 1, kTimeout).ok());
    std::vector<float> result = Read<float>(*device, history.get(), 0, kSteps * 16);
    for (uint32_t i = 0; i < kSteps; ++i) {
      if (result[i * 16] != i + 1.0f || result[i * 16 + 15] != i + 1.0f) {
        FAIL_CHECK("step ", i, " saw ", result[i * 16], ", expected ", i + 1);
      }
    }

    // Several waits and several signals on one submission.
    Ref<Semaphore> left = CreateSemaphore(*device, 0);
    Ref<Semaphore> right = CreateSemaphore(*device, 10);
    Ref<Semaphore> out1 = CreateSemaphore(*device, 0);
    Ref<Semaphore> out2 = CreateSemaphore(*device, 100);
    Ref<CommandBuffer> fill = BeginCommandBuffer(*device);
    REQUIRE(fill->Fill(accumulator.get(), 0, 64, 0, 1).ok());
    REQUIRE(fill->End().ok());
    const SemaphoreValue waits[] = {{left.get(), 1}, {right.get(), 11}};
    const SemaphoreValue signals[] = {{out1.get(), 1}, {out2.get(), 101}};
    CommandBuffer* raw = fill.get();
    REQUIRE(device->QueueExecute(waits, signals, {&raw, 1}).ok());
    REQUIRE(left->Signal(1).ok());
    CHECK(out1->Wait(1, std::chrono::milliseconds(10)).code() == StatusCode::kDeadlineExceeded);
    REQUIRE(right->Signal(11).ok());
    CHECK(out1->Wait(1, kTimeout).ok());
    CHECK(out2->Wait(101, kTimeout).ok());
    CHECK(Read<float>(*device, accumulator.get(), 0, 16) == std::vector<float>(16, 0.0f));
  }
}

TEST_CASE("conformance: failure propagation") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> fail_if = PrepareTestKernel(*device, "fail_if");
    if (!fail_if) continue;
    Ref<Buffer> untouched = Allocate(*device, 64);
    Write(*device, untouched.get(), 0, std::vector<uint8_t>(64, 0x11));

    // A: a dispatch that fails with code 7, then a fill that must not run.
    Ref<CommandBuffer> a = BeginCommandBuffer(*device);
    const uint32_t code[] = {7};
    REQUIRE(a->Dispatch(fail_if.get(), 0, {3, 2, 1}, code, {}).ok());
    REQUIRE(a->Barrier().ok());
    REQUIRE(a->Fill(untouched.get(), 0, 64, 0x22, 1).ok());
    REQUIRE(a->End().ok());
    // B waits for A; C waits for B: neither may run, both fail with A's error.
    Ref<CommandBuffer> b = BeginCommandBuffer(*device);
    REQUIRE(b->Fill(untouched.get(), 0, 32, 0x33, 1).ok());
    REQUIRE(b->End().ok());
    Ref<Semaphore> s1 = CreateSemaphore(*device, 0);
    Ref<Semaphore> s2 = CreateSemaphore(*device, 0);
    Ref<Semaphore> s3 = CreateSemaphore(*device, 0);
    CommandBuffer* raw_a = a.get();
    CommandBuffer* raw_b = b.get();
    SemaphoreValue wait_b{s2.get(), 1}, signal_b{s3.get(), 1};
    SemaphoreValue wait_a{s1.get(), 1}, signal_a{s2.get(), 1};
    REQUIRE(device->QueueExecute({&wait_b, 1}, {&signal_b, 1}, {&raw_b, 1}).ok());
    REQUIRE(device->QueueExecute({&wait_a, 1}, {&signal_a, 1}, {&raw_a, 1}).ok());
    REQUIRE(s1->Signal(1).ok());

    Status status = s3->Wait(1, kTimeout);
    CheckError(status, StatusCode::kAborted, {"dispatch of 'fail_if'", "returned 7"});
    // The CPU drivers know which workgroup failed; a GPU kernel reports
    // through one check-status word for the whole dispatch, without it.
    if (device->info().executable_formats[0].starts_with("cpu-elf-")) {
      CHECK(status.message().find("workgroup (") != std::string::npos);
    }
    CHECK(s2->Wait(1, kTimeout).ToString() == status.ToString());
    CHECK(s2->Query().status().ToString() == status.ToString());
    CHECK(s3->Query().status().code() == StatusCode::kAborted);
    // A failed semaphore stays failed.
    CheckError(s2->Signal(2), StatusCode::kAborted, {"returned 7"});
    // Values it had reached before failing still count as reached.
    CHECK(s1->Wait(1, kTimeout).ok());
    CHECK(ReadBytes(*device, untouched.get(), 0, 64) == std::vector<uint8_t>(64, 0x11));

    // The command buffers are free again once their submissions failed.
    CHECK(a->Begin().ok());
    CHECK(b->Begin().ok());

    // The host can fail a semaphore too; work waiting on it fails the same way.
    Ref<Semaphore> gate = CreateSemaphore(*device, 0);
    Ref<Semaphore> out = CreateSemaphore(*device, 0);
    REQUIRE(b->Fill(untouched.get(), 0, 32, 0x44, 1).ok());
    REQUIRE(b->End().ok());
    SemaphoreValue wait{gate.get(), 1}, signal{out.get(), 1};
    REQUIRE(device->QueueExecute({&wait, 1}, {&signal, 1}, {&raw_b, 1}).ok());
    gate->Fail(DataLossError("input stream broke"));
    CheckError(out->Wait(1, kTimeout), StatusCode::kDataLoss, {"input stream broke"});
    // A submission waiting on an already failed semaphore fails at once.
    Ref<Semaphore> late = CreateSemaphore(*device, 0);
    SemaphoreValue late_signal{late.get(), 1};
    REQUIRE(device->QueueExecute({&wait, 1}, {&late_signal, 1}, {&raw_b, 1}).ok());
    CheckError(late->Wait(1, kTimeout), StatusCode::kDataLoss, {"input stream broke"});
    CHECK(ReadBytes(*device, untouched.get(), 0, 64) == std::vector<uint8_t>(64, 0x11));
  }
}

// Streamed command buffers (hal::Device::CreateStreamedCommandBuffer), which
// a device may run while they are recorded: results as recorded ones give,
// also past what a CPU one reserves for its helper (512 commands), a
// failure stopping the rest, a submission with waits refused, and one
// dropped while recording.
void CheckStreamedCommandBuffers(hal::Device& device) {
  Ref<hal::Executable> add = PrepareTestKernel(device, "add_f32");
  Ref<hal::Executable> fail_if = PrepareTestKernel(device, "fail_if");
  if (!add || !fail_if) return;
  constexpr uint32_t kCount = 1000;
  Ref<Buffer> a = Allocate(device, kCount * 4);
  Ref<Buffer> b = Allocate(device, kCount * 4);
  Ref<Buffer> c = Allocate(device, kCount * 4);
  Ref<Buffer> d = Allocate(device, kCount * 4);
  Ref<Buffer> e = Allocate(device, kCount * 4);
  auto begin = [&] {
    StatusOr<Ref<CommandBuffer>> command_buffer = device.CreateStreamedCommandBuffer();
    REQUIRE(command_buffer.ok());
    CHECK((*command_buffer)->streamed());
    REQUIRE((*command_buffer)->Begin().ok());
    return std::move(command_buffer).value();
  };
  // The same recording, called again and again as a program's function is
  // (cpu-task decides by such repetitions whether to stream): c = a + b,
  // d = c, e = c + d.
  for (int call = 0; call < 24; ++call) {
    INFO("call ", call);
    Write(device, a.get(), 0, Iota(kCount, float(call)));
    Write(device, b.get(), 0, Iota(kCount, 0.5f));
    Ref<CommandBuffer> command_buffer = begin();
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), c.get(), kCount, 16).ok());
    REQUIRE(command_buffer->Barrier().ok());
    REQUIRE(command_buffer->Copy(c.get(), 0, d.get(), 0, kCount * 4).ok());
    REQUIRE(command_buffer->Barrier().ok());
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), c.get(), d.get(), e.get(), kCount, 16).ok());
    REQUIRE(command_buffer->End().ok());
    Status status = SubmitAndWait(device, command_buffer.get());
    REQUIRE_MESSAGE(status.ok(), status.ToString());
    std::vector<float> result = Read<float>(device, e.get(), 0, kCount);
    size_t wrong = 0;
    for (uint32_t i = 0; i < kCount; ++i) wrong += result[i] != 2.0f * (2.0f * i + call + 0.5f);
    CHECK(wrong == 0);
  }
  // 700 commands: c = a + b, then c += b 349 times.
  {
    Write(device, a.get(), 0, Iota(kCount, 0.0f));
    Write(device, b.get(), 0, std::vector<float>(kCount, 1.0f));
    Ref<CommandBuffer> command_buffer = begin();
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), c.get(), kCount, 16).ok());
    for (int i = 1; i < 350; ++i) {
      REQUIRE(command_buffer->Barrier().ok());
      REQUIRE(RecordAdd(command_buffer.get(), add.get(), c.get(), b.get(), c.get(), kCount, 16).ok());
    }
    REQUIRE(command_buffer->End().ok());
    REQUIRE(SubmitAndWait(device, command_buffer.get()).ok());
    std::vector<float> result = Read<float>(device, c.get(), 0, kCount);
    size_t wrong = 0;
    for (uint32_t i = 0; i < kCount; ++i) wrong += result[i] != float(i) + 350.0f;
    CHECK(wrong == 0);
    // Submitted again, it runs again, on what its buffers hold then.
    Write(device, a.get(), 0, Iota(kCount, 1000.0f));
    REQUIRE(SubmitAndWait(device, command_buffer.get()).ok());
    CHECK(Read<float>(device, c.get(), 0, 1)[0] == 1350.0f);
  }
  // A failing dispatch stops the rest: the fill after it never runs.
  {
    Write(device, d.get(), 0, std::vector<float>(kCount, 3.0f));
    Ref<CommandBuffer> command_buffer = begin();
    const uint32_t code[] = {9};
    REQUIRE(command_buffer->Dispatch(fail_if.get(), 0, {2, 1, 1}, code, {}).ok());
    REQUIRE(command_buffer->Barrier().ok());
    REQUIRE(command_buffer->Fill(d.get(), 0, kCount * 4, 0, 4).ok());
    REQUIRE(command_buffer->End().ok());
    CheckError(SubmitAndWait(device, command_buffer.get()), StatusCode::kAborted, {"returned 9"});
    CHECK(Read<float>(device, d.get(), 0, kCount) == std::vector<float>(kCount, 3.0f));
  }
  // Its submission may not wait.
  {
    Ref<CommandBuffer> command_buffer = begin();
    REQUIRE(command_buffer->Fill(d.get(), 0, kCount * 4, 0, 4).ok());
    REQUIRE(command_buffer->End().ok());
    Ref<Semaphore> gate = CreateSemaphore(device, 1);
    Ref<Semaphore> done = CreateSemaphore(device, 0);
    SemaphoreValue wait{gate.get(), 1}, signal{done.get(), 1};
    CommandBuffer* raw = command_buffer.get();
    CheckError(device.QueueExecute({&wait, 1}, {&signal, 1}, {&raw, 1}), StatusCode::kFailedPrecondition,
               {"created streamed", "cannot wait; got 1 wait"});
  }
  // Dropped while recording, and begun again while recording.
  for (int i = 0; i < 3; ++i) {
    Ref<CommandBuffer> command_buffer = begin();
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), c.get(), kCount, 16).ok());
    REQUIRE(command_buffer->Begin().ok());
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), c.get(), kCount, 16).ok());
  }
}

TEST_CASE("conformance: streamed command buffers") {
  FOR_EACH_DRIVER(device) { CheckStreamedCommandBuffers(*device); }
}

#if STRATA_DRIVER_CPU_TASK
// cpu-task running every streamed command buffer as it is recorded
// (stream=always), and never (stream=never).
TEST_CASE("cpu-task: streamed command buffers, always and never streamed") {
  for (const char* spec : {"cpu-task?threads=2&stream=always", "cpu-task?threads=3&stream=always",
                           "cpu-task?threads=2&stream=never"}) {
    INFO(spec);
    CheckStreamedCommandBuffers(*CreateDevice(spec));
  }
  // A device destroyed while a streamed command buffer records (its helper
  // waiting for more): the helper leaves, and the command buffer can be
  // dropped later.
  Ref<hal::Device> device = CreateDevice("cpu-task?threads=2&stream=always");
  Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
  REQUIRE(add);
  Ref<Buffer> a = Allocate(*device, 64);
  StatusOr<Ref<CommandBuffer>> command_buffer = device->CreateStreamedCommandBuffer();
  REQUIRE(command_buffer.ok());
  REQUIRE((*command_buffer)->Begin().ok());
  REQUIRE(RecordAdd(command_buffer->get(), add.get(), a.get(), a.get(), a.get(), 16, 16).ok());
  add = nullptr;
  device = nullptr;
  command_buffer = Ref<CommandBuffer>();
}
#endif

// Indirect command buffers: recorded once with slots, submitted with other
// buffers each time (binding tables), and every table that does not fit
// what the recording needs refused at submission.
void CheckIndirectCommandBuffers(hal::Device& device) {
  Ref<hal::Executable> add = PrepareTestKernel(device, "add_f32");
  if (!add) return;
  constexpr uint32_t kCount = 256;
  constexpr uint64_t kBytes = kCount * 4;
  Ref<Buffer> a = Allocate(device, kBytes);
  Ref<Buffer> b1 = Allocate(device, kBytes);
  Ref<Buffer> c1 = Allocate(device, kBytes);
  Ref<Buffer> b2 = Allocate(device, 2 * kBytes);
  Ref<Buffer> c2 = Allocate(device, 2 * kBytes);
  StatusOr<Ref<CommandBuffer>> made = device.CreateIndirectCommandBuffer();
  REQUIRE(made.ok());
  Ref<CommandBuffer> command_buffer = std::move(made).value();
  CHECK(command_buffer->indirect());
  // c = a + b, then c = c + a: slot 0 is b, slot 1 is c.
  const uint32_t constants[] = {16};
  REQUIRE(command_buffer->Begin().ok());
  const BufferBinding first[] = {{a.get(), 0, kBytes}, BufferBinding::Slot(0), BufferBinding::Slot(1, 0, kBytes)};
  REQUIRE(command_buffer->Dispatch(add.get(), 0, {kCount / 16, 1, 1}, constants, first).ok());
  REQUIRE(command_buffer->Barrier().ok());
  const BufferBinding second[] = {BufferBinding::Slot(1, 0, kBytes), {a.get(), 0, kBytes}, BufferBinding::Slot(1)};
  REQUIRE(command_buffer->Dispatch(add.get(), 0, {kCount / 16, 1, 1}, constants, second).ok());
  REQUIRE(command_buffer->End().ok());
  CHECK(command_buffer->slot_count() == 2);

  auto submit = [&](std::span<CommandBuffer* const> command_buffers,
                    std::span<const std::span<const BufferBinding>> tables) {
    Ref<Semaphore> done = CreateSemaphore(device, 0);
    SemaphoreValue signal{done.get(), 1};
    STRATA_RETURN_IF_ERROR(device.QueueExecute({}, {&signal, 1}, command_buffers, tables));
    return done->Wait(1, std::chrono::seconds(10));
  };
  CommandBuffer* raw = command_buffer.get();
  auto check = [&](Buffer* c, uint64_t offset, float start) {
    std::vector<float> result = Read<float>(device, c, offset, kCount);
    size_t wrong = 0;
    for (uint32_t i = 0; i < kCount; ++i) wrong += result[i] != 2.0f * (float(i) + start) + (float(i) + 0.5f);
    CHECK(wrong == 0);
  };
  for (int round = 0; round < 4; ++round) {
    INFO("round ", round);
    Write(device, a.get(), 0, Iota(kCount, float(round)));
    Write(device, b1.get(), 0, Iota(kCount, 0.5f));
    Write(device, b2.get(), kBytes, Iota(kCount, 0.5f));
    // The second half of b2 and c2 (an entry's offset), or b1 and c1 whole.
    const BufferBinding in_halves[] = {{b2.get(), kBytes, Buffer::kWholeBuffer}, {c2.get(), kBytes, kBytes}};
    const BufferBinding whole[] = {{b1.get(), 0, Buffer::kWholeBuffer}, {c1.get(), 0, Buffer::kWholeBuffer}};
    const std::span<const BufferBinding> table = round % 2 ? std::span<const BufferBinding>(in_halves) : whole;
    Status status = submit({&raw, 1}, {&table, 1});
    REQUIRE_MESSAGE(status.ok(), status.ToString());
    if (round % 2) check(c2.get(), kBytes, float(round));
    else check(c1.get(), 0, float(round));
  }
  // The same command buffer twice in one submission, with two tables.
  {
    Write(device, a.get(), 0, Iota(kCount, 7.0f));
    const BufferBinding one[] = {{b1.get(), 0, kBytes}, {c1.get(), 0, kBytes}};
    const BufferBinding two[] = {{b2.get(), kBytes, kBytes}, {c2.get(), 0, kBytes}};
    CommandBuffer* both[] = {raw, raw};
    const std::span<const BufferBinding> tables[] = {one, two};
    REQUIRE(submit(both, tables).ok());
    check(c1.get(), 0, 7.0f);
    check(c2.get(), 0, 7.0f);
  }
  // Tables that do not fit: refused, naming the slot and what it lacks.
  auto refused = [&](std::span<const BufferBinding> table) { return submit({&raw, 1}, {&table, 1}); };
  CheckError(refused({}), StatusCode::kInvalidArgument, {"command buffer 0", "binding table has 0 entries", "at least 2"});
  {
    // (Slot 0's bindings take the whole entry, however long: the kernel
    // checks their lengths.)
    const BufferBinding short_entry[] = {{b1.get(), 0, kBytes}, {c1.get(), 0, 64}};
    CheckError(refused(short_entry), StatusCode::kOutOfRange,
               {"binding table slot 1 holds 64 bytes", "binding 2 of dispatch 0 needs 1024 bytes"});
    const BufferBinding past_end[] = {{b1.get(), 0, kBytes}, {c2.get(), kBytes + 512, Buffer::kWholeBuffer}};
    CheckError(refused(past_end), StatusCode::kOutOfRange, {"binding table slot 1 holds 512 bytes", "needs 1024"});
    const BufferBinding null_entry[] = {{b1.get(), 0, kBytes}, {}};
    CheckError(refused(null_entry), StatusCode::kInvalidArgument, {"binding table slot 1 buffer is null"});
    const BufferBinding misaligned[] = {{b2.get(), 4, kBytes}, {c1.get(), 0, kBytes}};
    CheckError(refused(misaligned), StatusCode::kInvalidArgument, {"slot 0 offset 4", "binding alignment"});
    const BufferBinding slot_entry[] = {BufferBinding::Slot(1), {c1.get(), 0, kBytes}};
    CheckError(refused(slot_entry), StatusCode::kInvalidArgument, {"slot 0 names slot 1"});
  }
  CheckError(device.QueueExecute({}, {}, {&raw, 1}), StatusCode::kInvalidArgument,
             {"binding table has 0 entries"});
  {
    const BufferBinding fine[] = {{b1.get(), 0, kBytes}, {c1.get(), 0, kBytes}};
    const std::span<const BufferBinding> tables[] = {fine, fine};
    CheckError(device.QueueExecute({}, {}, {&raw, 1}, tables), StatusCode::kInvalidArgument,
               {"2 binding tables for 1 command buffers"});
  }
  // Slots only in indirect command buffers, and tables only for them.
  Ref<CommandBuffer> direct = BeginCommandBuffer(device);
  CheckError(direct->Dispatch(add.get(), 0, {kCount / 16, 1, 1}, constants, first), StatusCode::kInvalidArgument,
             {"binding 1 names binding table slot 0", "not indirect"});
  REQUIRE(RecordAdd(direct.get(), add.get(), a.get(), b1.get(), c1.get(), kCount, 16).ok());
  REQUIRE(direct->End().ok());
  {
    const BufferBinding fine[] = {{b1.get(), 0, kBytes}};
    const std::span<const BufferBinding> table = fine;
    CommandBuffer* plain = direct.get();
    CheckError(device.QueueExecute({}, {}, {&plain, 1}, {&table, 1}), StatusCode::kInvalidArgument,
               {"command buffer 0 is not indirect", "got 1 entries"});
  }
  REQUIRE(command_buffer->Begin().ok());
  const BufferBinding both_ways[] = {{a.get(), 0, kBytes}, {b1.get(), 0, kBytes, 0}, {c1.get(), 0, kBytes}};
  CheckError(command_buffer->Dispatch(add.get(), 0, {kCount / 16, 1, 1}, constants, both_ways),
             StatusCode::kInvalidArgument, {"binding 1 names both a buffer and binding table slot 0"});
  const BufferBinding far_slot[] = {{a.get(), 0, kBytes}, BufferBinding::Slot(5000), {c1.get(), 0, kBytes}};
  CheckError(command_buffer->Dispatch(add.get(), 0, {kCount / 16, 1, 1}, constants, far_slot),
             StatusCode::kOutOfRange, {"names slot 5000", "at most 4096"});
}

TEST_CASE("conformance: indirect command buffers") {
  FOR_EACH_DRIVER(device) { CheckIndirectCommandBuffers(*device); }
}

TEST_CASE("conformance: CPU kernels get the local memory they declare") {
  FOR_EACH_DRIVER(device) {
    const std::string format = device->info().executable_formats[0];
    if (!format.starts_with("cpu-elf-")) continue;
    // fail_if declaring 1 MiB of local memory per thread: every thread that
    // runs a workgroup holds that much (compiled kernels check the size and
    // return 3 when it is short; fail_if returns what it is told).
    hal::ExecutableParams params;
    params.name = "local";
    params.format = format;
    params.data = HostKernelElf("fail_if");
    std::vector<uint8_t> metadata = CpuMetadata("fail_if", 0, 1, {}, {}, uint64_t{1} << 20);
    params.metadata = metadata;
    StatusOr<Ref<hal::Executable>> executable = device->PrepareExecutable(params);
    REQUIRE(executable.ok());
    CHECK((*executable)->entry_points()[0].local_memory_bytes == uint64_t{1} << 20);
    Ref<CommandBuffer> runs = BeginCommandBuffer(*device);
    const uint32_t ok[] = {0};
    REQUIRE(runs->Dispatch(executable->get(), 0, {64, 1, 1}, ok, {}).ok());
    REQUIRE(runs->End().ok());
    CHECK(SubmitAndWait(*device, runs.get()).ok());
    // Return code 3: the kernel found less local memory than it needs.
    Ref<CommandBuffer> short_of_memory = BeginCommandBuffer(*device);
    const uint32_t three[] = {3};
    REQUIRE(short_of_memory->Dispatch(executable->get(), 0, {1, 1, 1}, three, {}).ok());
    REQUIRE(short_of_memory->End().ok());
    CheckError(SubmitAndWait(*device, short_of_memory.get()), StatusCode::kDataLoss,
               {"dispatch of 'fail_if'", "more local memory than the 1048576 bytes its metadata declares"});
  }
}

TEST_CASE("conformance: cpu-sync takes workgroups in descending order on every second run") {
  FOR_EACH_DRIVER(device) {
    if (device->info().driver != "cpu-sync") continue;
    // fail_if failing in every workgroup: the error names the first to run.
    // With ascending_workgroups in its metadata (a kernel that prefetches
    // what the next workgroup reads), always the first.
    for (bool ascending : {false, true}) {
      INFO("ascending_workgroups ", ascending);
      hal::ExecutableParams params;
      params.name = "order";
      params.format = device->info().executable_formats[0];
      params.data = HostKernelElf("fail_if");
      std::vector<uint8_t> metadata = CpuMetadata("fail_if", 0, 1, {}, {}, 0, ascending);
      params.metadata = metadata;
      StatusOr<Ref<hal::Executable>> executable = device->PrepareExecutable(params);
      REQUIRE(executable.ok());
      CHECK((*executable)->entry_points()[0].ascending_workgroups == ascending);
      Ref<CommandBuffer> runs = BeginCommandBuffer(*device);
      const uint32_t seven[] = {7};
      REQUIRE(runs->Dispatch(executable->get(), 0, {4, 3, 2}, seven, {}).ok());
      REQUIRE(runs->End().ok());
      const char* first = "workgroup (0, 0, 0) returned 7";
      const char* last = ascending ? first : "workgroup (3, 2, 1) returned 7";
      for (const char* expected : {first, last, first, last}) {
        CheckError(SubmitAndWait(*device, runs.get()), StatusCode::kAborted, {expected});
      }
      // Recording again starts over, ascending.
      REQUIRE(runs->Begin().ok());
      REQUIRE(runs->Dispatch(executable->get(), 0, {4, 3, 2}, seven, {}).ok());
      REQUIRE(runs->End().ok());
      CheckError(SubmitAndWait(*device, runs.get()), StatusCode::kAborted, {first});
    }
  }
}

TEST_CASE("conformance: resources outlive the references the caller drops") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    Ref<Buffer> result = Allocate(*device, 64);
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    {
      // Everything but the result is dropped right after recording.
      Ref<Buffer> a = Allocate(*device, 64);
      Ref<Buffer> b = Allocate(*device, 64);
      Write(*device, a.get(), 0, std::vector<float>(16, 2.0f));
      Write(*device, b.get(), 0, std::vector<float>(16, 3.0f));
      REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), result.get(), 16, 16).ok());
    }
    add = nullptr;
    REQUIRE(command_buffer->End().ok());
    // The submission holds the command buffer: drop ours before it runs.
    Ref<Semaphore> gate = CreateSemaphore(*device, 0);
    Ref<Semaphore> done = CreateSemaphore(*device, 0);
    SemaphoreValue wait{gate.get(), 1}, signal{done.get(), 1};
    CommandBuffer* raw = command_buffer.get();
    REQUIRE(device->QueueExecute({&wait, 1}, {&signal, 1}, {&raw, 1}).ok());
    command_buffer = nullptr;
    REQUIRE(gate->Signal(1).ok());
    REQUIRE(done->Wait(1, kTimeout).ok());
    CHECK(Read<float>(*device, result.get(), 0, 16) == std::vector<float>(16, 5.0f));

    // Mappings end once.
    StatusOr<hal::MappedRange> range = result->Map(hal::kAccessRead);
    REQUIRE(range.ok());
    CHECK(range->Unmap().ok());
    CHECK(range->bytes().empty());
    CheckError(range->Unmap(), StatusCode::kFailedPrecondition, {"not mapped"});
  }
}

TEST_CASE("conformance: destroying a device") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    // Work in flight finishes before the device is gone.
    constexpr uint32_t kCount = 1 << 18;
    Ref<Buffer> a = Allocate(*device, kCount * 4);
    Ref<Buffer> c = Allocate(*device, kCount * 4);
    Write(*device, a.get(), 0, std::vector<float>(kCount, 1.5f));
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), a.get(), c.get(), kCount, 256).ok());
    REQUIRE(command_buffer->End().ok());
    Ref<Semaphore> done = CreateSemaphore(*device, 0);
    Ref<Semaphore> gate = CreateSemaphore(*device, 0);
    Ref<Semaphore> orphan = CreateSemaphore(*device, 0);
    SemaphoreValue signal{done.get(), 1};
    CommandBuffer* raw = command_buffer.get();
    REQUIRE(device->QueueExecute({}, {&signal, 1}, {&raw, 1}).ok());
    // And work that still waits fails clearly once its wait completes.
    SemaphoreValue wait{gate.get(), 1}, orphan_signal{orphan.get(), 1};
    REQUIRE(device->QueueExecute({&wait, 1}, {&orphan_signal, 1}, {&raw, 1}).ok());
    Ref<hal::Allocator> allocator = Ref<hal::Allocator>::Borrow(device->allocator());
    device = nullptr;
    REQUIRE(done->Query().ok());
    CHECK(done->Query().value() == 1);
    REQUIRE(gate->Signal(1).ok());
    CheckError(orphan->Wait(1, kTimeout), StatusCode::kUnavailable, {"was destroyed before"});
    // Buffers and the allocator outlive the device.
    StatusOr<hal::MappedRange> range = c->Map(hal::kAccessRead);
    REQUIRE(range.ok());
    CHECK(range->As<float>()[kCount - 1] == 3.0f);
    CHECK(allocator->Allocate({}, 64).ok());
  }
}

TEST_CASE("conformance: stress: thousands of submissions from several threads") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    constexpr int kThreads = 4;
    constexpr int kSubmissions = 1000;
    Ref<Buffer> ones = Allocate(*device, 64);
    Write(*device, ones.get(), 0, std::vector<float>(16, 1.0f));
    // Every thread shares one semaphore with its neighbour, so the threads'
    // chains also wait on each other: submission i of thread t waits for
    // step i of thread t-1.
    std::vector<Ref<Semaphore>> timelines;
    std::vector<Ref<Buffer>> accumulators;
    for (int t = 0; t < kThreads; ++t) {
      timelines.push_back(CreateSemaphore(*device, 0));
      accumulators.push_back(Allocate(*device, 64));
      Write(*device, accumulators.back().get(), 0, std::vector<float>(16, 0.0f));
    }
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Semaphore* mine = timelines[t].get();
        Semaphore* neighbour = timelines[(t + kThreads - 1) % kThreads].get();
        for (int i = 0; i < kSubmissions; ++i) {
          Ref<CommandBuffer> command_buffer = device->CreateCommandBuffer().value();
          bool ok = command_buffer->Begin().ok() &&
                    RecordAdd(command_buffer.get(), add.get(), accumulators[t].get(), ones.get(),
                              accumulators[t].get(), 16, 16)
                        .ok() &&
                    command_buffer->End().ok();
          const SemaphoreValue waits[] = {{mine, uint64_t(i)}, {neighbour, uint64_t(i)}};
          SemaphoreValue signal{mine, uint64_t(i) + 1};
          CommandBuffer* raw = command_buffer.get();
          ok = ok && device->QueueExecute(waits, {&signal, 1}, {&raw, 1}).ok();
          // Now and then, wait on the host as a program would.
          if (i % 97 == 0) ok = ok && mine->Wait(i + 1, kTimeout).ok();
          if (!ok) failures.fetch_add(1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(failures.load() == 0);
    for (int t = 0; t < kThreads; ++t) {
      Status status = timelines[t]->Wait(kSubmissions, kTimeout);
      REQUIRE_MESSAGE(status.ok(), status.ToString());
      CHECK(Read<float>(*device, accumulators[t].get(), 0, 16) == std::vector<float>(16, float(kSubmissions)));
    }
  }
}

// Several threads each calling, back to back, a command buffer whose
// dispatch has many workgroups (cpu-task splits it over its threads and
// hands each split to helpers that linger between submissions), now and
// then after a pause longer than a helper lingers: each thread's sum is
// exact, whichever thread's submission a helper joined.
TEST_CASE("conformance: stress: split dispatches from several threads at once") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    constexpr int kThreads = 4;
    constexpr int kCalls = 300;
    constexpr uint32_t kCount = 1 << 16, kGroup = 256;
    Ref<Buffer> ones = Allocate(*device, kCount * 4);
    Write(*device, ones.get(), 0, std::vector<float>(kCount, 1.0f));
    std::vector<Ref<Semaphore>> timelines;
    std::vector<Ref<Buffer>> sums;
    std::vector<Ref<CommandBuffer>> command_buffers;
    for (int t = 0; t < kThreads; ++t) {
      timelines.push_back(CreateSemaphore(*device, 0));
      sums.push_back(Allocate(*device, kCount * 4));
      Write(*device, sums.back().get(), 0, std::vector<float>(kCount, 0.0f));
      command_buffers.push_back(BeginCommandBuffer(*device));
      REQUIRE(RecordAdd(command_buffers.back().get(), add.get(), sums.back().get(), ones.get(), sums.back().get(),
                        kCount, kGroup)
                  .ok());
      REQUIRE(command_buffers.back()->End().ok());
    }
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Semaphore* timeline = timelines[t].get();
        CommandBuffer* raw = command_buffers[t].get();
        for (int i = 0; i < kCalls; ++i) {
          if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::microseconds(500));
          SemaphoreValue signal{timeline, uint64_t(i) + 1};
          if (!device->QueueExecute({}, {&signal, 1}, {&raw, 1}).ok() || !timeline->Wait(i + 1, kTimeout).ok()) {
            failures.fetch_add(1);
            return;
          }
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    CHECK(failures.load() == 0);
    for (int t = 0; t < kThreads; ++t)
      CHECK(Read<float>(*device, sums[t].get(), 0, kCount) == std::vector<float>(kCount, float(kCalls)));
  }
}

// ---------------------------------------------------------------------------
// Executables and buffer views

TEST_CASE("conformance: executable preparation errors") {
  FOR_EACH_DRIVER(device) {
    hal::ExecutableParams params;
    params.name = "bad";
    params.format = "no-such-format";
    CheckError(device->PrepareExecutable(params).status(), StatusCode::kIncompatible,
               {"cannot run format 'no-such-format'", device->info().executable_formats[0]});
    if (!PrepareTestKernel(*device, "add_f32")) continue;
    // The test kernels' format: a CPU ELF, SPIR-V or PTX, with its metadata.
    const std::string format = device->info().executable_formats[0];
    const bool spirv = format == "vulkan-spirv";
    const bool ptx = format == "cuda-ptx";
    params.format = format;
    auto describe = [&](const std::string& entry_point, uint32_t bindings, uint32_t constants,
                        std::vector<bool> read_only = {}) {
      auto gpu = [&](auto description) {
        description.entry_point = entry_point;
        description.binding_count = bindings;
        description.constant_count = constants;
        description.read_only = read_only;
        return description;
      };
      if (spirv) return VulkanMetadata(gpu(VulkanTestKernel("add_f32")));
      if (ptx) return CudaMetadata(gpu(CudaTestKernel("add_f32")));
      return CpuMetadata(entry_point, bindings, constants, read_only);
    };
    std::vector<uint8_t> metadata = describe("add_f32", 3, 1);
    const std::vector<uint8_t> garbage(256, 0x5A);
    params.data = garbage;
    params.metadata = metadata;
    CHECK(!device->PrepareExecutable(params).ok());
    params.data = spirv ? TestKernelSpirv("add_f32") : ptx ? TestKernelPtx("add_f32") : HostKernelElf("add_f32");
    params.metadata = garbage;
    CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument, {"metadata"});
    std::vector<uint8_t> corrupt = metadata;
    corrupt.resize(corrupt.size() / 2);
    params.metadata = corrupt;
    CHECK(!device->PrepareExecutable(params).ok());
    std::vector<uint8_t> missing = describe("no_such_kernel", 0, 0);
    params.metadata = missing;
    CheckError(device->PrepareExecutable(params).status(), StatusCode::kNotFound,
               {"'no_such_kernel'", spirv ? "not an OpEntryPoint" : ptx ? "not a .entry function" : "not exported"});
    std::vector<uint8_t> too_many = describe("add_f32", 33, 0);
    params.metadata = too_many;
    CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument, {"33 bindings"});
    std::vector<uint8_t> flags = describe("add_f32", 3, 1, {true});
    params.metadata = flags;
    CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument, {"1 read-only flags"});
    if (format == "cpu-elf-x86_64") {
      // Required CPU features: every x86-64 CPU with SSE 4.2 runs the first;
      // a name outside schemas/cpu_features.def is refused.
      std::vector<uint8_t> baseline = CpuMetadata("add_f32", 3, 1, {}, {"sse4.2"});
      params.metadata = baseline;
#if defined(__x86_64__)
      if (__builtin_cpu_supports("sse4.2")) CHECK(device->PrepareExecutable(params).ok());
      // The driver reads CPUID itself; for each feature it must agree with
      // the compiler runtime's own probe.
#define STRATA_X86_FEATURE(name, ...)                                                         \
  {                                                                                           \
    std::vector<uint8_t> one = CpuMetadata("add_f32", 3, 1, {}, {name});                      \
    params.metadata = one;                                                                    \
    auto prepared = device->PrepareExecutable(params);                                        \
    INFO("feature ", name);                                                                   \
    CHECK(prepared.ok() == (__builtin_cpu_supports(name) != 0));                              \
    if (!prepared.ok()) CheckError(prepared.status(), StatusCode::kFailedPrecondition, {name}); \
  }
#include "schemas/cpu_features.def"
#undef STRATA_X86_FEATURE
#endif
      std::vector<uint8_t> unknown = CpuMetadata("add_f32", 3, 1, {}, {"avx", "warp-drive"});
      params.metadata = unknown;
      CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument,
                 {"does not know: warp-drive"});
      // Local memory per thread: up to 16 MiB; a module asking for more (a
      // hostile one, say) is refused before anything is allocated.
      std::vector<uint8_t> local = CpuMetadata("add_f32", 3, 1, {}, {}, uint64_t{16} << 20);
      params.metadata = local;
      CHECK(device->PrepareExecutable(params).ok());
      std::vector<uint8_t> greedy = CpuMetadata("add_f32", 3, 1, {}, {}, uint64_t{1} << 40);
      params.metadata = greedy;
      CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument,
                 {"1099511627776 bytes of local memory", "at most 16777216"});
    }
  }
}

TEST_CASE("conformance: buffer views") {
  FOR_EACH_DRIVER(device) {
    Ref<Buffer> buffer = Allocate(*device, 4096);
    const int64_t shape[] = {4, 8};
    auto view = hal::BufferView::Create(buffer, 64, hal::ElementType::kFloat32, shape);
    REQUIRE(view.ok());
    CHECK(view.value()->byte_length() == 128);
    CHECK(view.value()->byte_offset() == 64);
    CHECK(view.value()->element_count() == 32);
    CHECK(view.value()->rank() == 2);
    CHECK(view.value()->DescribeType() == "4x8xf32");
    CHECK(view.value()->buffer() == buffer.get());
    const int64_t scalar_shape[1] = {};
    CHECK(hal::BufferView::Create(buffer, 0, hal::ElementType::kInt8, {scalar_shape, 0}).value()->byte_length() == 1);
    const int64_t big[] = {64, 17};
    CheckError(hal::BufferView::Create(buffer, 0, hal::ElementType::kFloat32, big).status(), StatusCode::kOutOfRange,
               {"64x17xf32 needs 4352 bytes", "has 4096"});
    CheckError(hal::BufferView::Create(buffer, 4000, hal::ElementType::kFloat32, shape).status(),
               StatusCode::kOutOfRange, {"at offset 4000"});
    const int64_t negative[] = {4, -1};
    CheckError(hal::BufferView::Create(buffer, 0, hal::ElementType::kFloat32, negative).status(),
               StatusCode::kInvalidArgument, {"dimension 1 is negative"});
    const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40};
    CheckError(hal::BufferView::Create(buffer, 0, hal::ElementType::kFloat32, huge).status(),
               StatusCode::kInvalidArgument, {"overflows"});
    CheckError(hal::BufferView::Create(buffer, 0, static_cast<hal::ElementType>(0x0321), shape).status(),
               StatusCode::kInvalidArgument, {"unknown element type 0x321"});
    const int64_t deep[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CheckError(hal::BufferView::Create(buffer, 0, hal::ElementType::kFloat32, deep).status(),
               StatusCode::kInvalidArgument, {"rank 9 exceeds the maximum of 8"});
  }
}


// ---------------------------------------------------------------------------
// Statistics and tracing

TEST_CASE("conformance: the allocator counts live and peak bytes") {
  FOR_EACH_DRIVER(device) {
    hal::Allocator* allocator = device->allocator();
    // Off by default: nothing is counted, not even when the buffer goes.
    Ref<Buffer> uncounted = Allocate(*device, 512);
    CHECK(allocator->statistics().allocations == 0);
    device->set_statistics_enabled(true);
    uncounted = nullptr;
    const hal::AllocatorStatistics start = allocator->statistics();
    CHECK(start.live_bytes == 0);
    {
      Ref<Buffer> a = Allocate(*device, 1000);
      Ref<Buffer> b = Allocate(*device, 3000);
      hal::AllocatorStatistics now = allocator->statistics();
      CHECK(now.live_bytes == start.live_bytes + 4000);
      CHECK(now.peak_bytes >= start.live_bytes + 4000);
      CHECK(now.allocations == start.allocations + 2);
      // Subspans and imports are not allocations.
      Ref<Buffer> subspan = a->Subspan(0, 500).value();
      static uint8_t host[256];
      Ref<Buffer> imported = allocator->Import({}, host, nullptr).value();
      CHECK(allocator->statistics().live_bytes == now.live_bytes);
      CHECK(allocator->statistics().allocations == now.allocations);
      a = nullptr;  // the subspan still holds its bytes
      CHECK(allocator->statistics().live_bytes == now.live_bytes);
    }
    const hal::AllocatorStatistics end = allocator->statistics();
    CHECK(end.live_bytes == start.live_bytes);
    CHECK(end.peak_bytes == std::max(start.peak_bytes, start.live_bytes + 4000));
    // Counted buffers give their bytes back after counting stops.
    Ref<Buffer> counted = Allocate(*device, 100);
    device->set_statistics_enabled(false);
    Ref<Buffer> after = Allocate(*device, 100);
    CHECK(allocator->statistics().allocations == end.allocations + 1);
    counted = nullptr;
    after = nullptr;
    CHECK(allocator->statistics().live_bytes == end.live_bytes);
    // A buffer outlives its allocator's device and still gives its bytes back.
    device->set_statistics_enabled(true);
    Ref<Buffer> survivor = Allocate(*device, 64);
    device = nullptr;
    survivor = nullptr;
  }
}

// Keeps every event, from any thread.
class RecordingTracer final : public Tracer {
 public:
  struct Event {
    std::string category, name;
    std::map<std::string, std::string> args;
    uint64_t begin_ns, end_ns;
    std::thread::id thread;
  };
  void Record(const TraceEvent& event) override {
    Event copy{std::string(event.category), std::string(event.name), {}, event.begin_ns, event.end_ns,
               std::this_thread::get_id()};
    for (const TraceArg& arg : event.args) {
      copy.args[std::string(arg.key)] = arg.is_text ? std::string(arg.text) : std::to_string(arg.number);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(copy));
  }
  std::vector<Event> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(events_);
  }

 private:
  std::mutex mutex_;
  std::vector<Event> events_;
};

TEST_CASE("conformance: submissions and dispatches are counted and traced") {
  FOR_EACH_DRIVER(device) {
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    if (!add) continue;
    const uint32_t count = 4096, group = 64;
    Ref<Buffer> a = Allocate(*device, count * 4), b = Allocate(*device, count * 4);
    Ref<Buffer> c = Allocate(*device, count * 4), d = Allocate(*device, count * 4);
    Write(*device, a.get(), 0, Iota(count, 0));
    Write(*device, b.get(), 0, Iota(count, 1));
    // Two dispatches that may run at once, then one after the barrier.
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), a.get(), b.get(), c.get(), count, group).ok());
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), b.get(), a.get(), d.get(), count, group).ok());
    REQUIRE(command_buffer->Barrier().ok());
    REQUIRE(RecordAdd(command_buffer.get(), add.get(), c.get(), d.get(), c.get(), count, group).ok());
    // The fill overwrites what the dispatch before it reads: a barrier orders
    // them (without one they may run concurrently, and do on a GPU).
    REQUIRE(command_buffer->Barrier().ok());
    REQUIRE(command_buffer->Fill(d.get(), 0, count * 4, 0, 4).ok());
    REQUIRE(command_buffer->End().ok());
    CHECK(command_buffer->dispatch_count() == 3);

    RecordingTracer tracer;
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    CHECK(device->statistics().submissions == 0);  // statistics are off by default
    device->set_statistics_enabled(true);
    device->set_tracer(&tracer);
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    device->set_tracer(nullptr);
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    CHECK(device->statistics().submissions == 2);
    CHECK(device->statistics().dispatches == 6);
    CHECK(Read<float>(*device, c.get(), 0, 3) == std::vector<float>{2, 6, 10});

    // One submission traced: the submit on this thread, the submission and
    // its commands wherever they ran, each with its arguments.
    std::vector<RecordingTracer::Event> events = tracer.Take();
    std::map<std::string, int> kinds;
    uint64_t workgroups = 0;
    for (const RecordingTracer::Event& event : events) {
      INFO(event.category, " ", event.name);
      ++kinds[event.category];
      CHECK(event.begin_ns <= event.end_ns);
      if (event.category == "submit") {
        CHECK(event.name == "queue.execute");
        CHECK(event.thread == std::this_thread::get_id());
        CHECK(event.args.at("command_buffers") == "1");
        CHECK(event.args.at("dispatches") == "3");
      } else if (event.category == "submission") {
        CHECK(event.args.at("status") == "OK");
      } else if (event.category == "dispatch") {
        CHECK(event.name == "add_f32");
        CHECK(event.args.at("executable") == add->name());
        CHECK(event.args.at("entry_point") == "0");
        CHECK(event.args.at("workgroup_count") == "64x1x1");
      } else if (event.category == "transfer") {
        CHECK(event.name == "fill");
        CHECK(event.args.at("length") == std::to_string(count * 4));
      } else if (event.category == "workgroups") {
        workgroups += std::stoull(event.args.at("last")) - std::stoull(event.args.at("first"));
      } else {
        FAIL_CHECK("unexpected event category ", event.category);
      }
    }
    CHECK(kinds["submit"] == 1);
    CHECK(kinds["submission"] == 1);
    CHECK(kinds["dispatch"] == 3);
    CHECK(kinds["transfer"] == 1);
    // Drivers that split dispatches over threads report each share of one
    // they split (cpu-task may run each of the first two whole, on threads
    // of their own): all 64 workgroups of each dispatch split.
    CHECK(workgroups % 64 == 0);
    CHECK(workgroups <= 3 * 64);
    // Every command ran inside its submission.
    const auto submission = std::find_if(events.begin(), events.end(),
                                         [](const auto& event) { return event.category == "submission"; });
    for (const RecordingTracer::Event& event : events) {
      if (event.category == "dispatch" || event.category == "transfer") {
        CHECK(event.begin_ns >= submission->begin_ns);
        CHECK(event.end_ns <= submission->end_ns);
      }
    }
  }
}

}  // namespace
}  // namespace strata::testing
