// The Vulkan driver's own cases, beyond the conformance suite: the
// sub-allocator, device selection and the unavailable paths, the checks of
// SPIR-V executables against their metadata and the device, dispatch limits,
// check words at run time, descriptor pools, deadlines and pipelined submissions. Cases that need a device skip with one line when there is none.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>

#include "drivers/registry.h"
#include "drivers/vulkan/vulkan_buffer.h"
#include "drivers/vulkan/vulkan_command_buffer.h"
#include "drivers/vulkan/vulkan_device.h"
#include "drivers/vulkan/vulkan_executable.h"
#include "tests/hal/hal_test_util.h"
#include "tests/hal/kernels/test_kernels.h"

namespace strata::testing {
namespace {

using hal::Buffer;
using hal::BufferBinding;
using hal::CommandBuffer;
using vulkan::RangeAllocator;

// A Vulkan device from `spec`, or null (with one line) when this machine has
// none.
Ref<hal::Device> VulkanDevice(const std::string& spec = "vulkan") {
  return CreateDeviceIfAvailable(spec, "no Vulkan device here");
}

StatusOr<Ref<hal::Executable>> Prepare(hal::Device& device, std::string_view kernel,
                                       const VulkanKernelDescription& description) {
  std::vector<uint8_t> metadata = VulkanMetadata(description);
  hal::ExecutableParams params;
  params.name = kernel;
  params.format = "vulkan-spirv";
  params.data = TestKernelSpirv(kernel);
  params.metadata = metadata;
  return device.PrepareExecutable(params);
}

TEST_CASE("vulkan: the sub-allocator's ranges") {
  RangeAllocator ranges(1024);
  CHECK(ranges.empty());
  // First fit, aligned.
  CHECK(ranges.Allocate(10, 64) == uint64_t{0});
  CHECK(ranges.Allocate(100, 64) == uint64_t{64});
  CHECK(ranges.Allocate(64, 256) == uint64_t{256});
  CHECK(ranges.free_bytes() == 1024 - 10 - 100 - 64);
  // Too large for what is left.
  CHECK(!ranges.Allocate(1024 - 320 + 1, 1).has_value());
  CHECK(ranges.Allocate(1024 - 320, 1) == uint64_t{320});
  // The gaps the alignment left, [10, 64) and [164, 256), serve later
  // allocations that fit them.
  CHECK(!ranges.Allocate(93, 1).has_value());
  CHECK(ranges.Allocate(54, 1) == uint64_t{10});
  CHECK(ranges.Allocate(92, 4) == uint64_t{164});
  CHECK(!ranges.Allocate(1, 1).has_value());
  CHECK(ranges.free_bytes() == 0);
  // Frees coalesce with both neighbours, back to one free range.
  ranges.Free(64, 100);
  ranges.Free(320, 1024 - 320);
  CHECK(!ranges.empty());
  ranges.Free(0, 10);
  ranges.Free(10, 54);
  ranges.Free(256, 64);
  CHECK(!ranges.empty());
  ranges.Free(164, 92);
  CHECK(ranges.empty());
  CHECK(ranges.Allocate(1024, 1024) == uint64_t{0});
}

TEST_CASE("vulkan: buffers share blocks, large ones get their own") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  auto* allocator = static_cast<vulkan::VulkanAllocator*>(device->allocator());
  vulkan::MemoryPool& pool = allocator->pool(0);
  const size_t blocks = pool.block_count();
  const hal::MemoryTypes types = device->allocator()->heaps()[0].memory_types;
  std::vector<Ref<Buffer>> small;
  for (int i = 0; i < 100; ++i) small.push_back(Allocate(*device, 1000 + i, types));
  // A hundred small buffers fit in one block.
  CHECK(pool.block_count() <= std::max<size_t>(blocks, 1));
  // Disjoint ranges of the same memory, each aligned for binding.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const Ref<Buffer>& buffer : small) {
    const vulkan::VkBufferRange range = vulkan::Resolve(buffer.get(), 0);
    CHECK(range.offset % device->info().limits.min_binding_alignment == 0);
    ranges.emplace_back(range.offset, range.offset + buffer->byte_length());
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) CHECK(ranges[i - 1].second <= ranges[i].first);
  // Each holds its own bytes.
  for (size_t i = 0; i < small.size(); ++i) Write(*device, small[i].get(), 0, std::vector<uint8_t>(1000, uint8_t(i)));
  for (size_t i = 0; i < small.size(); ++i) {
    CHECK(ReadBytes(*device, small[i].get(), 0, 1000) == std::vector<uint8_t>(1000, uint8_t(i)));
  }
  const size_t shared = pool.block_count();
  {
    // Over half a block: a dedicated block, freed with its buffer.
    Ref<Buffer> large = Allocate(*device, pool.block_size() / 2 + 4096, types);
    CHECK(pool.block_count() == shared + 1);
  }
  CHECK(pool.block_count() == shared);
  {
    // Three buffers of 40% of a block need a second shared block.
    std::vector<Ref<Buffer>> big;
    for (int i = 0; i < 3; ++i) big.push_back(Allocate(*device, pool.block_size() * 2 / 5, types));
    CHECK(pool.block_count() >= shared + 1);
  }
  small.clear();
  // Empty blocks are freed, all but one.
  CHECK(pool.block_count() == 1);
}

