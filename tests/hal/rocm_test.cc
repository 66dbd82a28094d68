// The ROCm driver's own cases, beyond the conformance suite.
//
// "rocm offline: ..." cases need no GPU and run everywhere: hipError_t names
// and errors, the code object for a device, and the metadata checks against
// the data and the limits. Two cases run only with --no-skip, under the
// STRATA_ROCM_LIBRARY their CTests set or not: no HIP library, and a HIP
// library that finds no AMD GPU (what Debian's libamdhip64 does on a
// machine without one). On a machine with an AMD GPU, the last of them
// checks the device it opens instead.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

#include "drivers/registry.h"
#include "drivers/rocm/hip_api.h"
#include "drivers/rocm/rocm_executable.h"
#include "strata/schemas/rocm_executable_generated.h"
#include "tests/hal/hal_test_util.h"
#include "tests/hal/kernels/test_kernels.h"
#include "tests/hal/test_executables.h"

namespace strata::testing {
namespace {

using rocm::RocmCodeObject;

// The first 64 bytes of an AMDGPU ELF file (what the driver looks at before
// HIP reads the rest): the magic, 64-bit little-endian, e_machine EM_AMDGPU.
std::vector<uint8_t> ElfHeader(uint16_t machine = 224) {
  std::vector<uint8_t> header(64, 0);
  const uint8_t ident[] = {0x7F, 'E', 'L', 'F', 2, 1, 1, 64};
  std::memcpy(header.data(), ident, sizeof(ident));
  header[16] = 3;  // ET_DYN
  std::memcpy(header.data() + 18, &machine, 2);
  return header;
}

struct Kernel {
  std::string name = "add_f32";
  uint32_t bindings = 3;
  uint32_t constants = 1;
  std::vector<uint32_t> workgroup_size = {64, 1, 1};
  std::vector<std::string> checks = {"add.mlir:3: index out of bounds"};
  uint32_t kernarg_bytes = 0;  // 0: what the ABI needs, plus hidden arguments
  uint32_t shared_memory = 0;
};

struct Object {
  std::string arch;
  uint32_t version;
  uint64_t offset, size;
};

std::vector<uint8_t> Metadata(const std::vector<Kernel>& kernels, const std::vector<Object>& objects) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<schema::rocm::EntryPointDef>> entries;
  for (const Kernel& kernel : kernels) {
    // 3 pointers, the check pointer, one constant: 36 bytes, then HIP's
    // hidden arguments.
    const uint32_t kernarg = kernel.kernarg_bytes ? kernel.kernarg_bytes : 8 * (kernel.bindings + 1) + 4 + 256;
    std::vector<flatbuffers::Offset<flatbuffers::String>> checks;
    for (const std::string& check : kernel.checks) checks.push_back(fbb.CreateString(check));
    entries.push_back(schema::rocm::CreateEntryPointDef(
        fbb, fbb.CreateString(kernel.name), kernel.bindings, kernel.constants, 0,
        fbb.CreateVector(kernel.workgroup_size), fbb.CreateVector(checks), kernel.shared_memory, kernarg));
  }
  std::vector<flatbuffers::Offset<schema::rocm::CodeObjectDef>> code_objects;
  for (const Object& object : objects) {
    code_objects.push_back(schema::rocm::CreateCodeObjectDef(fbb, fbb.CreateString(object.arch), object.version,
                                                             object.offset, object.size));
  }
  fbb.Finish(schema::rocm::CreateRocmExecutableDef(fbb, fbb.CreateVector(entries), fbb.CreateVector(code_objects)),
             schema::rocm::RocmExecutableDefIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

StatusOr<rocm::RocmExecutableInfo> Parse(std::span<const uint8_t> data, const std::vector<uint8_t>& metadata,
                                         const stream::KernelLimits& limits = {}) {
  hal::ExecutableParams params;
  params.name = "kernel";
  params.format = rocm::kRocmHsacoFormat;
  params.data = data;
  params.metadata = metadata;
  return rocm::ParseRocmExecutable(params, limits);
}

// ---------------------------------------------------------------------------
// Without a GPU

TEST_CASE("rocm offline: hipError_t names and errors") {
  CHECK(rocm::HipResultName(hipErrorNoDevice) == "hipErrorNoDevice (100)");
  CHECK(rocm::HipResultName(hipErrorInvalidDevice) == "hipErrorInvalidDevice (101)");
  CHECK(rocm::HipResultName(hipErrorNoBinaryForGpu) == "hipErrorNoBinaryForGpu (209)");
  CHECK(rocm::HipResultName(hipErrorIllegalAddress) == "hipErrorIllegalAddress (700)");
  CHECK(rocm::HipResultName(static_cast<hipError_t>(12345)) == "unknown hipError_t (12345)");
  CheckError(rocm::HipError(hipErrorOutOfMemory, "allocate: hipMalloc of 64 bytes"), StatusCode::kResourceExhausted,
             {"allocate: hipMalloc of 64 bytes: hipErrorOutOfMemory (2)", "allocate less"});
  CheckError(rocm::HipError(hipErrorIllegalAddress, "running"), StatusCode::kUnavailable,
             {"hipErrorIllegalAddress (700)", "a kernel faulted", "restart it"});
  CheckError(rocm::HipError(hipErrorNoBinaryForGpu, "loading"), StatusCode::kIncompatible,
             {"hipErrorNoBinaryForGpu (209)", "--rocm-arch"});
  CHECK(rocm::IsStickyError(hipErrorIllegalAddress));
  CHECK(rocm::IsStickyError(hipErrorLaunchFailure));
  CHECK(!rocm::IsStickyError(hipErrorOutOfMemory));
  CHECK(rocm::HipVersionString(50221153) == "5.2");
  CHECK(rocm::HipVersionString(60342134) == "6.3");
  CHECK(rocm::MaxCodeObjectVersion(50221153) == 5);
  CHECK(rocm::MaxCodeObjectVersion(60342134) == 6);
}

TEST_CASE("rocm offline: the code object for a device") {
  const uint8_t byte = 0;
  auto object = [&](const char* arch, uint32_t version) { return RocmCodeObject{arch, version, {&byte, 1}}; };
  const std::vector<RocmCodeObject> objects = {object("gfx90a", 4), object("gfx942", 5), object("gfx942", 6),
                                               object("gfx1100", 5)};
  // The architecture before the features picks; then the newest version the
  // runtime reads.
  CHECK(rocm::SelectRocmCodeObject(objects, "gfx90a:sramecc+:xnack-", 5).value() == 0);
  CHECK(rocm::SelectRocmCodeObject(objects, "gfx942:sramecc+:xnack-", 5).value() == 1);
  CHECK(rocm::SelectRocmCodeObject(objects, "gfx942", 6).value() == 2);
  CHECK(rocm::SelectRocmCodeObject(objects, "gfx1100", 6).value() == 3);
  // No code object for the architecture, or only newer ones than the runtime
  // reads: the error names what there is and what to do.
  CheckError(rocm::SelectRocmCodeObject(objects, "gfx908:sramecc+:xnack-", 6).status(), StatusCode::kIncompatible,
             {"no code object runs on gfx908", "gfx90a code object v4, gfx942 code object v5",
              "recompile the module with --rocm-arch=gfx908"});
  const std::vector<RocmCodeObject> v6 = {object("gfx942", 6)};
  CheckError(rocm::SelectRocmCodeObject(v6, "gfx942", 5).status(), StatusCode::kIncompatible,
             {"reads code objects up to v5", "gfx942 code object v6", "--rocm-code-object=5"});
}

// The conformance suite's kernels (kernels/*.cl): each executable parses,
// and a device of each architecture they are built for gets its own code
// object (rocm-code-objects --test-kernels reads their arguments back).
TEST_CASE("rocm offline: the test kernels parse and run on each architecture they are built for") {
  for (const testing::TestKernel& kernel : testing::TestKernels()) {
    CAPTURE(kernel.name);
    REQUIRE(!kernel.rocm.empty());
    const testing::RocmKernelDescription description = testing::RocmTestKernel(kernel.name);
    StatusOr<rocm::RocmExecutableInfo> info = Parse(kernel.rocm, testing::RocmMetadata(description));
    REQUIRE_MESSAGE(info.ok(), info.status().ToString());
    REQUIRE(info->entry_points.size() == 1);
    CHECK(info->entry_points[0].name == kernel.name);
    REQUIRE(info->code_objects.size() == testing::kRocmTestArchCount);
    for (size_t i = 0; i < testing::kRocmTestArchCount; ++i) {
      const testing::RocmTestArch& arch = testing::kRocmTestArchs[i];
      CHECK(info->code_objects[i].arch == arch.name);
      CHECK(info->code_objects[i].version == arch.code_object_version);
      CHECK(rocm::SelectRocmCodeObject(info->code_objects, std::string(arch.name) + ":sramecc+:xnack-", 5).value() ==
            i);
    }
  }
}

TEST_CASE("rocm offline: metadata is checked against the data and the limits") {
  std::vector<uint8_t> data = ElfHeader();
  const std::vector<uint8_t> second = ElfHeader();
  data.insert(data.end(), second.begin(), second.end());
  const std::vector<Object> objects = {{"gfx90a", 4, 0, 64}, {"gfx942", 5, 64, 64}};
  StatusOr<rocm::RocmExecutableInfo> parsed = Parse(data, Metadata({Kernel{}}, objects));
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  REQUIRE(parsed->entry_points.size() == 1);
  CHECK(parsed->entry_points[0].name == "add_f32");
  CHECK(parsed->entry_points[0].binding_count == 3);
  CHECK(parsed->entry_points[0].workgroup_size[0] == 64);
  REQUIRE(parsed->code_objects.size() == 2);
  CHECK(parsed->code_objects[1].arch == "gfx942");
  CHECK(parsed->code_objects[1].version == 5);
  CHECK(parsed->code_objects[1].bytes.data() == data.data() + 64);

  const std::vector<uint8_t> garbage(64, 0x5A);
  CheckError(Parse(data, garbage).status(), StatusCode::kInvalidArgument,
             {"executable 'kernel' (rocm-hsaco): metadata (64 bytes) is not a ROCm executable description", "'SRCX'"});
  std::vector<uint8_t> truncated = Metadata({Kernel{}}, objects);
  truncated.resize(truncated.size() - 12);
  CheckError(Parse(data, truncated).status(), StatusCode::kDataLoss, {"corrupt FlatBuffer"});
  CheckError(Parse(data, Metadata({Kernel{}}, {})).status(), StatusCode::kInvalidArgument, {"no code objects"});
  CheckError(Parse(data, Metadata({}, objects)).status(), StatusCode::kInvalidArgument, {"no entry points"});
  CheckError(Parse(data, Metadata({Kernel{}}, {{"gfx90a", 4, 64, 128}})).status(), StatusCode::kOutOfRange,
             {"code object 0 (gfx90a code object v4) spans bytes [64, 192)", "which has 128 bytes"});
  CheckError(Parse(data, Metadata({Kernel{}}, {{"", 4, 0, 64}})).status(), StatusCode::kInvalidArgument,
             {"code object 0 names no architecture"});
  CheckError(Parse(data, Metadata({Kernel{}}, {{"gfx90a", 7, 0, 64}})).status(), StatusCode::kInvalidArgument,
             {"has code object version 7; expected 2 to 6"});
  std::vector<uint8_t> not_elf = data;
  not_elf[64] = 0;
  CheckError(Parse(not_elf, Metadata({Kernel{}}, objects)).status(), StatusCode::kInvalidArgument,
             {"code object 1 (gfx942 code object v5) is not an ELF file"});
  const std::vector<uint8_t> x86 = ElfHeader(62);
  CheckError(Parse(x86, Metadata({Kernel{}}, {{"gfx90a", 4, 0, 64}})).status(), StatusCode::kInvalidArgument,
             {"an ELF file for machine 62, not AMDGPU (224)"});
  // Entry points, checked as for every stream driver.
  Kernel small_kernarg;
  small_kernarg.kernarg_bytes = 24;
  CheckError(Parse(data, Metadata({small_kernarg}, objects)).status(), StatusCode::kInvalidArgument,
             {"entry point 'add_f32' has a kernel argument block of 24 bytes", "need 36"});
  Kernel wide;
  wide.workgroup_size = {2048, 1, 1};
  CheckError(Parse(data, Metadata({wide}, objects)).status(), StatusCode::kFailedPrecondition,
             {"workgroup size x = 2048; the device allows at most 1024"});
  Kernel lds;
  lds.shared_memory = 65536;
  stream::KernelLimits limits;
  limits.max_shared_memory_per_block = 65536;
  CHECK(Parse(data, Metadata({lds}, objects), limits).ok());
  limits.max_shared_memory_per_block = 32768;
  CheckError(Parse(data, Metadata({lds}, objects), limits).status(), StatusCode::kFailedPrecondition,
             {"declares 65536 bytes of shared memory; the device allows at most 32768"});
  CheckError(Parse(data, Metadata({Kernel{}, Kernel{}}, objects)).status(), StatusCode::kInvalidArgument,
             {"entry point 'add_f32' is listed twice"});
}

// ---------------------------------------------------------------------------
// The unavailable paths

TEST_CASE("rocm: without the HIP library, the device is unavailable and the rest goes on" * doctest::skip()) {
  const char* library = std::getenv("STRATA_ROCM_LIBRARY");
  REQUIRE(library);
  StatusOr<Ref<hal::Device>> device = drivers::DefaultRegistry().CreateDevice("rocm");
  CheckError(device.status(), StatusCode::kUnavailable,
             {"rocm: the HIP library could not be opened (", library, "install ROCm's HIP runtime"});
  CHECK(drivers::DefaultRegistry().CreateDevice("rocm://1").status().ToString() == device.status().ToString());
  CHECK(drivers::DefaultRegistry().CreateDevice("cpu-sync").ok());
  // Options are checked before the library is needed.
  CheckError(drivers::DefaultRegistry().CreateDevice("rocm?graphs=2").status(), StatusCode::kInvalidArgument,
             {"graphs"});
  CheckError(drivers::DefaultRegistry().CreateDevice("rocm?pipelined=2").status(), StatusCode::kInvalidArgument,
             {"pipelined"});
}

TEST_CASE("rocm: HIP without an AMD GPU leaves the device unavailable" * doctest::skip()) {
  StatusOr<const rocm::HipFunctions*> hip = rocm::LoadHipLibrary();
  StatusOr<Ref<hal::Device>> device = drivers::DefaultRegistry().CreateDevice("rocm");
  if (device.ok()) {
    // A machine with an AMD GPU: the device it opened.
    MESSAGE("an AMD GPU is here: ", (*device)->info().description);
    CHECK((*device)->info().executable_formats == std::vector<std::string>{"rocm-hsaco"});
    CHECK((*device)->info().description.find("gfx") != std::string::npos);
    return;
  }
  // The library loads, and reports no device.
  CheckError(hip.status(), StatusCode::kUnavailable, {"libamdhip64.so.", "found no AMD GPU", "hipInit: "});
  CHECK(device.status().ToString() == hip.status().ToString());
  CHECK(drivers::DefaultRegistry().CreateDevice("cpu-sync").ok());
}

}  // namespace
}  // namespace strata::testing
