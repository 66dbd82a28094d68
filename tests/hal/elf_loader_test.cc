// The CPU executable loader: real kernels (tests/hal/kernels) load from
// memory, resolve their imports and run on real buffers; every kind of
// damaged file is rejected with its own clear message and never crashes.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <elf.h>
#include <math.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "drivers/cpu/elf_loader.h"
#include "drivers/cpu/kernel_abi.h"
#include "tests/hal/kernels/test_kernels.h"

namespace strata::cpu {
namespace {

using testing::HostKernelArch;
using testing::HostKernelElf;
using testing::KernelArch;
using testing::TestKernelElf;
using testing::TestKernels;

std::unique_ptr<ElfLibrary> LoadKernel(std::string_view name,
                                       std::span<const ImportSymbol> imports = RuntimeImports()) {
  std::span<const uint8_t> elf = HostKernelElf(name);
  REQUIRE_MESSAGE(!elf.empty(), "no test kernel named ", name);
  auto library = ElfLibrary::Load(elf, imports);
  INFO("loading ", name, ": ", library.status().ToString());
  REQUIRE(library.ok());
  return std::move(library).value();
}

strata_cpu_kernel_fn_t EntryPoint(const ElfLibrary& library, const char* name) {
  void* address = library.Lookup(name);
  REQUIRE_MESSAGE(address != nullptr, "no export named ", name);
  return reinterpret_cast<strata_cpu_kernel_fn_t>(address);
}

// The bindings and constants of one dispatch, and the workgroup count.
struct Dispatch {
  std::vector<void*> bindings;
  std::vector<uint64_t> lengths;
  std::vector<uint32_t> constants;
  std::array<uint32_t, 3> count = {1, 1, 1};

  template <typename T>
  void Bind(std::vector<T>& buffer) {
    bindings.push_back(buffer.data());
    lengths.push_back(buffer.size() * sizeof(T));
  }

  strata_cpu_dispatch_v0_t Workgroup(uint32_t x, uint32_t y, uint32_t z) const {
    return {{x, y, z},
            {count[0], count[1], count[2]},
            static_cast<uint32_t>(bindings.size()),
            static_cast<uint32_t>(constants.size()),
            bindings.data(),
            lengths.data(),
            constants.data(),
            nullptr,
            0};
  }

  // Runs every workgroup in order; the first non-zero return, or 0.
  int Run(strata_cpu_kernel_fn_t kernel) const {
    for (uint32_t z = 0; z < count[2]; ++z) {
      for (uint32_t y = 0; y < count[1]; ++y) {
        for (uint32_t x = 0; x < count[0]; ++x) {
          const strata_cpu_dispatch_v0_t workgroup = Workgroup(x, y, z);
          if (int code = kernel(&workgroup)) return code;
        }
      }
    }
    return 0;
  }
};

// Distance in representable floats; 0 when equal.
int64_t UlpDistance(float a, float b) {
  // Map the sign-magnitude bit patterns onto a line ordered like the floats.
  auto ordered = [](float f) {
    const int32_t bits = std::bit_cast<int32_t>(f);
    return bits < 0 ? int64_t{INT32_MIN} - bits : int64_t{bits};
  };
  return std::abs(ordered(a) - ordered(b));
}

// The permissions ("r-xp") of the mapping holding `address`, from
// /proc/self/maps; empty if none does.
std::string MappingPermissions(const void* address) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto target = reinterpret_cast<uintptr_t>(address);
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::string permissions;
    fields >> std::hex >> begin >> dash >> end >> permissions;
    if (begin <= target && target < end) return permissions;
  }
  return "";
}

TEST_CASE("every test kernel loads and exports exactly its entry point") {
  for (const testing::TestKernel& kernel : TestKernels()) {
    CAPTURE(kernel.name);
    auto library = LoadKernel(kernel.name);
    CHECK(library->Lookup(kernel.name) != nullptr);
    CHECK(library->Lookup("no_such_symbol") == nullptr);
    CHECK(library->Lookup("") == nullptr);
    // Imports are not exports.
    CHECK(library->Lookup("expf") == nullptr);
  }
}