TEST_CASE("vulkan: freed dedicated blocks serve the next buffers of their size") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  auto* allocator = static_cast<vulkan::VulkanAllocator*>(device->allocator());
  vulkan::MemoryPool& pool = allocator->pool(0);
  const hal::MemoryTypes types = device->allocator()->heaps()[0].memory_types;
  const uint64_t size = pool.block_size() / 2 + 4096;
  REQUIRE(pool.idle_limit() >= 2 * size);
  VkBuffer first;
  {
    Ref<Buffer> large = Allocate(*device, size, types);
    first = vulkan::Resolve(large.get(), 0).buffer;
  }
  CHECK(pool.idle_block_count() >= 1);
  const size_t idle = pool.idle_block_count();
  {
    // The same size again: the same memory, no longer idle.
    Ref<Buffer> again = Allocate(*device, size, types);
    CHECK(vulkan::Resolve(again.get(), 0).buffer == first);
    CHECK(pool.idle_block_count() == idle - 1);
    // Twice the size does not fit it; half of it fits but would waste too
    // much: both get blocks of their own.
    Ref<Buffer> twice = Allocate(*device, 2 * size, types);
    CHECK(vulkan::Resolve(twice.get(), 0).buffer != first);
    Write(*device, twice.get(), 2 * size - 1000, std::vector<uint8_t>(1000, 7));
    CHECK(ReadBytes(*device, twice.get(), 2 * size - 1000, 1000) == std::vector<uint8_t>(1000, 7));
  }
  // Past the limit, the oldest idle blocks are freed.
  for (int i = 0; i < 8; ++i) Allocate(*device, pool.block_size() / 2 + 4096 * (i + 2) * 64, types);
  CHECK(pool.idle_bytes() <= pool.idle_limit());
  CHECK(pool.idle_block_count() >= 1);
}

TEST_CASE("vulkan: allocation limits") {
  Ref<hal::Device> device = VulkanDevice("vulkan?max_allocation=1000");
  if (!device) return;
  CHECK(device->allocator()->Allocate({}, 1000).ok());
  CheckError(device->allocator()->Allocate({}, 1001).status(), StatusCode::kResourceExhausted,
             {"1001 bytes requested", "largest allocation", "1000 bytes"});
  CheckError(drivers::DefaultRegistry().CreateDevice("vulkan?max_allocation=0").status(), StatusCode::kInvalidArgument,
             {"max_allocation='0'"});
}

TEST_CASE("vulkan: device selection") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  const auto& context = static_cast<vulkan::VulkanDevice*>(device.get())->context();
  const std::string name = context.name();
  CHECK(device->info().description.find(name) == 0);
  CHECK(device->info().executable_formats == std::vector<std::string>{"vulkan-spirv"});
  CHECK(device->info().limits.min_binding_alignment == context.limits().minStorageBufferOffsetAlignment);
  CHECK(!device->info().details.empty());
  // By index, by a part of the name, and the short form.
  const std::string word = name.substr(0, name.find(' '));
  for (const std::string& spec :
       std::vector<std::string>{"vulkan?device=0", "vulkan?device=" + word, "vulkan://0", "vulkan://" + word}) {
    INFO(spec);
    Ref<hal::Device> other = VulkanDevice(spec);
    REQUIRE(other);
    CHECK(other->info().name == spec);
    CHECK(static_cast<vulkan::VulkanDevice*>(other.get())->context().name() == name);
  }
  CheckError(drivers::DefaultRegistry().CreateDevice("vulkan?device=99").status(), StatusCode::kNotFound,
             {"no device with index '99'", "(devices: 0: " + name});
  CheckError(drivers::DefaultRegistry().CreateDevice("vulkan://no-such-gpu").status(), StatusCode::kNotFound,
             {"no device whose name contains 'no-such-gpu'", "0: " + name});
  CheckError(drivers::DefaultRegistry().CreateDevice("vulkan://0?device=0").status(), StatusCode::kInvalidArgument,
             {"'device' is given twice"});
  CheckError(drivers::DefaultRegistry().CreateDevice("vulkan?warp=9").status(), StatusCode::kInvalidArgument,
             {"no option 'warp'", "device, validation, max_allocation, push_descriptors"});
  // The validation layer: used when installed, a clear error when not.
  StatusOr<Ref<hal::Device>> validated = drivers::DefaultRegistry().CreateDevice("vulkan?validation=1");
  if (!validated.ok()) {
    CheckError(validated.status(), StatusCode::kFailedPrecondition,
               {"VK_LAYER_KHRONOS_validation", "not installed"});
  }
}

