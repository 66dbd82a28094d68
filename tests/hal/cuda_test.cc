// The CUDA driver's own cases, beyond the conformance suite.
//
// "cuda offline: ..." cases need no GPU and run everywhere: CUresult names and
// errors, image selection, the metadata checks against the data, and fills
// split into words and edges. "cuda: ..." cases need a device and skip with
// one line ("no CUDA device here") where there is none: checks at run time,
// the test kernels' arithmetic, graphs, imports sharing pages, the kernel ABI
// check, misaligned bindings, device selection and a kernel fault (last:
// CUDA stays unusable in the process after it). Two cases run only with
// --no-skip, under the STRATA_CUDA_LIBRARY their CTests set: no driver
// library, and the CUDA toolkit's stub library.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "drivers/cuda/cuda_api.h"
#include "drivers/cuda/cuda_device.h"
#include "drivers/cuda/cuda_executable.h"
#include "drivers/stream/stream_command_buffer.h"
#include "drivers/stream/stream_device.h"
#include "drivers/registry.h"
#include "hal/gpu_commands.h"
#include "strata/schemas/cuda_executable_generated.h"
#include "tests/hal/hal_test_util.h"
#include "tests/hal/kernels/test_kernels.h"

namespace strata::testing {
namespace {

using cuda::CudaImage;
using cuda::ImageKind;
using hal::Buffer;
using hal::BufferBinding;
using hal::CommandBuffer;

// A CUDA device from `spec`, or null (with one line) when this machine has
// none.
Ref<hal::Device> OpenCudaDevice(const std::string& spec = "cuda") {
  return CreateDeviceIfAvailable(spec, "no CUDA device here");
}

StatusOr<cuda::CudaExecutableInfo> Parse(std::span<const uint8_t> data, const std::vector<uint8_t>& metadata,
                                         const stream::KernelLimits& limits = {}) {
  hal::ExecutableParams params;
  params.name = "kernel";
  params.format = cuda::kCudaPtxFormat;
  params.data = data;
  params.metadata = metadata;
  return cuda::ParseCudaExecutable(params, limits);
}

// ---------------------------------------------------------------------------
// Without a GPU

TEST_CASE("cuda offline: CUresult names and errors") {
  CHECK(cuda::CuResultName(static_cast<CUresult>(34)) == "CUDA_ERROR_STUB_LIBRARY (34)");
  CHECK(cuda::CuResultName(static_cast<CUresult>(100)) == "CUDA_ERROR_NO_DEVICE (100)");
  CHECK(cuda::CuResultName(static_cast<CUresult>(218)) == "CUDA_ERROR_INVALID_PTX (218)");
  CHECK(cuda::CuResultName(static_cast<CUresult>(209)) == "CUDA_ERROR_NO_BINARY_FOR_GPU (209)");
  CHECK(cuda::CuResultName(static_cast<CUresult>(700)) == "CUDA_ERROR_ILLEGAL_ADDRESS (700)");
  CHECK(cuda::CuResultName(static_cast<CUresult>(719)) == "CUDA_ERROR_LAUNCH_FAILED (719)");
  CHECK(cuda::CuResultName(static_cast<CUresult>(12345)) == "unknown CUresult (12345)");
  CheckError(cuda::CuError(static_cast<CUresult>(2), "allocate: cuMemAlloc_v2 of 64 bytes"),
             StatusCode::kResourceExhausted,
             {"allocate: cuMemAlloc_v2 of 64 bytes: CUDA_ERROR_OUT_OF_MEMORY (2)", "allocate less"});
  CheckError(cuda::CuError(static_cast<CUresult>(700), "running"), StatusCode::kUnavailable,
             {"CUDA_ERROR_ILLEGAL_ADDRESS (700)", "outside its bindings", "restart it"});
  CheckError(cuda::CuError(static_cast<CUresult>(222), "loading"), StatusCode::kIncompatible,
             {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)", "update the NVIDIA driver"});
  CheckError(cuda::CuError(static_cast<CUresult>(218), "loading"), StatusCode::kInvalidArgument,
             {"CUDA_ERROR_INVALID_PTX (218)"});
  CHECK(cuda::IsStickyError(static_cast<CUresult>(700)));
  CHECK(cuda::IsStickyError(static_cast<CUresult>(719)));
  CHECK(!cuda::IsStickyError(static_cast<CUresult>(1)));
  CHECK(!cuda::IsStickyError(static_cast<CUresult>(2)));
  CHECK(cuda::CudaVersionString(12040) == "12.4");
  CHECK(cuda::CudaVersionString(13000) == "13.0");
}

TEST_CASE("cuda offline: the image for a device") {
  const uint8_t byte = 0;
  auto image = [&](ImageKind kind, uint32_t arch) { return CudaImage{kind, arch, {&byte, 1}}; };
  const std::vector<CudaImage> images = {image(ImageKind::kPtx, 80), image(ImageKind::kCubin, 80),
                                         image(ImageKind::kCubin, 86), image(ImageKind::kPtx, 90),
                                         image(ImageKind::kCubin, 90)};
  // A cubin of the same major version and the highest minor one up to the
  // device's.
  CHECK(cuda::SelectCudaImage(images, 80).value() == 1);
  CHECK(cuda::SelectCudaImage(images, 86).value() == 2);
  CHECK(cuda::SelectCudaImage(images, 89).value() == 2);
  CHECK(cuda::SelectCudaImage(images, 90).value() == 4);
  // A newer major version: the newest PTX, compiled by the driver.
  CHECK(cuda::SelectCudaImage(images, 100).value() == 3);
  CHECK(cuda::SelectCudaImage(images, 120).value() == 3);
  // No cubin of the device's major version: PTX.
  const std::vector<CudaImage> ptx_and_cubin = {image(ImageKind::kCubin, 90), image(ImageKind::kPtx, 80)};
  CHECK(cuda::SelectCudaImage(ptx_and_cubin, 86).value() == 1);
  CHECK(cuda::SelectCudaImage(ptx_and_cubin, 100).value() == 1);
  // Nothing old enough: the error names what there is and the device.
  CheckError(cuda::SelectCudaImage(images, 75).status(), StatusCode::kIncompatible,
             {"no image runs on sm_75 (compute capability 7.5)", "PTX for sm_80, cubin for sm_80, cubin for sm_86",
              "recompile the module for sm_75"});
  // A cubin runs on its own major version only.
  const std::vector<CudaImage> cubin_only = {image(ImageKind::kCubin, 90)};
  CheckError(cuda::SelectCudaImage(cubin_only, 100).status(), StatusCode::kIncompatible,
             {"no image runs on sm_100", "cubin for sm_90"});
  CheckError(cuda::SelectCudaImage(cubin_only, 89).status(), StatusCode::kIncompatible, {"sm_89"});
  // Arch-specific images (sm_90a: wgmma) run on their own capability alone,
  // before any other image there.
  auto specific = [&](ImageKind kind, uint32_t arch) { return CudaImage{kind, arch, {&byte, 1}, true}; };
  const std::vector<CudaImage> with_specific = {image(ImageKind::kPtx, 80), specific(ImageKind::kPtx, 90),
                                                image(ImageKind::kCubin, 90), specific(ImageKind::kCubin, 90)};
  CHECK(cuda::SelectCudaImage(with_specific, 90).value() == 3);
  CHECK(cuda::SelectCudaImage(std::span(with_specific).first(3), 90).value() == 1);
  CHECK(cuda::SelectCudaImage(with_specific, 89).value() == 0);
  CHECK(cuda::SelectCudaImage(with_specific, 100).value() == 0);
  const std::vector<CudaImage> specific_only = {specific(ImageKind::kPtx, 90), specific(ImageKind::kCubin, 90)};
  CheckError(cuda::SelectCudaImage(specific_only, 100).status(), StatusCode::kIncompatible,
             {"no image runs on sm_100", "PTX for sm_90a, cubin for sm_90a", "its own capability alone"});
  CheckError(cuda::SelectCudaImage(specific_only, 86).status(), StatusCode::kIncompatible, {"sm_86"});
}

TEST_CASE("cuda offline: metadata is checked against the data and the limits") {
  const std::span<const uint8_t> ptx = TestKernelPtx("add_f32");
  REQUIRE(!ptx.empty());
  const CudaKernelDescription add = CudaTestKernel("add_f32");
  StatusOr<cuda::CudaExecutableInfo> parsed = Parse(ptx, CudaMetadata(add));
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  REQUIRE(parsed->entry_points.size() == 1);
  CHECK(parsed->entry_points[0].name == "add_f32");
  CHECK(parsed->entry_points[0].binding_count == 3);
  CHECK(parsed->entry_points[0].read_only_bindings == 0b011);
  CHECK(parsed->entry_points[0].workgroup_size[0] == 64);
  CHECK(parsed->entry_points[0].check_messages.size() == 1);
  REQUIRE(parsed->images.size() == 1);
  CHECK(parsed->images[0].kind == ImageKind::kPtx);
  CHECK(parsed->images[0].arch == 80);
  CHECK(parsed->images[0].bytes.size() == ptx.size());
  CHECK(parsed->ptx_version == 80);

  auto refused = [&](const CudaKernelDescription& description, std::span<const uint8_t> data = {}) {
    return Parse(data.empty() ? ptx : data, CudaMetadata(description)).status();
  };
  // Not a FlatBuffer of this schema, or a truncated one.
  const std::vector<uint8_t> garbage(64, 0x5A);
  CheckError(Parse(ptx, garbage).status(), StatusCode::kInvalidArgument,
             {"executable 'kernel' (cuda-ptx): metadata (64 bytes) is not a CUDA executable description", "'SCUX'"});
  std::vector<uint8_t> truncated = CudaMetadata(add);
  truncated.resize(truncated.size() / 2);
  CheckError(Parse(ptx, truncated).status(), StatusCode::kDataLoss, {"corrupt FlatBuffer"});
  // Images.
  CudaKernelDescription changed = add;
  changed.images[0].size = ptx.size() + 1;
  CheckError(refused(changed), StatusCode::kOutOfRange,
             {"image 0 (PTX for sm_80) spans bytes [0, " + std::to_string(ptx.size() + 1) + ")",
              "which has " + std::to_string(ptx.size()) + " bytes"});
  changed = add;
  changed.images[0].offset = UINT64_MAX - 8;
  CheckError(refused(changed), StatusCode::kOutOfRange, {"image 0 (PTX for sm_80) spans bytes"});
  changed = add;
  changed.images[0].size = ptx.size() - 1;
  CheckError(refused(changed), StatusCode::kInvalidArgument,
             {"image 0 (PTX for sm_80) is not NUL-terminated", "last byte is 0xa"});
  changed = add;
  changed.images[0].size = 0;
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"image 0 (PTX for sm_80) is empty"});
  changed = add;
  changed.images[0].kind = 1;
  changed.images[0].arch = 90;
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"image 0 (cubin for sm_90) is not an ELF file"});
  // An arch-specific image says so.
  changed = add;
  changed.images[0].arch = 90;
  changed.images[0].arch_specific = true;
  StatusOr<cuda::CudaExecutableInfo> specific = Parse(ptx, CudaMetadata(changed));
  REQUIRE_MESSAGE(specific.ok(), specific.status().ToString());
  CHECK(specific->images[0].arch_specific);
  CHECK(cuda::DescribeImage(specific->images[0]) == "PTX for sm_90a");
  CHECK(!parsed->images[0].arch_specific);
  changed = add;
  changed.images[0].kind = 7;
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"image 0 has kind 7"});
  changed = add;
  changed.images[0].arch = 8;
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"image 0 has arch 8", "such as 80 for sm_80"});
  changed = add;
  changed.images.clear();
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"metadata lists no images"});
  // A second image beyond the first must be in range too.
  changed = add;
  changed.images.push_back({0, 90, ptx.size() - 4, 8});
  CheckError(refused(changed), StatusCode::kOutOfRange, {"image 1 (PTX for sm_90)"});
  // Entry points.
  changed = add;
  changed.entry_point = "";
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"entry point 0 has no name"});
  changed = add;
  changed.binding_count = 33;
  changed.read_only = {};
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"entry point 'add_f32' has 33 bindings; the limit is 32"});
  changed = add;
  changed.constant_count = 65;
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"has 65 push constants; the limit is 64"});
  changed = add;
  changed.read_only = {true};
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"has 3 bindings but 1 read-only flags"});
  changed = add;
  changed.workgroup_size = {0, 1, 1};
  CheckError(refused(changed), StatusCode::kInvalidArgument, {"workgroup size x = 0; expected at least 1"});
  changed = add;
  changed.workgroup_size = {1, 1, 65};
  CheckError(refused(changed), StatusCode::kFailedPrecondition, {"workgroup size z = 65", "at most 64"});
  changed = add;
  changed.workgroup_size = {64, 32, 1};
  CheckError(refused(changed), StatusCode::kFailedPrecondition,
             {"2048 threads per workgroup (64x32x1)", "at most 1024 per block"});
  stream::KernelLimits small;
  small.max_threads_per_block = 32;
  changed = add;
  CheckError(Parse(ptx, CudaMetadata(changed), small).status(), StatusCode::kFailedPrecondition,
             {"64 threads per workgroup", "at most 32"});
  changed = add;
  changed.shared_memory_bytes = 100000;
  CheckError(refused(changed), StatusCode::kFailedPrecondition,
             {"declares 100000 bytes of shared memory", "at most 49152"});
  // Dynamic shared memory: up to the opt-in maximum, which is read for
  // each entry point; past it, refused with both figures.
  stream::KernelLimits hopper;
  hopper.max_shared_memory_per_block_optin = 232448;
  changed = add;
  changed.dynamic_shared_memory_bytes = 65536;
  StatusOr<cuda::CudaExecutableInfo> dynamic = Parse(ptx, CudaMetadata(changed), hopper);
  REQUIRE_MESSAGE(dynamic.ok(), dynamic.status().ToString());
  CHECK(dynamic->dynamic_shared_bytes == std::vector<uint32_t>{65536});
  CHECK(parsed->dynamic_shared_bytes == std::vector<uint32_t>{0});
  CheckError(refused(changed), StatusCode::kFailedPrecondition,
             {"entry point 'add_f32' uses 65536 bytes of shared memory (65536 dynamic)",
              "at most 49152 per block once a kernel opts in", "mma-stages"});
  changed.shared_memory_bytes = 1024;
  changed.dynamic_shared_memory_bytes = 232448;
  CheckError(Parse(ptx, CudaMetadata(changed), hopper).status(), StatusCode::kFailedPrecondition,
             {"uses 233472 bytes of shared memory (232448 dynamic)", "at most 232448"});

  // A workgroup size of other than 3 values, which the helper cannot write.
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString("add_f32");
  const uint32_t two[] = {64, 1};
  auto size = fbb.CreateVector(two, 2);
  schema::cuda::EntryPointDefBuilder entry(fbb);
  entry.add_name(name);
  entry.add_workgroup_size(size);
  auto entries = fbb.CreateVector(std::vector<flatbuffers::Offset<schema::cuda::EntryPointDef>>{entry.Finish()});
  auto images = fbb.CreateVector(std::vector<flatbuffers::Offset<schema::cuda::ImageDef>>{
      schema::cuda::CreateImageDef(fbb, schema::cuda::ImageKind::Ptx, 80, 0, ptx.size())});
  fbb.Finish(schema::cuda::CreateCudaExecutableDef(fbb, entries, images, 80),
             schema::cuda::CudaExecutableDefIdentifier());
  const std::vector<uint8_t> two_values(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  CheckError(Parse(ptx, two_values).status(), StatusCode::kInvalidArgument,
             {"needs a workgroup size of 3 values (x, y, z), got 2"});
}