TEST_CASE("the runtime offers the math and memory functions kernels import") {
  std::span<const ImportSymbol> imports = RuntimeImports();
  for (const char* name : {"expf", "logf", "tanhf", "sqrtf", "powf", "erff", "sinf", "cosf", "fmaf",
                           "exp", "log", "tanh", "memcpy", "memset"}) {
    CAPTURE(name);
    auto it = std::find_if(imports.begin(), imports.end(),
                           [&](const ImportSymbol& import) { return std::strcmp(import.name, name) == 0; });
    REQUIRE(it != imports.end());
    CHECK(it->address != nullptr);
  }
  for (size_t i = 0; i < imports.size(); ++i) {
    for (size_t j = i + 1; j < imports.size(); ++j) CHECK(std::strcmp(imports[i].name, imports[j].name) != 0);
  }
}

TEST_CASE("segments are sealed with their own protections, never writable and executable") {
  auto library = LoadKernel("select_op");
  CHECK(MappingPermissions(library->Lookup("select_op")) == "r-xp");
  CHECK(MappingPermissions(library->Lookup("strata_test_offset")) == "rw-p");
}

TEST_CASE("memory past a segment's file bytes is zero") {
  auto library = LoadKernel("select_op");
  const auto* zeroed = static_cast<const uint32_t*>(library->Lookup("strata_test_zeroed"));
  REQUIRE(zeroed != nullptr);
  CHECK(MappingPermissions(zeroed) == "rw-p");
  CHECK(std::all_of(zeroed, zeroed + 1024, [](uint32_t word) { return word == 0; }));
}

TEST_CASE("add_f32 adds over every workgroup's slice") {
  auto library = LoadKernel("add_f32");
  strata_cpu_kernel_fn_t add = EntryPoint(*library, "add_f32");
  constexpr size_t kCount = 1000;
  constexpr uint32_t kWorkgroupSize = 64;
  std::vector<float> a(kCount), b(kCount), c(kCount, -1.0f);
  for (size_t i = 0; i < kCount; ++i) {
    a[i] = 0.25f * static_cast<float>(i);
    b[i] = 1000.0f - 3.0f * static_cast<float>(i);
  }
  Dispatch dispatch;
  dispatch.Bind(a);
  dispatch.Bind(b);
  dispatch.Bind(c);
  dispatch.constants = {kWorkgroupSize};
  dispatch.count[0] = (kCount + kWorkgroupSize - 1) / kWorkgroupSize;
  REQUIRE(dispatch.Run(add) == 0);
  for (size_t i = 0; i < kCount; ++i) {
    CAPTURE(i);
    REQUIRE(c[i] == a[i] + b[i]);
  }

  // The kernel checks its own contract.
  dispatch.constants.clear();
  CHECK(dispatch.Run(add) == 1);
}

TEST_CASE("fill_pattern: every workgroup of a 3-D dispatch runs exactly once, across threads") {
  auto library = LoadKernel("fill_pattern");
  strata_cpu_kernel_fn_t fill = EntryPoint(*library, "fill_pattern");
  Dispatch dispatch;
  dispatch.count = {5, 4, 3};
  const uint32_t total = dispatch.count[0] * dispatch.count[1] * dispatch.count[2];
  std::vector<uint32_t> grid(4 * total, 0);
  dispatch.Bind(grid);

  // Loaded code is plain memory once Load returns: several threads may run
  // its workgroups at once, as the task driver will.
  std::atomic<uint32_t> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (uint32_t i = next++; i < total; i = next++) {
        const uint32_t x = i % dispatch.count[0];
        const uint32_t y = (i / dispatch.count[0]) % dispatch.count[1];
        const uint32_t z = i / (dispatch.count[0] * dispatch.count[1]);
        const strata_cpu_dispatch_v0_t workgroup = dispatch.Workgroup(x, y, z);
        if (fill(&workgroup) != 0) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures == 0);
  for (uint32_t z = 0; z < 3; ++z) {
    for (uint32_t y = 0; y < 4; ++y) {
      for (uint32_t x = 0; x < 5; ++x) {
        const uint32_t* cell = &grid[4 * ((z * 4 + y) * 5 + x)];
        CAPTURE(x);
        CAPTURE(y);
        CAPTURE(z);
        CHECK(cell[0] == x);
        CHECK(cell[1] == y);
        CHECK(cell[2] == z);
        CHECK(cell[3] == 1);
      }
    }
  }

  // A grid too small for the dispatch is the kernel's error, not a crash.
  std::vector<uint32_t> small(4);
  Dispatch too_small = dispatch;
  too_small.bindings = {};
  too_small.lengths = {};
  too_small.Bind(small);
  CHECK(too_small.Run(fill) == 2);
}