// Runs only in the CTest that hides every Vulkan driver (ICD) from the loader
// (hal.vulkan.no_driver); skipped otherwise.
TEST_CASE("vulkan: without a Vulkan driver the device is unavailable" * doctest::skip()) {
  StatusOr<Ref<hal::Device>> device = drivers::DefaultRegistry().CreateDevice("vulkan");
  if (device.status().message().find("libvulkan.so.1 could not be opened") != std::string::npos) {
    // No loader at all (the aarch64 build under qemu): unavailable one step
    // earlier, as it must be.
    CheckError(device.status(), StatusCode::kUnavailable, {"install it (Debian: libvulkan1)"});
  } else {
    CheckError(device.status(), StatusCode::kUnavailable,
               {"no Vulkan driver (ICD) is installed", "VK_ERROR_INCOMPATIBLE_DRIVER"});
  }
  // The other drivers are unaffected.
  StatusOr<Ref<hal::Device>> cpu = drivers::DefaultRegistry().CreateDevice("cpu-sync");
  CHECK(cpu.ok());
}

TEST_CASE("vulkan: executables are checked against their metadata and the device") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  const auto& context = static_cast<vulkan::VulkanDevice*>(device.get())->context();
  const VulkanKernelDescription add = VulkanTestKernel("add_f32");
  REQUIRE(Prepare(*device, "add_f32", add).ok());
  auto refused = [&](std::string_view kernel, const VulkanKernelDescription& description) {
    StatusOr<Ref<hal::Executable>> executable = Prepare(*device, kernel, description);
    REQUIRE(!executable.ok());
    return executable.status();
  };

  // Bad SPIR-V.
  std::vector<uint8_t> metadata = VulkanMetadata(add);
  hal::ExecutableParams params;
  params.name = "bad";
  params.format = "vulkan-spirv";
  params.metadata = metadata;
  std::vector<uint8_t> spirv(TestKernelSpirv("add_f32").begin(), TestKernelSpirv("add_f32").end());
  std::vector<uint8_t> odd(spirv.begin(), spirv.end() - 2);
  params.data = odd;
  CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument,
             {"executable 'bad'", "whole number of 32-bit words"});
  std::vector<uint8_t> magic = spirv;
  magic[0] ^= 0xFF;
  params.data = magic;
  CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument, {"not a SPIR-V module"});
  std::vector<uint8_t> truncated(spirv.begin(), spirv.begin() + 24);
  truncated[20] = 0x00;
  truncated[21] = 0x00;
  truncated[22] = 0x09;  // an instruction of 9 words where 1 remains
  truncated[23] = 0x00;
  params.data = truncated;
  CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument, {"the instruction at word 5"});
  const std::vector<uint8_t> garbage(64, 0x5A);
  params.data = spirv;
  params.metadata = garbage;
  CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument,
             {"not a Vulkan executable description"});

  // An OpCapability inserted before the module's first instruction: Matrix
  // (implied by Shader) needs no listing; a number the driver does not know
  // is refused.
  auto with_capability = [&](uint32_t capability) {
    std::vector<uint8_t> patched = spirv;
    const uint32_t words[2] = {(2u << 16) | 17u, capability};
    patched.insert(patched.begin() + 20, reinterpret_cast<const uint8_t*>(words),
                   reinterpret_cast<const uint8_t*>(words) + 8);
    return patched;
  };
  params.metadata = metadata;
  std::vector<uint8_t> matrix = with_capability(24);
  params.data = matrix;
  CHECK(device->PrepareExecutable(params).ok());
  std::vector<uint8_t> unknown = with_capability(9999);
  params.data = unknown;
  CheckError(device->PrepareExecutable(params).status(), StatusCode::kInvalidArgument,
             {"declares SPIR-V capability 9999, which this driver does not know"});

  // Entry points and counts.
  VulkanKernelDescription changed = add;
  changed.entry_point = "sub_f32";
  CheckError(refused("add_f32", changed), StatusCode::kNotFound, {"'sub_f32'", "not an OpEntryPoint"});
  changed = add;
  changed.binding_count = 33;
  changed.read_only.clear();
  CheckError(refused("add_f32", changed), StatusCode::kInvalidArgument, {"33 bindings; the limit is 32"});
  changed = add;
  changed.constant_count = 65;
  CheckError(refused("add_f32", changed), StatusCode::kInvalidArgument, {"65 push constants; the limit is 64"});
  const uint32_t push_words = context.limits().maxPushConstantsSize / 4 + 1;
  if (push_words <= hal::Executable::kMaxConstants) {
    changed = add;
    changed.constant_count = push_words;
    CheckError(refused("add_f32", changed), StatusCode::kFailedPrecondition,
               {"bytes of push constants", "allows " + std::to_string(context.limits().maxPushConstantsSize)});
  }
  changed = add;
  changed.read_only = {true};
  CheckError(refused("add_f32", changed), StatusCode::kInvalidArgument, {"3 bindings but 1 read-only flags"});
  // Workgroup sizes: as the module says, within the device's limits.
  changed = add;
  changed.workgroup_size = {32, 1, 1};
  CheckError(refused("add_f32", changed), StatusCode::kInvalidArgument,
             {"workgroup size x = 32 in the metadata but LocalSize 64 in the module"});
  changed = add;
  changed.workgroup_size = {context.limits().maxComputeWorkGroupSize[0] + 1, 1, 1};
  CheckError(refused("add_f32", changed), StatusCode::kFailedPrecondition, {"workgroup size x = "});
  changed = add;
  changed.workgroup_memory_bytes = context.limits().maxComputeSharedMemorySize + 1;
  CheckError(refused("add_f32", changed), StatusCode::kFailedPrecondition, {"bytes of workgroup memory"});
  changed = add;
  changed.spirv_version = 0x00010500;
  CheckError(refused("add_f32", changed), StatusCode::kInvalidArgument,
             {"metadata says SPIR-V 1.5, the module is SPIR-V 1.6"});

  // Capabilities: declared by the module, listed by the metadata, and the
  // device's.
  VulkanKernelDescription fill = VulkanTestKernel("fill_pattern");
  REQUIRE(Prepare(*device, "fill_pattern", fill).ok());
  changed = fill;
  changed.capabilities.clear();
  CheckError(refused("fill_pattern", changed), StatusCode::kInvalidArgument,
             {"declares capability Int64 but the metadata's required_capabilities do not list it"});
  changed = fill;
  changed.capabilities.push_back("CooperativeMatrixKHR");
  CheckError(refused("fill_pattern", changed), StatusCode::kFailedPrecondition,
             {"needs SPIR-V capability CooperativeMatrixKHR", "lacks cooperativeMatrix"});
  changed = fill;
  changed.capabilities.push_back("WarpDrive");
  CheckError(refused("fill_pattern", changed), StatusCode::kInvalidArgument,
             {"'WarpDrive', which this driver does not know"});
  changed = fill;
  changed.extensions = {"SPV_NV_warp_drive"};
  CheckError(refused("fill_pattern", changed), StatusCode::kFailedPrecondition,
             {"needs SPIR-V extension SPV_NV_warp_drive"});
  for (const char* capability : {"Float16", "Float64", "Int64", "Int16", "Int8", "StorageBuffer16BitAccess"}) {
    INFO(capability);
    Status status = vulkan::CheckCapability(context, capability);
    CHECK((status.ok() || status.code() == StatusCode::kFailedPrecondition));
  }
}