TEST_CASE("cuda offline: fills split into aligned words and edge bytes") {
  std::mt19937 random(11);
  for (int round = 0; round < 500; ++round) {
    const uint32_t pattern_length = 1u << (random() % 3);
    const uint64_t address = 0x1000 + random() % 8;
    const uint64_t length = random() % 40 / pattern_length * pattern_length;
    const uint32_t pattern =
        static_cast<uint32_t>(random()) & (pattern_length == 4 ? 0xFFFFFFFFu : (1u << (8 * pattern_length)) - 1);
    INFO("address ", address, " length ", length, " pattern 0x", pattern, " of ", pattern_length);
    const hal::FillSplit split = hal::SplitFill(address, length, pattern, pattern_length);
    REQUIRE(split.head + split.middle + split.tail == length);
    CHECK(split.head < 4);
    CHECK(split.tail < 4);
    CHECK(split.middle % 4 == 0);
    if (split.middle) CHECK((address + split.head) % 4 == 0);
    std::vector<uint8_t> bytes;
    bytes.insert(bytes.end(), split.head_bytes, split.head_bytes + split.head);
    for (uint64_t i = 0; i < split.middle; ++i) bytes.push_back(static_cast<uint8_t>(split.word >> (8 * (i % 4))));
    bytes.insert(bytes.end(), split.tail_bytes, split.tail_bytes + split.tail);
    for (uint64_t i = 0; i < length; ++i) {
      if (bytes[i] != static_cast<uint8_t>(pattern >> (8 * (i % pattern_length)))) FAIL_CHECK("byte ", i);
    }
  }
}

