#include "tests/hal/test_executables.h"

#include "strata/schemas/cpu_executable_generated.h"
#include "strata/schemas/cuda_executable_generated.h"
#include "strata/schemas/rocm_executable_generated.h"
#include "strata/schemas/vulkan_executable_generated.h"
#include "tests/hal/kernels/test_kernels.h"

namespace strata::testing {

std::vector<uint8_t> CpuMetadata(const std::string& entry_point, uint32_t binding_count, uint32_t constant_count,
                                 std::vector<bool> read_only, std::vector<std::string> features,
                                 uint64_t local_memory_bytes, bool ascending_workgroups) {
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString(entry_point);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> flags;
  if (!read_only.empty()) {
    std::vector<uint8_t> bytes(read_only.begin(), read_only.end());
    flags = fbb.CreateVector(bytes);
  }
  schema::cpu::EntryPointDefBuilder entry(fbb);
  entry.add_name(name);
  entry.add_binding_count(binding_count);
  entry.add_constant_count(constant_count);
  if (!read_only.empty()) entry.add_binding_read_only(flags);
  if (local_memory_bytes) entry.add_local_memory_bytes(local_memory_bytes);
  if (ascending_workgroups) entry.add_ascending_workgroups(true);
  auto entries = fbb.CreateVector(std::vector<flatbuffers::Offset<schema::cpu::EntryPointDef>>{entry.Finish()});
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> required;
  if (!features.empty()) required = fbb.CreateVectorOfStrings(features);
  fbb.Finish(schema::cpu::CreateCpuExecutableDef(fbb, entries, required), schema::cpu::CpuExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

namespace {

// The entry point of a GPU executable's metadata, in either schema: the
// fields both share, then what `extra` adds to the builder.
template <typename EntryBuilder, typename Extra>
flatbuffers::Offset<typename EntryBuilder::Table> GpuEntryPoint(flatbuffers::FlatBufferBuilder& fbb,
                                                                const GpuKernelDescription& description,
                                                                Extra extra) {
  auto name = fbb.CreateString(description.entry_point);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> flags;
  if (!description.read_only.empty()) {
    std::vector<uint8_t> bytes(description.read_only.begin(), description.read_only.end());
    flags = fbb.CreateVector(bytes);
  }
  auto workgroup_size = fbb.CreateVector(description.workgroup_size.data(), 3);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> messages;
  if (!description.check_messages.empty()) messages = fbb.CreateVectorOfStrings(description.check_messages);
  EntryBuilder entry(fbb);
  entry.add_name(name);
  entry.add_binding_count(description.binding_count);
  entry.add_constant_count(description.constant_count);
  if (!description.read_only.empty()) entry.add_binding_read_only(flags);
  entry.add_workgroup_size(workgroup_size);
  if (!description.check_messages.empty()) entry.add_check_messages(messages);
  extra(entry);
  return entry.Finish();
}

}  // namespace

std::vector<uint8_t> VulkanMetadata(const VulkanKernelDescription& description) {
  flatbuffers::FlatBufferBuilder fbb;
  auto entry = GpuEntryPoint<schema::vulkan::EntryPointDefBuilder>(fbb, description, [](auto&) {});
  auto entries = fbb.CreateVector(std::vector<flatbuffers::Offset<schema::vulkan::EntryPointDef>>{entry});
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> capabilities, extensions;
  if (!description.capabilities.empty()) capabilities = fbb.CreateVectorOfStrings(description.capabilities);
  if (!description.extensions.empty()) extensions = fbb.CreateVectorOfStrings(description.extensions);
  fbb.Finish(schema::vulkan::CreateVulkanExecutableDef(fbb, entries, description.spirv_version, capabilities,
                                                        extensions, description.workgroup_memory_bytes),
             schema::vulkan::VulkanExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> CudaMetadata(const CudaKernelDescription& description) {
  flatbuffers::FlatBufferBuilder fbb;
  auto entry = GpuEntryPoint<schema::cuda::EntryPointDefBuilder>(
      fbb, description, [&](auto& builder) {
        builder.add_shared_memory_bytes(description.shared_memory_bytes);
        builder.add_dynamic_shared_memory_bytes(description.dynamic_shared_memory_bytes);
      });
  auto entries = fbb.CreateVector(std::vector<flatbuffers::Offset<schema::cuda::EntryPointDef>>{entry});
  std::vector<flatbuffers::Offset<schema::cuda::ImageDef>> images;
  for (const CudaKernelDescription::Image& image : description.images) {
    images.push_back(schema::cuda::CreateImageDef(fbb, static_cast<schema::cuda::ImageKind>(image.kind), image.arch,
                                                  image.offset, image.size, image.arch_specific));
  }
  auto image_vector = fbb.CreateVector(images);
  fbb.Finish(schema::cuda::CreateCudaExecutableDef(fbb, entries, image_vector, description.ptx_version),
             schema::cuda::CudaExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::vector<uint8_t> RocmMetadata(const RocmKernelDescription& description) {
  flatbuffers::FlatBufferBuilder fbb;
  auto entry = GpuEntryPoint<schema::rocm::EntryPointDefBuilder>(fbb, description, [&](auto& builder) {
    builder.add_shared_memory_bytes(description.shared_memory_bytes);
    builder.add_kernarg_bytes(description.kernarg_bytes);
  });
  auto entries = fbb.CreateVector(std::vector<flatbuffers::Offset<schema::rocm::EntryPointDef>>{entry});
  std::vector<flatbuffers::Offset<schema::rocm::CodeObjectDef>> objects;
  for (const RocmKernelDescription::CodeObject& object : description.code_objects) {
    objects.push_back(schema::rocm::CreateCodeObjectDef(fbb, fbb.CreateString(object.arch), object.version,
                                                        object.offset, object.size));
  }
  auto object_vector = fbb.CreateVector(objects);
  fbb.Finish(schema::rocm::CreateRocmExecutableDef(fbb, entries, object_vector),
             schema::rocm::RocmExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

namespace {

// What each kernel takes, as its .c, .comp and .ptx files document; the
// Vulkan side adds what its SPIR-V declares (kernels/*.comp).
struct KernelLayout {
  const char* name;
  uint32_t binding_count;
  uint32_t constant_count;
  std::vector<bool> read_only;
  std::array<uint32_t, 3> workgroup_size;
  std::vector<std::string> check_messages;
  std::vector<std::string> capabilities;
};

const KernelLayout* FindLayout(std::string_view name) {
  static const KernelLayout kLayouts[] = {
      {"add_f32", 3, 1, {true, true, false}, {64, 1, 1}, {"add_f32: a or b is shorter than c"}, {}},
      {"fail_if", 0, 1, {}, {1, 1, 1}, {"fail_if: asked to fail with code 1"}, {}},
      {"fill_pattern", 1, 0, {false}, {1, 1, 1}, {"fill_pattern: the grid is shorter than the workgroup count"},
       {"Int64"}},
      {"scale_exp", 2, 2, {true, false}, {64, 1, 1}, {"scale_exp: in is shorter than out"}, {}},
      {"select_op", 2, 1, {true, false}, {64, 1, 1},
       {"select_op: in is shorter than out", "select_op: unknown op"}, {}},
  };
  for (const KernelLayout& layout : kLayouts) {
    if (name == layout.name) return &layout;
  }
  return nullptr;
}

// The entry point of test kernel `layout` as a GPU executable has it.
void DescribeGpuKernel(const KernelLayout& layout, GpuKernelDescription& description) {
  description.entry_point = layout.name;
  description.binding_count = layout.binding_count;
  description.constant_count = layout.constant_count;
  description.read_only = layout.read_only;
  description.workgroup_size = layout.workgroup_size;
  description.check_messages = layout.check_messages;
}

}  // namespace

VulkanKernelDescription VulkanTestKernel(std::string_view name) {
  VulkanKernelDescription description;
  const KernelLayout* layout = FindLayout(name);
  if (!layout) return description;
  DescribeGpuKernel(*layout, description);
  description.capabilities = layout->capabilities;
  return description;
}

CudaKernelDescription CudaTestKernel(std::string_view name) {
  CudaKernelDescription description;
  const KernelLayout* layout = FindLayout(name);
  if (!layout) return description;
  DescribeGpuKernel(*layout, description);
  description.images.push_back({0, 80, 0, TestKernelPtx(name).size()});
  return description;
}

RocmKernelDescription RocmTestKernel(std::string_view name) {
  RocmKernelDescription description;
  const KernelLayout* layout = FindLayout(name);
  const TestKernel* kernel = FindTestKernel(name);
  if (!layout || !kernel || kernel->rocm.empty()) return description;
  DescribeGpuKernel(*layout, description);
  uint64_t offset = 0;
  for (size_t i = 0; i < kRocmTestArchCount; ++i) {
    description.code_objects.push_back(
        {kRocmTestArchs[i].name, kRocmTestArchs[i].code_object_version, offset, kernel->rocm_sizes[i]});
    offset += kernel->rocm_sizes[i];
  }
  // Pointers (the bindings, the check-status word), 32-bit constants, then
  // the bindings' 64-bit lengths at their natural alignment.
  uint64_t bytes = 8 * (uint64_t{layout->binding_count} + (layout->check_messages.empty() ? 0 : 1)) +
                   4 * uint64_t{layout->constant_count};
  if (layout->binding_count > 0) bytes = (bytes + 7) / 8 * 8 + 8 * uint64_t{layout->binding_count};
  description.kernarg_bytes = static_cast<uint32_t>(bytes);
  return description;
}

StatusOr<Ref<hal::Executable>> PrepareTestKernelIfSupported(hal::Device& device, std::string_view name) {
  const KernelLayout* layout = FindLayout(name);
  if (!layout) return NotFoundError("no test kernel named '", name, "'");
  const std::pair<const char*, KernelArch> kFormats[] = {{"cpu-elf-x86_64", KernelArch::kX86_64},
                                                         {"cpu-elf-aarch64", KernelArch::kAarch64}};
  for (const std::string& format : device.info().executable_formats) {
    std::span<const uint8_t> data;
    std::vector<uint8_t> metadata;
    if (format == "vulkan-spirv") {
      data = TestKernelSpirv(name);
      metadata = VulkanMetadata(VulkanTestKernel(name));
    } else if (format == "cuda-ptx") {
      data = TestKernelPtx(name);
      metadata = CudaMetadata(CudaTestKernel(name));
    } else if (format == "rocm-hsaco") {
      const TestKernel* kernel = FindTestKernel(name);
      if (kernel) data = kernel->rocm;
      metadata = RocmMetadata(RocmTestKernel(name));
    }
    for (const auto& [kernel_format, arch] : kFormats) {
      if (format != kernel_format) continue;
      data = TestKernelElf(name, arch);
      metadata = CpuMetadata(layout->name, layout->binding_count, layout->constant_count, layout->read_only);
    }
    if (data.empty()) continue;
    hal::ExecutableParams params;
    params.name = name;
    params.format = format;
    params.data = data;
    params.metadata = metadata;
    return device.PrepareExecutable(params);
  }
  return Ref<hal::Executable>();
}

}  // namespace strata::testing