// add_f32's SPIR-V words asking for IEEE float behaviour, as the compiler
// does: the two float-control capabilities after the first capability, and
// DenormPreserve and SignedZeroInfNanPreserve for 32-bit floats after the
// entry point.
std::vector<uint32_t> WithFloatControls(std::span<const uint8_t> spirv) {
  std::vector<uint32_t> words(spirv.size() / 4);
  std::memcpy(words.data(), spirv.data(), spirv.size());
  size_t after_entry = 0, after_capability = 0;
  uint32_t entry = 0;
  for (size_t at = 5; at < words.size(); at += words[at] >> 16) {
    const uint32_t opcode = words[at] & 0xFFFF;
    if (opcode == 17 && !after_capability) after_capability = at + 2;
    if (opcode == 15 && !after_entry) {
      after_entry = at + (words[at] >> 16);
      entry = words[at + 2];
    }
  }
  REQUIRE(after_capability);
  REQUIRE(after_entry);
  const std::vector<uint32_t> modes = {(4u << 16) | 16u, entry, 4459, 32, (4u << 16) | 16u, entry, 4461, 32};
  words.insert(words.begin() + after_entry, modes.begin(), modes.end());
  const std::vector<uint32_t> capabilities = {(2u << 16) | 17u, 4464, (2u << 16) | 17u, 4466};
  words.insert(words.begin() + after_capability, capabilities.begin(), capabilities.end());
  return words;
}