// ---------------------------------------------------------------------------
// The unavailable paths (their CTests set STRATA_CUDA_LIBRARY)

TEST_CASE("cuda: without the driver library, the device is unavailable and the rest goes on" * doctest::skip()) {
  const char* library = std::getenv("STRATA_CUDA_LIBRARY");
  REQUIRE(library);
  StatusOr<Ref<hal::Device>> device = drivers::DefaultRegistry().CreateDevice("cuda");
  CheckError(device.status(), StatusCode::kUnavailable,
             {"cuda: the CUDA driver library ", library, " could not be opened", "install the NVIDIA driver"});
  // Asked again, the same answer; and the other drivers work.
  CHECK(drivers::DefaultRegistry().CreateDevice("cuda://1").status().ToString() == device.status().ToString());
  CHECK(drivers::DefaultRegistry().CreateDevice("cpu-sync").ok());
  // Options are checked before the library is needed.
  CheckError(drivers::DefaultRegistry().CreateDevice("cuda?graphs=2").status(), StatusCode::kInvalidArgument,
             {"graphs"});
  CheckError(drivers::DefaultRegistry().CreateDevice("cuda?pipelined=2").status(), StatusCode::kInvalidArgument,
             {"pipelined"});
}

TEST_CASE("cuda: the toolkit's stub library is not the driver" * doctest::skip()) {
  REQUIRE(std::getenv("STRATA_CUDA_LIBRARY"));
  CheckError(drivers::DefaultRegistry().CreateDevice("cuda").status(), StatusCode::kUnavailable,
             {"is the CUDA toolkit's stub library, not the NVIDIA driver", "CUDA_ERROR_STUB_LIBRARY (34)",
              "install the NVIDIA driver"});
  CHECK(drivers::DefaultRegistry().CreateDevice("cpu-sync").ok());
}