TEST_CASE("scale_exp calls the runtime's expf through its import") {
  auto library = LoadKernel("scale_exp");
  strata_cpu_kernel_fn_t scale_exp = EntryPoint(*library, "scale_exp");
  constexpr float kScale = 2.5f;
  std::vector<float> in, out;
  for (float x = -20.0f; x <= 20.0f; x += 0.125f) in.push_back(x);
  out.assign(in.size(), 0.0f);
  Dispatch dispatch;
  dispatch.Bind(in);
  dispatch.Bind(out);
  dispatch.constants = {std::bit_cast<uint32_t>(kScale), 32};
  dispatch.count[0] = static_cast<uint32_t>((in.size() + 31) / 32);
  REQUIRE(dispatch.Run(scale_exp) == 0);
  for (size_t i = 0; i < in.size(); ++i) {
    const float expected = static_cast<float>(double{kScale} * std::exp(double{in[i]}));
    CAPTURE(in[i]);
    CAPTURE(out[i]);
    CAPTURE(expected);
    // One rounding in expf, one in the multiply.
    CHECK(UlpDistance(out[i], expected) <= 2);
  }
}

float FakeExp(float) { return 3.0f; }

TEST_CASE("imports resolve against the table passed to Load") {
  const ImportSymbol imports[] = {{"expf", reinterpret_cast<void*>(&FakeExp)}};
  auto library = LoadKernel("scale_exp", imports);
  std::vector<float> in = {0.0f, 1.0f, 2.0f}, out(3);
  Dispatch dispatch;
  dispatch.Bind(in);
  dispatch.Bind(out);
  dispatch.constants = {std::bit_cast<uint32_t>(2.0f), 3};
  REQUIRE(dispatch.Run(EntryPoint(*library, "scale_exp")) == 0);
  CHECK(out == std::vector<float>{6.0f, 6.0f, 6.0f});
}

TEST_CASE("a missing import fails the load and names the symbol") {
  SUBCASE("no imports at all") {
    auto library = ElfLibrary::Load(HostKernelElf("scale_exp"), {});
    REQUIRE_FALSE(library.ok());
    CHECK(library.status().code() == StatusCode::kNotFound);
    CHECK(library.status().message().find("unresolved import 'expf'") != std::string::npos);
  }
  SUBCASE("one of two imports") {
    const ImportSymbol imports[] = {{"sqrtf", reinterpret_cast<void*>(&FakeExp)}};
    auto library = ElfLibrary::Load(HostKernelElf("select_op"), imports);
    REQUIRE_FALSE(library.ok());
    CHECK(library.status().code() == StatusCode::kNotFound);
    CHECK(library.status().message().find("'tanhf'") != std::string::npos);
  }
}

TEST_CASE("select_op: relocated pointer tables, GOT entries and exported data") {
  auto library = LoadKernel("select_op");
  strata_cpu_kernel_fn_t select = EntryPoint(*library, "select_op");
  const auto* offset = static_cast<const float*>(library->Lookup("strata_test_offset"));
  REQUIRE(offset != nullptr);
  CHECK(*offset == 0.5f);

  std::vector<float> in = {0.0f, 0.25f, 1.0f, 2.0f, 9.0f, 100.0f}, out(in.size());
  Dispatch dispatch;
  dispatch.Bind(in);
  dispatch.Bind(out);
  auto run = [&](uint32_t op) {
    dispatch.constants = {op};
    return dispatch.Run(select);
  };
  REQUIRE(run(0) == 0);  // a local function through a RELATIVE pointer
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == -in[i]);
  REQUIRE(run(1) == 0);  // plus a global read through a GLOB_DAT entry
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == in[i] + 0.5f);
  REQUIRE(run(2) == 0);  // an import through an absolute (64/ABS64) pointer
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == std::sqrt(in[i]));
  REQUIRE(run(3) == 0);
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == ::tanhf(in[i]));
  REQUIRE(run(4) == 0);  // an import called through the PLT (JUMP_SLOT)
  for (size_t i = 0; i < in.size(); ++i) CHECK(out[i] == 2.0f * std::sqrt(in[i]));
  CHECK(run(5) == 3);
}

