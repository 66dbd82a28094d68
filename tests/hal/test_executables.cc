#include "tests/hal/test_executables.h"

#include "strata/schemas/cpu_executable_generated.h"
#include "tests/hal/kernels/test_kernels.h"

namespace strata::testing {

std::vector<uint8_t> CpuMetadata(const std::string& entry_point, uint32_t binding_count, uint32_t constant_count,
                                 std::vector<bool> read_only, std::vector<std::string> features) {
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
  auto entries = fbb.CreateVector(std::vector<flatbuffers::Offset<schema::cpu::EntryPointDef>>{entry.Finish()});
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> required;
  if (!features.empty()) required = fbb.CreateVectorOfStrings(features);
  fbb.Finish(schema::cpu::CreateCpuExecutableDef(fbb, entries, required), schema::cpu::CpuExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

namespace {

struct KernelLayout {
  const char* name;
  uint32_t binding_count;
  uint32_t constant_count;
  std::vector<bool> read_only;
};

const KernelLayout* FindLayout(std::string_view name) {
  static const KernelLayout kLayouts[] = {
      {"add_f32", 3, 1, {true, true, false}},
      {"fail_if", 0, 1, {}},
      {"fill_pattern", 1, 0, {false}},
      {"scale_exp", 2, 2, {true, false}},
      {"select_op", 2, 1, {true, false}},
  };
  for (const KernelLayout& layout : kLayouts) {
    if (name == layout.name) return &layout;
  }
  return nullptr;
}

}  // namespace

StatusOr<vm::Ref<hal::Executable>> PrepareTestKernelIfSupported(hal::Device& device, std::string_view name) {
  const KernelLayout* layout = FindLayout(name);
  if (!layout) return NotFoundError("no test kernel named '", name, "'");
  const std::pair<const char*, KernelArch> kFormats[] = {{"cpu-elf-x86_64", KernelArch::kX86_64},
                                                         {"cpu-elf-aarch64", KernelArch::kAarch64}};
  for (const std::string& format : device.info().executable_formats) {
    for (const auto& [kernel_format, arch] : kFormats) {
      if (format != kernel_format) continue;
      std::vector<uint8_t> metadata =
          CpuMetadata(layout->name, layout->binding_count, layout->constant_count, layout->read_only);
      hal::ExecutableParams params;
      params.name = name;
      params.format = format;
      params.data = TestKernelElf(name, arch);
      params.metadata = metadata;
      return device.PrepareExecutable(params);
    }
  }
  return vm::Ref<hal::Executable>();
}

}  // namespace strata::testing