// ---------------------------------------------------------------------------
// On a device

TEST_CASE("cuda: device info and selection") {
  Ref<hal::Device> device = OpenCudaDevice();
  if (!device) return;
  const hal::DeviceInfo& info = device->info();
  CHECK(info.executable_formats == std::vector<std::string>{"cuda-ptx"});
  CHECK(info.description.find(", sm_") != std::string::npos);
  CHECK(info.limits.min_binding_alignment == 16);
  CHECK(info.limits.max_workgroup_count[0] >= 65535);
  CHECK(info.concurrency >= 1);
  REQUIRE(info.details.size() >= 4);
  CHECK(info.details[0].find("(this one)") != std::string::npos);
  CHECK(OpenCudaDevice("cuda://0"));
  CheckError(drivers::DefaultRegistry().CreateDevice("cuda://99").status(), StatusCode::kNotFound,
             {"no device with index '99'", "0: "});
  CheckError(drivers::DefaultRegistry().CreateDevice("cuda?device=first").status(), StatusCode::kNotFound,
             {"'first'"});
  CheckError(drivers::DefaultRegistry().CreateDevice("cuda?validation=1").status(), StatusCode::kInvalidArgument,
             {"validation"});
  // Device-local, then managed (only with concurrent managed access), then
  // pinned: host-visible buffers are managed memory where there is some.
  const auto& context = static_cast<stream::StreamDevice*>(device.get())->context();
  const auto heaps = device->allocator()->heaps();
  const bool managed = context.facts().concurrent_managed_access;
  REQUIRE(heaps.size() == (managed ? 3u : 2u));
  CHECK(heaps[0].memory_types == hal::kMemoryDeviceLocal);
  if (managed) {
    CHECK(heaps[1].memory_types == (hal::kMemoryDeviceLocal | hal::kMemoryHostVisible | hal::kMemoryHostCoherent));
  }
  CHECK(heaps.back().memory_types == (hal::kMemoryHostVisible | hal::kMemoryHostCoherent));
  auto input = device->allocator()->Allocate({.memory_types = hal::kMemoryHostVisible}, 64);
  REQUIRE(input.ok());
  CHECK((*input)->memory_types() == heaps[1].memory_types);
}