TEST_CASE("fail_if returns the code its constant asks for") {
  auto library = LoadKernel("fail_if");
  strata_cpu_kernel_fn_t fail_if = EntryPoint(*library, "fail_if");
  Dispatch dispatch;
  dispatch.constants = {0};
  CHECK(dispatch.Run(fail_if) == 0);
  dispatch.constants = {7};
  CHECK(dispatch.Run(fail_if) == 7);
  dispatch.constants = {};
  CHECK(dispatch.Run(fail_if) == -1);
}

// A mutable copy of a host kernel with typed access to its headers, for
// making damaged files.
class ElfEditor {
 public:
  explicit ElfEditor(std::string_view name) {
    std::span<const uint8_t> elf = HostKernelElf(name);
    REQUIRE(!elf.empty());
    bytes_.assign(elf.begin(), elf.end());
  }

  std::span<const uint8_t> bytes() const { return bytes_; }
  uint8_t& operator[](size_t offset) { return bytes_.at(offset); }

  template <typename T>
  T Get(uint64_t offset) const {
    REQUIRE(offset + sizeof(T) <= bytes_.size());
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  template <typename T>
  void Set(uint64_t offset, const T& value) {
    REQUIRE(offset + sizeof(T) <= bytes_.size());
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
  }

  Elf64_Ehdr Header() const { return Get<Elf64_Ehdr>(0); }
  void SetHeader(const Elf64_Ehdr& header) { Set(0, header); }

  // The file offset of the `nth` program header of `type`.
  uint64_t ProgramHeader(uint32_t type, int nth = 0) const {
    const Elf64_Ehdr header = Header();
    for (unsigned i = 0; i < header.e_phnum; ++i) {
      const uint64_t offset = header.e_phoff + i * sizeof(Elf64_Phdr);
      if (Get<Elf64_Phdr>(offset).p_type == type && nth-- == 0) return offset;
    }
    FAIL("no program header of type ", type);
    return 0;
  }

  // The file offset holding `vaddr`.
  uint64_t FileOffset(uint64_t vaddr) const {
    for (int i = 0;; ++i) {
      const auto load = Get<Elf64_Phdr>(ProgramHeader(PT_LOAD, i));
      if (load.p_vaddr <= vaddr && vaddr < load.p_vaddr + load.p_filesz) {
        return load.p_offset + (vaddr - load.p_vaddr);
      }
    }
  }

  // The file offset of the dynamic entry `tag`.
  uint64_t DynamicEntry(int64_t tag) const {
    const auto dynamic = Get<Elf64_Phdr>(ProgramHeader(PT_DYNAMIC));
    for (uint64_t offset = dynamic.p_offset; offset < dynamic.p_offset + dynamic.p_filesz;
         offset += sizeof(Elf64_Dyn)) {
      if (Get<Elf64_Dyn>(offset).d_tag == tag) return offset;
    }
    FAIL("no dynamic entry ", tag);
    return 0;
  }

  // The file offset of relocation `index` of the table DT_RELA or DT_JMPREL.
  uint64_t Relocation(int64_t table_tag, uint64_t index) const {
    const uint64_t table = Get<Elf64_Dyn>(DynamicEntry(table_tag)).d_un.d_ptr;
    return FileOffset(table) + index * sizeof(Elf64_Rela);
  }

 private:
  std::vector<uint8_t> bytes_;
};

void ExpectRejected(std::span<const uint8_t> elf, StatusCode code,
                    std::initializer_list<const char*> fragments) {
  auto library = ElfLibrary::Load(elf, RuntimeImports());
  INFO("status: ", library.status().ToString());
  REQUIRE_FALSE(library.ok());
  CHECK(library.status().code() == code);
  for (const char* fragment : fragments) {
    CAPTURE(fragment);
    CHECK(library.status().message().find(fragment) != std::string::npos);
  }
}

TEST_CASE("every truncation of every kernel is rejected as data loss") {
  for (const testing::TestKernel& kernel : TestKernels()) {
    std::span<const uint8_t> elf = HostKernelElf(kernel.name);
    for (size_t length = 0; length < elf.size(); ++length) {
      auto library = ElfLibrary::Load(elf.first(length), RuntimeImports());
      if (library.ok() || library.status().code() != StatusCode::kDataLoss) {
        FAIL_CHECK(kernel.name, " cut to ", length, " of ", elf.size(), " bytes: ",
                   library.ok() ? "loaded" : library.status().ToString());
      }
    }
  }
  ExpectRejected(HostKernelElf("add_f32").first(10), StatusCode::kDataLoss,
                 {"expected at least 64 bytes, got 10"});
}

TEST_CASE("damaged headers are rejected, each with its own message") {
  SUBCASE("wrong magic") {
    ElfEditor elf("add_f32");
    elf[1] = 'X';
    ExpectRejected(elf.bytes(), StatusCode::kInvalidArgument, {"not an ELF file", "0x7f 0x58 0x4c 0x46"});
  }
  SUBCASE("32-bit class") {
    ElfEditor elf("add_f32");
    elf[EI_CLASS] = ELFCLASS32;
    ExpectRejected(elf.bytes(), StatusCode::kIncompatible, {"expected class ELFCLASS64", "ELFCLASS32"});
  }
  SUBCASE("big-endian") {
    ElfEditor elf("add_f32");
    elf[EI_DATA] = ELFDATA2MSB;
    ExpectRejected(elf.bytes(), StatusCode::kIncompatible, {"ELFDATA2LSB", "ELFDATA2MSB"});
  }
  SUBCASE("a program, not a shared object") {
    ElfEditor elf("add_f32");
    Elf64_Ehdr header = elf.Header();
    header.e_type = ET_EXEC;
    elf.SetHeader(header);
    ExpectRejected(elf.bytes(), StatusCode::kIncompatible, {"expected type ET_DYN", "got ET_EXEC"});
  }
  SUBCASE("the other architecture") {
    const bool host_is_x86 = HostKernelArch() == KernelArch::kX86_64;
    ExpectRejected(TestKernelElf("add_f32", host_is_x86 ? KernelArch::kAarch64 : KernelArch::kX86_64),
                   StatusCode::kIncompatible,
                   {host_is_x86 ? "built for EM_AARCH64" : "built for EM_X86_64",
                    host_is_x86 ? "this runtime runs EM_X86_64" : "this runtime runs EM_AARCH64"});
  }
  SUBCASE("program headers past the end") {
    ElfEditor elf("add_f32");
    Elf64_Ehdr header = elf.Header();
    header.e_phoff = elf.bytes().size() - 8;
    elf.SetHeader(header);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss, {"program headers at offset", "past the end"});
  }
}