// How often `words` holds the instruction `instruction` (its whole words).
size_t Count(const std::vector<uint32_t>& words, const std::vector<uint32_t>& instruction) {
  size_t count = 0;
  for (size_t at = 5; at < words.size(); at += words[at] >> 16) {
    count += std::equal(instruction.begin(), instruction.end(), words.begin() + at,
                        words.begin() + std::min(words.size(), at + instruction.size()));
  }
  return count;
}

TEST_CASE("vulkan: pipeline statistics where the device reports them") {
  Ref<hal::Device> device = VulkanDevice("vulkan?pipeline_statistics=1");
  if (!device) return;
  // Asked for, the statistics are captured and printed where the extension
  // exists (a line on stderr says so where it does not, as on lavapipe);
  // pipelines are made either way.
  CHECK(Prepare(*device, "add_f32", VulkanTestKernel("add_f32")).ok());
  CheckError(drivers::DefaultRegistry().CreateDevice("vulkan?pipeline_statistics=2").status(),
             StatusCode::kInvalidArgument, {"pipeline_statistics='2'"});
}

TEST_CASE("vulkan: float controls the device lacks are removed from the SPIR-V") {
  const std::vector<uint32_t> asked = WithFloatControls(TestKernelSpirv("add_f32"));
  const uint32_t mode = (4u << 16) | 16u, capability = (2u << 16) | 17u;
  uint32_t entry = 0;
  for (size_t at = 5; at < asked.size() && !entry; at += asked[at] >> 16) {
    if ((asked[at] & 0xFFFF) == 15) entry = asked[at + 2];
  }
  const std::vector<uint32_t> denorm = {mode, entry, 4459, 32}, nan = {mode, entry, 4461, 32};
  REQUIRE(Count(asked, denorm) == 1);
  REQUIRE(Count(asked, nan) == 1);

  // A device with every control keeps the module as it is.
  vulkan::FloatControlsSupport all;
  for (int i = 0; i < 3; ++i) all.denorm_preserve[i] = all.signed_zero_inf_nan_preserve[i] = true;
  std::vector<uint32_t> words = asked;
  CHECK(vulkan::StripFloatControls(words, all) == 0);
  CHECK(words == asked);
  // One like lavapipe (NaN preserved, denormals not promised): the
  // DenormPreserve mode and its capability go, the rest stays.
  vulkan::FloatControlsSupport some;
  some.signed_zero_inf_nan_preserve[1] = true;
  words = asked;
  CHECK(vulkan::StripFloatControls(words, some) == 1);
  CHECK(words.size() == asked.size() - 6);
  CHECK(Count(words, denorm) == 0);
  CHECK(Count(words, {capability, 4464}) == 0);
  CHECK(Count(words, nan) == 1);
  CHECK(Count(words, {capability, 4466}) == 1);
  // f16 support alone does not keep a 32-bit mode.
  vulkan::FloatControlsSupport half;
  half.denorm_preserve[0] = half.signed_zero_inf_nan_preserve[0] = true;
  words = asked;
  CHECK(vulkan::StripFloatControls(words, half) == 2);
  CHECK(words.size() == asked.size() - 12);
  std::vector<uint8_t> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  CHECK(vulkan::ParseSpirv(bytes).ok());

  // On this machine's device the module, its metadata listing both
  // capabilities, is accepted whatever the device supports.
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  VulkanKernelDescription add = VulkanTestKernel("add_f32");
  add.capabilities.push_back("DenormPreserve");
  add.capabilities.push_back("SignedZeroInfNanPreserve");
  std::vector<uint8_t> metadata = VulkanMetadata(add);
  bytes.resize(asked.size() * 4);
  std::memcpy(bytes.data(), asked.data(), bytes.size());
  hal::ExecutableParams params;
  params.name = "add_f32_float_controls";
  params.format = "vulkan-spirv";
  params.data = bytes;
  params.metadata = metadata;
  StatusOr<Ref<hal::Executable>> executable = device->PrepareExecutable(params);
  CHECK_MESSAGE(executable.ok(), executable.status().ToString());
}