TEST_CASE("cuda: failed checks report the model's message and stop the submission") {
  Ref<hal::Device> device = OpenCudaDevice();
  if (!device) return;
  // Resubmitted command buffers run as graphs: the words start from zero in
  // them too.
  CheckGpuCheckWords(*device, [](CommandBuffer& command_buffer) {
    return static_cast<stream::StreamCommandBuffer&>(command_buffer).segment_count();
  });
}

TEST_CASE("cuda: select_op and scale_exp compute what their C versions do") {
  Ref<hal::Device> device = OpenCudaDevice();
  if (!device) return;
  Ref<hal::Executable> select = PrepareTestKernel(*device, "select_op");
  Ref<hal::Executable> scale_exp = PrepareTestKernel(*device, "scale_exp");
  // Inputs across the ranges of tanh's three paths, and sqrt's.
  std::vector<float> inputs;
  for (int i = 0; i < 200; ++i) inputs.push_back((i - 100) * 0.137f);
  for (float x : {0.0f, 1e-6f, -1e-6f, 0.03f, 0.0625f, -0.0625f, 0.5f, 9.99f, 10.0f, 50.0f, -50.0f}) {
    inputs.push_back(x);
  }
  const uint32_t count = static_cast<uint32_t>(inputs.size());
  Ref<Buffer> in = Allocate(*device, count * 4), out = Allocate(*device, count * 4);
  Write(*device, in.get(), 0, inputs);
  auto relative_error = [](float got, double expected) {
    if (expected == 0) return std::fabs(double(got));
    return std::fabs(got - expected) / std::fabs(expected);
  };
  for (uint32_t op = 0; op <= 4; ++op) {
    INFO("op ", op);
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    const uint32_t constants[] = {op};
    const BufferBinding bindings[] = {{in.get(), 0, count * 4}, {out.get(), 0, count * 4}};
    REQUIRE(command_buffer->Dispatch(select.get(), 0, {1, 1, 1}, constants, bindings).ok());
    REQUIRE(command_buffer->End().ok());
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    const std::vector<float> result = Read<float>(*device, out.get(), 0, count);
    for (uint32_t i = 0; i < count; ++i) {
      const float x = inputs[i];
      if (op == 0) CHECK(result[i] == -x);
      if (op == 1) CHECK(result[i] == x + 0.5f);
      if ((op == 2 || op == 4) && x >= 0) CHECK(result[i] == (op == 2 ? 1 : 2) * std::sqrt(x));
      if ((op == 2 || op == 4) && x < 0) CHECK(std::isnan(result[i]));
      if (op == 3 && relative_error(result[i], std::tanh(double(x))) > 2e-6) {
        FAIL_CHECK("tanh(", x, ") = ", result[i], ", expected ", std::tanh(double(x)));
      }
    }
  }
  // scale_exp over 3 workgroups of 100 elements: 0.25 * exp(x) for x in [-4, 4].
  std::vector<float> small(count);
  for (uint32_t i = 0; i < count; ++i) small[i] = -4.0f + 8.0f * i / count;
  Write(*device, in.get(), 0, small);
  Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
  const float scale = 0.25f;
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &scale, 4);
  const uint32_t constants[] = {scale_bits, 100};
  const BufferBinding bindings[] = {{in.get(), 0, count * 4}, {out.get(), 0, count * 4}};
  REQUIRE(command_buffer->Dispatch(scale_exp.get(), 0, {(count + 99) / 100, 1, 1}, constants, bindings).ok());
  REQUIRE(command_buffer->End().ok());
  REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
  const std::vector<float> result = Read<float>(*device, out.get(), 0, count);
  for (uint32_t i = 0; i < count; ++i) {
    const double expected = 0.25 * std::exp(double(small[i]));
    if (relative_error(result[i], expected) > 2e-6) FAIL_CHECK("exp(", small[i], ") * 0.25 = ", result[i]);
  }
}