TEST_CASE("damaged segments are rejected, each with its own message") {
  ElfEditor elf("select_op");
  const uint64_t first_load = elf.ProgramHeader(PT_LOAD, 0);
  const uint64_t code_load = elf.ProgramHeader(PT_LOAD, 1);
  auto load = [&](uint64_t offset) { return elf.Get<Elf64_Phdr>(offset); };

  SUBCASE("segment offset past the end of the file") {
    Elf64_Phdr ph = load(first_load);
    ph.p_offset = elf.bytes().size();
    elf.Set(first_load, ph);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss, {"PT_LOAD segment 0", "past the end of the"});
  }
  SUBCASE("huge p_memsz") {
    Elf64_Phdr ph = load(code_load);
    ph.p_memsz = uint64_t{1} << 40;
    elf.Set(code_load, ph);
    ExpectRejected(elf.bytes(), StatusCode::kResourceExhausted,
                   {"PT_LOAD segment 1", "p_memsz 1099511627776"});
  }
  SUBCASE("more file bytes than memory") {
    Elf64_Phdr ph = load(code_load);
    ph.p_memsz = ph.p_filesz - 1;
    elf.Set(code_load, ph);
    ExpectRejected(elf.bytes(), StatusCode::kInvalidArgument, {"p_filesz", "is larger than p_memsz"});
  }
  SUBCASE("writable and executable") {
    Elf64_Phdr ph = load(code_load);
    ph.p_flags = PF_R | PF_W | PF_X;
    elf.Set(code_load, ph);
    ExpectRejected(elf.bytes(), StatusCode::kInvalidArgument, {"both writable and executable"});
  }
  SUBCASE("overlapping segments") {
    Elf64_Phdr ph = load(code_load);
    ph.p_vaddr = load(first_load).p_vaddr;
    elf.Set(code_load, ph);
    ExpectRejected(elf.bytes(), StatusCode::kInvalidArgument, {"overlaps or precedes"});
  }
  SUBCASE("no dynamic section") {
    const uint64_t dynamic = elf.ProgramHeader(PT_DYNAMIC);
    Elf64_Phdr ph = load(dynamic);
    ph.p_type = PT_NULL;
    elf.Set(dynamic, ph);
    ExpectRejected(elf.bytes(), StatusCode::kInvalidArgument, {"no PT_DYNAMIC"});
  }
  SUBCASE("thread-local storage") {
    const uint64_t dynamic = elf.ProgramHeader(PT_DYNAMIC);
    Elf64_Phdr ph = load(dynamic);
    ph.p_type = PT_TLS;
    elf.Set(dynamic, ph);
    ExpectRejected(elf.bytes(), StatusCode::kUnimplemented, {"PT_TLS"});
  }
}