TEST_CASE("vulkan: dispatch bindings within Vulkan's limits") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  const auto& context = static_cast<vulkan::VulkanDevice*>(device.get())->context();
  Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
  Ref<Buffer> buffer = Allocate(*device, 4096);
  Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
  const uint32_t constants[] = {16};
  // A subspan at an offset Vulkan cannot bind at.
  Ref<Buffer> odd = buffer->Subspan(4, 1024).value();
  BufferBinding bindings[] = {{odd.get(), 0, 64}, {buffer.get(), 0, 64}, {buffer.get(), 64, 64}};
  CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, bindings), StatusCode::kInvalidArgument,
             {"binding 0 starts at byte", "subspan at offset 4", "storage-buffer offset alignment"});
  bindings[0] = {buffer.get(), 0, 0};
  CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, bindings), StatusCode::kInvalidArgument,
             {"binding 0 is empty"});
  const uint64_t range = context.limits().maxStorageBufferRange;
  if (range < device->allocator()->heaps()[0].max_allocation_size) {
    Ref<Buffer> large = Allocate(*device, range + 16);
    bindings[0] = {large.get(), 0, Buffer::kWholeBuffer};
    CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, constants, bindings), StatusCode::kOutOfRange,
               {"binding 0 is " + std::to_string(range + 16) + " bytes", "maxStorageBufferRange"});
  }
  // A command buffer runs only on its own device.
  Ref<hal::Device> other = VulkanDevice();
  REQUIRE(command_buffer->End().ok());
  CommandBuffer* raw = command_buffer.get();
  CheckError(other->QueueExecute({}, {}, {&raw, 1}), StatusCode::kInvalidArgument, {"another Vulkan device"});
  Ref<CommandBuffer> foreign = BeginCommandBuffer(*other);
  CheckError(foreign->Fill(buffer.get(), 0, 4, 0, 4), StatusCode::kInvalidArgument, {"another Vulkan device"});
}

TEST_CASE("vulkan: failed checks report the model's message and stop the submission") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  CheckGpuCheckWords(*device, [](CommandBuffer& command_buffer) {
    return static_cast<vulkan::VulkanCommandBuffer&>(command_buffer).segment_count();
  });
}

TEST_CASE("vulkan: descriptor pools where push descriptors are not used") {
  Ref<hal::Device> device = VulkanDevice("vulkan?push_descriptors=0");
  if (!device) return;
  CHECK(!static_cast<vulkan::VulkanDevice*>(device.get())->context().push_descriptors());
  Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
  Ref<hal::Executable> fail_if = PrepareTestKernel(*device, "fail_if");
  Ref<Buffer> a = Allocate(*device, 4096), c = Allocate(*device, 4096);
  std::vector<float> values(1024);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i);
  Write(*device, a.get(), 0, values);
  Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
  const uint32_t group[] = {100};
  const BufferBinding bindings[] = {{a.get(), 0, 4096}, {a.get(), 0, 4096}, {c.get(), 0, 4096}};
  REQUIRE(command_buffer->Dispatch(add.get(), 0, {11, 1, 1}, group, bindings).ok());
  REQUIRE(command_buffer->Barrier().ok());
  REQUIRE(command_buffer->Dispatch(add.get(), 0, {11, 1, 1}, group, bindings).ok());
  REQUIRE(command_buffer->End().ok());
  REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
  std::vector<float> result = Read<float>(*device, c.get(), 0, 1024);
  size_t wrong = 0;
  for (size_t i = 0; i < result.size(); ++i) wrong += result[i] != 2.0f * i;
  CHECK(wrong == 0);
  // The check word is bound through the pool's set too.
  Ref<CommandBuffer> failing = BeginCommandBuffer(*device);
  const uint32_t code[] = {5};
  REQUIRE(failing->Dispatch(fail_if.get(), 0, {1, 1, 1}, code, {}).ok());
  REQUIRE(failing->End().ok());
  CheckError(SubmitAndWait(*device, failing.get()), StatusCode::kAborted, {"returned 5"});
}