TEST_CASE("cuda: command buffers submitted again run as graphs") {
  for (const char* spec : {"cuda", "cuda?graphs=0"}) {
    INFO(spec);
    Ref<hal::Device> device = OpenCudaDevice(spec);
    if (!device) return;
    const bool graphs = std::string(spec) == "cuda";
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    Ref<Buffer> accumulator = Allocate(*device, 4096, hal::kMemoryDeviceLocal);
    Ref<Buffer> ones = Allocate(*device, 4096);
    Ref<Buffer> history = Allocate(*device, 16);
    Write(*device, accumulator.get(), 0, std::vector<float>(1024, 0.0f));
    Write(*device, ones.get(), 0, std::vector<float>(1024, 1.0f));
    // accumulator += 1 (checks: two segments), a fill and an update, then a
    // copy of the first element out.
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    const uint32_t group[] = {256};
    const BufferBinding bindings[] = {{accumulator.get(), 0, 4096}, {ones.get(), 0, 4096}, {accumulator.get(), 0, 4096}};
    REQUIRE(command_buffer->Dispatch(add.get(), 0, {4, 1, 1}, group, bindings).ok());
    REQUIRE(command_buffer->Barrier().ok());
    REQUIRE(command_buffer->Fill(history.get(), 4, 12, 0xABCD, 2).ok());
    const std::vector<uint8_t> update = {9, 9, 9, 9};
    REQUIRE(command_buffer->Update(update, history.get(), 12).ok());
    REQUIRE(command_buffer->Copy(accumulator.get(), 4092, history.get(), 0, 4).ok());
    REQUIRE(command_buffer->End().ok());
    auto* cuda_commands = static_cast<stream::StreamCommandBuffer*>(command_buffer.get());
    CHECK(cuda_commands->segment_count() == 2);
    for (int i = 1; i <= 5; ++i) {
      Status status = SubmitAndWait(*device, command_buffer.get());
      REQUIRE_MESSAGE(status.ok(), status.ToString());
      CHECK(Read<float>(*device, history.get(), 0, 1)[0] == float(i));
      CHECK(Read<uint32_t>(*device, history.get(), 4, 3) == std::vector<uint32_t>{0xABCDABCD, 0xABCDABCD, 0x09090909});
      CHECK(cuda_commands->graph_count() == (graphs && i >= 2 ? 2u : 0u));
    }
    // Re-recording drops the graphs.
    REQUIRE(command_buffer->Begin().ok());
    CHECK(cuda_commands->graph_count() == 0);
  }
}

TEST_CASE("cuda: indirect command buffers run as graphs while their tables name the same buffers") {
  for (const char* spec : {"cuda", "cuda?graphs=0"}) {
    INFO(spec);
    Ref<hal::Device> device = OpenCudaDevice(spec);
    if (!device) return;
    const bool graphs = std::string(spec) == "cuda";
    Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
    Ref<Buffer> ones = Allocate(*device, 4096);
    Ref<Buffer> first = Allocate(*device, 4096), second = Allocate(*device, 8192);
    Write(*device, ones.get(), 0, std::vector<float>(1024, 1.0f));
    Write(*device, first.get(), 0, std::vector<float>(1024, 0.0f));
    Write(*device, second.get(), 0, std::vector<float>(2048, 0.0f));
    // slot 0 += 1 (its whole entry: the length parameter comes from the
    // table), a barrier, slot 0 += 1 again (add_f32 has checks: two
    // segments, both binding the slot).
    StatusOr<Ref<CommandBuffer>> made = device->CreateIndirectCommandBuffer();
    REQUIRE(made.ok());
    Ref<CommandBuffer> command_buffer = std::move(made).value();
    REQUIRE(command_buffer->Begin().ok());
    const uint32_t group[] = {256};
    const BufferBinding bindings[] = {BufferBinding::Slot(0), {ones.get(), 0, 4096}, BufferBinding::Slot(0)};
    REQUIRE(command_buffer->Dispatch(add.get(), 0, {4, 1, 1}, group, bindings).ok());
    REQUIRE(command_buffer->Barrier().ok());
    REQUIRE(command_buffer->Dispatch(add.get(), 0, {4, 1, 1}, group, bindings).ok());
    REQUIRE(command_buffer->End().ok());
    auto* stream_commands = static_cast<stream::StreamCommandBuffer*>(command_buffer.get());
    REQUIRE(stream_commands->segment_count() == 2);
    CommandBuffer* raw = command_buffer.get();
    auto submit = [&](Buffer* target, uint64_t offset) {
      const BufferBinding table[] = {{target, offset, 4096}};
      const std::span<const BufferBinding> tables[] = {table};
      StatusOr<Ref<hal::Semaphore>> created = device->CreateSemaphore(0);
      REQUIRE(created.ok());
      Ref<hal::Semaphore> done = std::move(created).value();
      hal::SemaphoreValue signal{done.get(), 1};
      REQUIRE(device->QueueExecute({}, {&signal, 1}, {&raw, 1}, tables).ok());
      REQUIRE(done->Wait(1, std::chrono::seconds(10)).ok());
    };
    // (buffer, offset, the value its last element reaches, graphs after)
    struct Step {
      Buffer* target;
      uint64_t offset;
      float value;
      size_t graph_count;
    };
    // A segment keeps the graphs of the bindings it has run, so the first
    // buffer's run again at once when it comes back.
    const Step steps[] = {{first.get(), 0, 2, 0},     {first.get(), 0, 4, 2},     {first.get(), 0, 6, 2},
                          {second.get(), 4096, 2, 2}, {second.get(), 4096, 4, 4}, {first.get(), 0, 8, 4},
                          {first.get(), 0, 10, 4}};
    for (size_t i = 0; i < std::size(steps); ++i) {
      INFO("submission ", i);
      submit(steps[i].target, steps[i].offset);
      CHECK(Read<float>(*device, steps[i].target, steps[i].offset + 4092, 1)[0] == steps[i].value);
      CHECK(stream_commands->graph_count() == (graphs ? steps[i].graph_count : 0u));
    }
    CHECK(Read<float>(*device, second.get(), 0, 1)[0] == 0.0f);
    // Five more bindings, each twice: a segment keeps the graphs of the last
    // four, so the first buffer's are gone and it runs without one.
    Ref<Buffer> more = Allocate(*device, 5 * 4096);
    Write(*device, more.get(), 0, std::vector<float>(5 * 1024, 0.0f));
    for (uint64_t offset = 0; offset < 5 * 4096; offset += 4096) {
      submit(more.get(), offset);
      submit(more.get(), offset);
      CHECK(Read<float>(*device, more.get(), offset + 4092, 1)[0] == 4.0f);
    }
    CHECK(stream_commands->graph_count() == (graphs ? 8u : 0u));
    submit(first.get(), 0);
    CHECK(Read<float>(*device, first.get(), 4092, 1)[0] == 12.0f);
    CHECK(stream_commands->graph_count() == (graphs ? 6u : 0u));
  }
}