TEST_CASE("damaged dynamic sections, symbols and relocations are rejected, each with its own message") {
  SUBCASE("relocation offset outside the image") {
    ElfEditor elf("select_op");
    const uint64_t offset = elf.Relocation(DT_RELA, 0);
    Elf64_Rela rela = elf.Get<Elf64_Rela>(offset);
    rela.r_offset = uint64_t{1} << 40;
    elf.Set(offset, rela);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss,
                   {"DT_RELA relocation 0: offset 0x10000000000 is outside the image"});
  }
  SUBCASE("PLT relocation offset outside the image") {
    ElfEditor elf("scale_exp");
    const uint64_t offset = elf.Relocation(DT_JMPREL, 0);
    Elf64_Rela rela = elf.Get<Elf64_Rela>(offset);
    rela.r_offset = ~uint64_t{0} - 3;  // wraps around when 8 bytes are added
    elf.Set(offset, rela);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss,
                   {"DT_JMPREL relocation 0: offset", "outside the image"});
  }
  SUBCASE("unsupported relocation type") {
    ElfEditor elf("select_op");
    const uint64_t offset = elf.Relocation(DT_RELA, 0);
    Elf64_Rela rela = elf.Get<Elf64_Rela>(offset);
    // IRELATIVE: an ifunc resolver would have to run at load time.
    const uint32_t irelative =
        HostKernelArch() == KernelArch::kX86_64 ? R_X86_64_IRELATIVE : R_AARCH64_IRELATIVE;
    rela.r_info = ELF64_R_INFO(ELF64_R_SYM(rela.r_info), irelative);
    elf.Set(offset, rela);
    ExpectRejected(elf.bytes(), StatusCode::kUnimplemented,
                   {"DT_RELA relocation 0: unsupported relocation type", std::to_string(irelative).c_str()});
  }
  SUBCASE("symbol index past the symbol table") {
    ElfEditor elf("scale_exp");
    const uint64_t offset = elf.Relocation(DT_JMPREL, 0);
    Elf64_Rela rela = elf.Get<Elf64_Rela>(offset);
    rela.r_info = ELF64_R_INFO(100000, ELF64_R_TYPE(rela.r_info));
    elf.Set(offset, rela);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss, {"symbol index 100000 is past the end"});
  }
  SUBCASE("symbol name outside the string table") {
    ElfEditor elf("scale_exp");
    const Elf64_Rela rela = elf.Get<Elf64_Rela>(elf.Relocation(DT_JMPREL, 0));
    const uint64_t symtab = elf.FileOffset(elf.Get<Elf64_Dyn>(elf.DynamicEntry(DT_SYMTAB)).d_un.d_ptr);
    const uint64_t offset = symtab + ELF64_R_SYM(rela.r_info) * sizeof(Elf64_Sym);
    Elf64_Sym symbol = elf.Get<Elf64_Sym>(offset);
    symbol.st_name = 1 << 20;
    elf.Set(offset, symbol);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss, {"name offset 1048576"});
  }
  SUBCASE("string table outside the image") {
    ElfEditor elf("add_f32");
    const uint64_t offset = elf.DynamicEntry(DT_STRTAB);
    Elf64_Dyn entry = elf.Get<Elf64_Dyn>(offset);
    entry.d_un.d_ptr = uint64_t{1} << 36;
    elf.Set(offset, entry);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss, {"DT_STRTAB", "outside the image"});
  }
  SUBCASE("GNU hash table outside the image") {
    ElfEditor elf("add_f32");
    const uint64_t offset = elf.DynamicEntry(DT_GNU_HASH);
    Elf64_Dyn entry = elf.Get<Elf64_Dyn>(offset);
    entry.d_un.d_ptr = ~uint64_t{0} - 7;
    elf.Set(offset, entry);
    ExpectRejected(elf.bytes(), StatusCode::kDataLoss, {"DT_GNU_HASH", "outside the image"});
  }
  SUBCASE("SysV hash table claiming too many symbols") {
    ElfEditor elf("fill_pattern");
    const uint64_t hash = elf.FileOffset(elf.Get<Elf64_Dyn>(elf.DynamicEntry(DT_HASH)).d_un.d_ptr);
    elf.Set<uint32_t>(hash + 4, 0xffffffff);  // nchain: the symbol count
    ExpectRejected(elf.bytes(), StatusCode::kInvalidArgument, {"4294967295 symbols"});
  }
  SUBCASE("REL instead of RELA relocations") {
    ElfEditor elf("select_op");
    const uint64_t offset = elf.DynamicEntry(DT_RELA);
    Elf64_Dyn entry = elf.Get<Elf64_Dyn>(offset);
    entry.d_tag = DT_REL;
    elf.Set(offset, entry);
    ExpectRejected(elf.bytes(), StatusCode::kUnimplemented, {"DT_REL relocations are not supported"});
  }
}