// What the driver does once Vulkan reports VK_ERROR_DEVICE_LOST (no test
// here makes a device lose itself: the result is handed to the context as a
// submission's would be): that submission fails UNAVAILABLE naming the
// loss, every later one on the device fails at once without reaching
// Vulkan, and a new device runs the same work.
TEST_CASE("vulkan: a lost device fails every later submission; a new one goes on") {
  for (const char* spec : {"vulkan", "vulkan?pipelined=0"}) {
    CAPTURE(spec);
    Ref<hal::Device> device = VulkanDevice(spec);
    if (!device) return;
    auto run = [&](hal::Device& on, Ref<hal::Executable>& add) {
      Ref<Buffer> a = Allocate(on, 4096), c = Allocate(on, 4096);
      Write(on, a.get(), 0, std::vector<float>(1024, 1.5f));
      Ref<CommandBuffer> command_buffer = BeginCommandBuffer(on);
      const uint32_t group[] = {128};
      const BufferBinding bindings[] = {{a.get(), 0, 4096}, {a.get(), 0, 4096}, {c.get(), 0, 4096}};
      REQUIRE(command_buffer->Dispatch(add.get(), 0, {8, 1, 1}, group, bindings).ok());
      REQUIRE(command_buffer->End().ok());
      Status status = SubmitAndWait(on, command_buffer.get());
      if (status.ok()) CHECK(Read<float>(on, c.get(), 0, 1024) == std::vector<float>(1024, 3.0f));
      return status;
    };
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    REQUIRE(run(*device, add).ok());
    auto& context = const_cast<vulkan::VulkanContext&>(static_cast<vulkan::VulkanDevice*>(device.get())->context());
    CheckError(context.WorkResult(VK_ERROR_DEVICE_LOST), StatusCode::kUnavailable,
               {"running a submission", "the Vulkan device was lost", "VK_ERROR_DEVICE_LOST"});
    CheckError(run(*device, add), StatusCode::kUnavailable,
               {"was lost (VK_ERROR_DEVICE_LOST) earlier", "create a new device"});
    Ref<hal::Device> fresh = VulkanDevice(spec);
    Ref<hal::Executable> fresh_add = PrepareTestKernel(*fresh, "add_f32");
    CHECK(run(*fresh, fresh_add).ok());
  }
}

TEST_CASE("vulkan: deadlines") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
  constexpr uint32_t kCount = 1 << 24;
  Ref<Buffer> a = Allocate(*device, uint64_t{kCount} * 4), c = Allocate(*device, uint64_t{kCount} * 4);
  Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
  const uint32_t group[] = {1024};
  const BufferBinding bindings[] = {{a.get(), 0, Buffer::kWholeBuffer}, {a.get(), 0, Buffer::kWholeBuffer},
                                    {c.get(), 0, Buffer::kWholeBuffer}};
  REQUIRE(command_buffer->Dispatch(add.get(), 0, {kCount / 1024, 1, 1}, group, bindings).ok());
  REQUIRE(command_buffer->End().ok());
  CommandBuffer* raw = command_buffer.get();
  auto run = [&](std::chrono::steady_clock::time_point deadline) {
    Ref<hal::Semaphore> done = device->CreateSemaphore(0).value();
    hal::SemaphoreValue signal{done.get(), 1};
    REQUIRE(device->QueueExecute({}, {&signal, 1}, {&raw, 1}, deadline).ok());
    return done->Wait(1, std::chrono::seconds(60));
  };
  // Past already: nothing starts.
  CheckError(run(std::chrono::steady_clock::now() - std::chrono::milliseconds(5)), StatusCode::kDeadlineExceeded,
             {"ms after the call's deadline, before part 1 of 1"});
  // Far away: it runs. Its time sets the next deadline.
  const auto start = std::chrono::steady_clock::now();
  CHECK(run(start + std::chrono::seconds(60)).ok());
  const auto took = std::chrono::steady_clock::now() - start;
  // Passing while 128 MiB are added: the dispatch finishes, then the
  // submission fails saying how late. The deadline starts at half the time
  // above; where the submission starts only after it (a loaded machine: it
  // fails before part 1, as above) the next try waits twice as long, where it
  // finishes before it, half as long; up to 12 tries.
  bool seen_running = false;
  auto wait = took / 2;
  for (int attempt = 0; attempt < 12 && !seen_running; ++attempt) {
    Status status = run(std::chrono::steady_clock::now() + wait);
    if (status.ok()) {
      wait /= 2;
      continue;
    }
    REQUIRE(status.code() == StatusCode::kDeadlineExceeded);
    if (status.message().find("before part 1 of 1") != std::string::npos) {
      wait *= 2;
      continue;
    }
    CheckError(status, StatusCode::kDeadlineExceeded,
               {"still running at the call's deadline", "cannot stop a running dispatch"});
    seen_running = true;
  }
  CHECK(seen_running);
}