// A chain of submissions, each waiting for the last one's signal: launched
// on the stream back to back, each followed by an event that a second
// thread waits for (more than one in flight), or one at a time with
// pipelined=0; the results are the same. A failed check fails the rest of
// the chain with its message; the device goes on.
TEST_CASE("cuda: dependent submissions are launched without waiting, on events") {
  for (const char* spec : {"cuda", "cuda?pipelined=0"}) {
    CAPTURE(spec);
    Ref<hal::Device> device = OpenCudaDevice(spec);
    if (!device) return;
    auto* stream_device = static_cast<stream::StreamDevice*>(device.get());
    SubmissionChain chain(*device, 1 << 22, 256);
    chain.RunAndCheck();
    const size_t in_flight = stream_device->queue().max_in_flight();
    if (std::string(spec) == "cuda") {
      CHECK(in_flight > 1);
    } else {
      CHECK(in_flight == 0);
    }
    chain.CheckFailedStep();
    // The device goes on.
    Ref<hal::Semaphore> again = device->CreateSemaphore(0).value();
    CHECK(chain.Run(again.get(), 0).ok());
  }
}

TEST_CASE("cuda: imports that share pages") {
  Ref<hal::Device> device = OpenCudaDevice();
  if (!device) return;
  alignas(4096) static uint32_t host[2048];
  std::fill(std::begin(host), std::end(host), 7u);
  auto import = [&](uint64_t first, uint64_t count, hal::MemoryAccesses access) {
    hal::BufferParams params;
    params.memory_types = hal::kMemoryHostVisible;
    params.access = access;
    if (access == hal::kAccessRead) params.usage = hal::kUsageTransferSource | hal::kUsageDispatchStorage;
    return device->allocator()->Import(params, {reinterpret_cast<uint8_t*>(host + first), count * 4}, nullptr);
  };
  {
    // Two imports in one page, and a third over both pages.
    Ref<Buffer> a = import(0, 100, hal::kAccessReadWrite).value();
    Ref<Buffer> b = import(50, 150, hal::kAccessReadWrite).value();
    Ref<Buffer> c = import(512, 1536, hal::kAccessReadWrite).value();
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    REQUIRE(command_buffer->Fill(a.get(), 0, 16, 0x01010101, 4).ok());
    REQUIRE(command_buffer->Fill(b.get(), 0, 16, 0x02020202, 4).ok());
    REQUIRE(command_buffer->Fill(c.get(), 6000, 16, 0x03030303, 4).ok());
    REQUIRE(command_buffer->End().ok());
    a = nullptr;  // the command buffer holds it, and the page stays registered for b
    REQUIRE(SubmitAndWait(*device, command_buffer.get()).ok());
    CHECK(host[0] == 0x01010101u);
    CHECK(host[4] == 7u);
    CHECK(host[50] == 0x02020202u);
    CHECK(host[512 + 1500] == 0x03030303u);
  }
  // Everything was unregistered: the same pages import again.
  CHECK(import(0, 2048, hal::kAccessReadWrite).ok());
  const auto& context = static_cast<const cuda::CudaContext&>(static_cast<stream::StreamDevice*>(device.get())->context());
  Ref<Buffer> read_only = import(0, 16, hal::kAccessRead).value();
  StatusOr<Ref<Buffer>> writable = import(32, 16, hal::kAccessReadWrite);
  if (context.read_only_host_register()) {
    // Pages registered read-only cannot serve a writable import.
    CheckError(writable.status(), StatusCode::kFailedPrecondition, {"registered read-only"});
  } else {
    CHECK(writable.ok());
  }
}

TEST_CASE("cuda: kernels whose parameters differ from the ABI are refused") {
  Ref<hal::Device> device = OpenCudaDevice();
  if (!device) return;
  CudaKernelDescription add = CudaTestKernel("add_f32");
  // One constant more than add_f32.ptx declares.
  add.constant_count = 2;
  std::vector<uint8_t> metadata = CudaMetadata(add);
  hal::ExecutableParams params;
  params.name = "add_f32";
  params.format = cuda::kCudaPtxFormat;
  params.data = TestKernelPtx("add_f32");
  params.metadata = metadata;
  StatusOr<Ref<hal::Executable>> executable = device->PrepareExecutable(params);
  if (!cuda::LoadCudaLibrary().value()->cuFuncGetParamInfo) {
    std::printf("this CUDA driver cannot list kernel parameters (cuFuncGetParamInfo): not checked\n");
    return;
  }
  CheckError(executable.status(), StatusCode::kInvalidArgument,
             {"entry point 'add_f32': declares 8 parameters of 8, 8, 8, 8, 4, 8, 8, 8 bytes",
              "passes 6 (3 binding pointers, the check-status pointer, 2 32-bit constants)"});
}