// Random byte damage anywhere in the file: the loader may accept what still
// makes sense (a changed instruction is still a valid file) but must never
// crash, leak or read outside the input. Run under ASan to make that strict.
TEST_CASE("random damage never crashes the loader") {
  uint64_t state = 0x9e3779b97f4a7c15;
  auto next = [&state] {  // xorshift64: deterministic across runs
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int loaded = 0, rejected = 0;
  for (const testing::TestKernel& kernel : TestKernels()) {
    std::span<const uint8_t> original = HostKernelElf(kernel.name);
    for (int round = 0; round < 1000; ++round) {
      std::vector<uint8_t> elf(original.begin(), original.end());
      // Most damage goes to the first kilobyte, where headers, the dynamic
      // section, symbols and relocations live.
      const int flips = 1 + static_cast<int>(next() % 4);
      for (int f = 0; f < flips; ++f) {
        const uint64_t span = (next() % 4 == 0) ? elf.size() : std::min<size_t>(elf.size(), 1024);
        elf[next() % span] ^= static_cast<uint8_t>(1 + next() % 255);
      }
      auto library = ElfLibrary::Load(elf, RuntimeImports());
      if (library.ok()) {
        ++loaded;
        library.value()->Lookup(kernel.name);
      } else {
        ++rejected;
        CHECK_FALSE(library.status().message().empty());
      }
    }
  }
  MESSAGE("random damage: ", loaded, " loaded, ", rejected, " rejected");
  CHECK(rejected > 0);
}

}  // namespace
}  // namespace strata::cpu