// A chain of submissions, each waiting for the last one's signal: with
// timeline semaphores they are queued on the device back to back (more than
// one in flight), one at a time with pipelined=0; the results are the same.
// A failed check fails the rest of the chain with its message.
TEST_CASE("vulkan: dependent submissions are pipelined on timeline semaphores") {
  for (const char* spec : {"vulkan", "vulkan?pipelined=0"}) {
    CAPTURE(spec);
    Ref<hal::Device> device = VulkanDevice(spec);
    if (!device) return;
    auto* vulkan_device = static_cast<vulkan::VulkanDevice*>(device.get());
    const bool pipelined = std::string(spec) == "vulkan" && vulkan_device->context().timeline_semaphores();
    constexpr uint32_t kCount = 1 << 20;
    SubmissionChain chain(*device, kCount, 1024);
    chain.RunAndCheck();
    const size_t in_flight = vulkan_device->queue().max_in_flight();
    if (pipelined) {
      CHECK(in_flight > 1);
    } else {
      CHECK(in_flight == 0);
    }
    // Step 5 fails its check: the steps after it, queued behind it, fail
    // with its message, and so does the wait at the end of the chain.
    chain.CheckFailedStep();
    // A submission that runs one at a time (two segments: a dispatch with
    // checks, a barrier, another dispatch) right behind a launched one that
    // fails, waiting for its signal, fails with its message too: the failure
    // is signalled before that submission may start.
    Ref<CommandBuffer> two_parts = BeginCommandBuffer(*device);
    const uint32_t pass[] = {0}, group[] = {1024};
    Ref<hal::Executable> fail_if = PrepareTestKernel(*device, "fail_if");
    const BufferBinding add_bindings[] = {{chain.buffer(0), 0, kCount * 4}, {chain.buffer(0), 0, kCount * 4},
                                          {chain.buffer(1), 0, kCount * 4}};
    REQUIRE(two_parts->Dispatch(fail_if.get(), 0, {1, 1, 1}, pass, {}).ok());
    REQUIRE(two_parts->Barrier().ok());
    REQUIRE(two_parts->Dispatch(chain.add(), 0, {kCount / 1024, 1, 1}, group, add_bindings).ok());
    REQUIRE(two_parts->End().ok());
    CHECK(static_cast<vulkan::VulkanCommandBuffer&>(*two_parts).segment_count() == 2);
    for (int round = 0; round < 16; ++round) {
      Ref<CommandBuffer> fails = chain.Failing();
      Ref<hal::Semaphore> order = device->CreateSemaphore(0).value();
      CommandBuffer* first = fails.get();
      CommandBuffer* second = two_parts.get();
      hal::SemaphoreValue one{order.get(), 1}, two{order.get(), 2};
      REQUIRE(device->QueueExecute({}, {&one, 1}, {&first, 1}).ok());
      REQUIRE(device->QueueExecute({&one, 1}, {&two, 1}, {&second, 1}).ok());
      CheckError(order->Wait(2, std::chrono::seconds(60)), StatusCode::kAborted, {"returned 7"});
    }
    // The device goes on.
    Ref<hal::Semaphore> again = device->CreateSemaphore(0).value();
    CHECK(chain.Run(again.get(), 0).ok());
  }
}

TEST_CASE("vulkan: host memory is imported in place at any alignment") {
  Ref<hal::Device> device = VulkanDevice();
  if (!device) return;
  // A range that starts and ends inside pages.
  std::vector<uint32_t> host(4096, 7u);
  std::span<uint8_t> bytes(reinterpret_cast<uint8_t*>(host.data() + 100), 1000 * 4);
  int released = 0;
  hal::BufferParams params;
  Ref<Buffer> buffer = device->allocator()->Import(params, bytes, [&] { ++released; }).value();
  Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
  REQUIRE(command_buffer->Fill(buffer.get(), 16, 64, 0xABCD, 2).ok());
  REQUIRE(command_buffer->End().ok());
  REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
  CHECK(host[103] == 7u);
  CHECK(host[104] == 0xABCDABCDu);
  CHECK(host[119] == 0xABCDABCDu);
  CHECK(host[120] == 7u);
  command_buffer = nullptr;
  buffer = nullptr;
  CHECK(released == 1);
}

}  // namespace
}  // namespace strata::testing