TEST_CASE("cuda: misaligned bindings and other devices' resources are refused") {
  Ref<hal::Device> device = OpenCudaDevice();
  if (!device) return;
  Ref<hal::Executable> add = PrepareTestKernel(*device, "add_f32");
  Ref<Buffer> buffer = Allocate(*device, 1024);
  Ref<Buffer> odd = buffer->Subspan(4, 512).value();
  Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
  const uint32_t group[] = {64};
  const BufferBinding bindings[] = {{buffer.get(), 0, 64}, {buffer.get(), 64, 64}, {odd.get(), 0, 64}};
  CheckError(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, group, bindings), StatusCode::kInvalidArgument,
             {"binding 2 starts at device address", "a subspan at offset 4 plus the binding offset 0",
              "binding alignment 16"});
  // A command buffer runs only on its own device.
  Ref<hal::Device> other = OpenCudaDevice();
  REQUIRE(command_buffer->End().ok());
  CommandBuffer* raw = command_buffer.get();
  CheckError(other->QueueExecute({}, {}, {&raw, 1}), StatusCode::kInvalidArgument, {"created by another cuda device than 'cuda'"});
  Ref<CommandBuffer> foreign = BeginCommandBuffer(*other);
  CheckError(foreign->Fill(buffer.get(), 0, 4, 0, 4), StatusCode::kInvalidArgument, {"the target buffer belongs to another device"});
}

// Last in the file: after a kernel fault, CUDA is unusable in the process.
TEST_CASE("cuda: a kernel fault fails its submission, its device and new devices; other drivers go on") {
  // A kernel that stores to address 8.
  static const char kFault[] =
      ".version 8.0\n.target sm_80\n.address_size 64\n"
      ".visible .entry fault()\n.maxntid 1, 1, 1\n{\n"
      "  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n"
      "  mov.u64 %rd1, 8;\n  mov.u32 %r1, 1;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
  const std::span<const uint8_t> ptx(reinterpret_cast<const uint8_t*>(kFault), sizeof(kFault));
  CudaKernelDescription description;
  description.entry_point = "fault";
  description.images.push_back({0, 80, 0, ptx.size()});
  const std::vector<uint8_t> metadata = CudaMetadata(description);
  {
    Ref<hal::Device> device = OpenCudaDevice();
    if (!device) return;
    hal::ExecutableParams params;
    params.name = "faulty";
    params.format = cuda::kCudaPtxFormat;
    params.data = ptx;
    params.metadata = metadata;
    StatusOr<Ref<hal::Executable>> fault = device->PrepareExecutable(params);
    REQUIRE_MESSAGE(fault.ok(), fault.status().ToString());
    Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*device);
    REQUIRE(command_buffer->Dispatch(fault->get(), 0, {1, 1, 1}, {}, {}).ok());
    REQUIRE(command_buffer->End().ok());
    // Recorded before the fault: nothing can be allocated in the context
    // after it.
    Ref<Buffer> buffer = Allocate(*device, 64);
    Ref<CommandBuffer> fill = BeginCommandBuffer(*device);
    REQUIRE(fill->Fill(buffer.get(), 0, 64, 0, 1).ok());
    REQUIRE(fill->End().ok());
    CheckError(SubmitAndWait(*device, command_buffer.get()), StatusCode::kUnavailable,
               {"running the dispatch of 'fault' (executable 'faulty')", "CUDA_ERROR_ILLEGAL_ADDRESS (700)",
                "restart it"});
    // Every later submission of the device fails at once, saying why.
    CheckError(SubmitAndWait(*device, fill.get()), StatusCode::kUnavailable,
               {"an earlier submission left the device unusable", "CUDA_ERROR_ILLEGAL_ADDRESS (700)"});
  }
  // The CUDA driver allows no new context in the process; the other drivers
  // go on.
  CheckError(drivers::DefaultRegistry().CreateDevice("cuda").status(), StatusCode::kUnavailable,
             {"CUDA_ERROR_ILLEGAL_ADDRESS (700)", "restart it"});
  Ref<hal::Device> cpu = CreateDevice("cpu-sync");
  Ref<hal::Executable> add = PrepareTestKernel(*cpu, "add_f32");
  Ref<Buffer> buffer = Allocate(*cpu, 256);
  Write(*cpu, buffer.get(), 0, std::vector<float>(64, 1.5f));
  Ref<CommandBuffer> command_buffer = BeginCommandBuffer(*cpu);
  const uint32_t group[] = {64};
  const BufferBinding bindings[] = {{buffer.get(), 0, 256}, {buffer.get(), 0, 256}, {buffer.get(), 0, 256}};
  REQUIRE(command_buffer->Dispatch(add.get(), 0, {1, 1, 1}, group, bindings).ok());
  REQUIRE(command_buffer->End().ok());
  REQUIRE(SubmitAndWait(*cpu, command_buffer.get()).ok());
  CHECK(Read<float>(*cpu, buffer.get(), 0, 64) == std::vector<float>(64, 3.0f));
}

}  // namespace
}  // namespace strata::testing
