// Runs the kernels of aarch64_kernels.mlir, compiled for aarch64, through the
// runtime's ELF loader and the kernel ABI, under qemu-aarch64 (see
// CMakeLists.txt: e2e.cpu_codegen_aarch64). Each kernel is dispatched with
// the workgroup count its metadata asks for and with a single workgroup
// (which must loop over every tile), and compared with a C++ computation:
// 1e-5 relative per accumulated term, as in cpu_codegen_test.cc.
//
//   aarch64_runner KERNELS.so     exit status 0 when every result matches
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "drivers/cpu/elf_loader.h"
#include "drivers/cpu/kernel_abi.h"

namespace {

int failures = 0;

void Check(bool ok, const char* what, size_t index) {
  if (!ok && failures++ < 10) std::fprintf(stderr, "%s: element %zu differs\n", what, index);
}

// Runs workgroups 0..count-1 of `name`; returns the first non-zero result.
int Dispatch(const strata::cpu::ElfLibrary& library, const char* name,
             std::vector<void*> bindings, std::vector<uint64_t> lengths,
             std::vector<uint32_t> constants, uint32_t count) {
  auto kernel = reinterpret_cast<strata_cpu_kernel_fn_t>(library.Lookup(name));
  if (!kernel) {
    std::fprintf(stderr, "no entry point %s\n", name);
    return -1;
  }
  strata_cpu_dispatch_v0_t dispatch = {};
  dispatch.workgroup_count[0] = count;
  dispatch.workgroup_count[1] = dispatch.workgroup_count[2] = 1;
  dispatch.binding_count = uint32_t(bindings.size());
  dispatch.constant_count = uint32_t(constants.size());
  dispatch.bindings = bindings.data();
  dispatch.binding_lengths = lengths.data();
  dispatch.constants = constants.data();
  // Local memory as the runtime gives it: more than any of these kernels
  // declares (a kernel that wants more returns 3).
  static std::vector<uint64_t> local(1 << 17);
  dispatch.local_memory = local.data();
  dispatch.local_memory_size = local.size() * sizeof(uint64_t);
  for (uint32_t x = 0; x < count; ++x) {
    dispatch.workgroup_id[0] = x;
    if (int result = kernel(&dispatch)) return result;
  }
  return 0;
}

void Matmul(const strata::cpu::ElfLibrary& library, uint32_t count) {
  const int m = 7, n = 13, k = 5;
  std::vector<float> a(m * k), b(k * n), c(m * n, 42.0f);
  for (int i = 0; i < m * k; ++i) a[i] = std::sin(float(i));
  for (int i = 0; i < k * n; ++i) b[i] = std::cos(float(i));
  Check(Dispatch(library, "matmul", {a.data(), b.data(), c.data()},
                 {a.size() * 4, b.size() * 4, c.size() * 4}, {}, count) == 0,
        "matmul dispatch", 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int p = 0; p < k; ++p) want += double(a[i * k + p]) * b[p * n + j];
      Check(std::fabs(c[i * n + j] - want) <= 1e-5 * k * (1 + std::fabs(want)), "matmul",
            i * n + j);
    }
}

void Exp(const strata::cpu::ElfLibrary& library, uint32_t count) {
  const int n = 1000;
  std::vector<float> in(n), out(n, 0.0f);
  for (int i = 0; i < n; ++i) in[i] = 5 * std::sin(float(i));
  Check(Dispatch(library, "exp", {in.data(), out.data()}, {n * 4, n * 4}, {}, count) == 0,
        "exp dispatch", 0);
  for (int i = 0; i < n; ++i) {
    double want = std::exp(double(in[i]));
    Check(std::fabs(out[i] - want) <= 1e-6 * (1 + want), "exp", i);
  }
}

void Scale(const strata::cpu::ElfLibrary& library, uint32_t count) {
  const uint32_t n = 1000;
  std::vector<float> in(n), out(n, 0.0f);
  for (uint32_t i = 0; i < n; ++i) in[i] = float(i);
  float half = 0.5f;
  uint32_t bits;
  std::memcpy(&bits, &half, sizeof(bits));
  // Constants: the scalar, then the dynamic sizes of both memrefs.
  Check(Dispatch(library, "scale", {in.data(), out.data()}, {n * 4, n * 4}, {bits, n, n},
                 count) == 0,
        "scale dispatch", 0);
  for (uint32_t i = 0; i < n; ++i) Check(out[i] == in[i] * 0.5f, "scale", i);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: aarch64_runner KERNELS.so\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<uint8_t> elf((std::istreambuf_iterator<char>(file)), {});
  auto library = strata::cpu::ElfLibrary::Load(elf, strata::cpu::RuntimeImports());
  if (!library.ok()) {
    std::fprintf(stderr, "%s\n", library.status().ToString().c_str());
    return 1;
  }
  // The counts strata-codegen-cpu reports with workgroup-iterations=16
  // (matmul: 7 rows in one tile; exp: 63 tiles of 16), then one workgroup.
  Matmul(**library, 1);
  Exp(**library, 63);
  Exp(**library, 1);
  Scale(**library, (1000 + 15) / 16);
  Scale(**library, 1);
  std::printf("aarch64: %s\n", failures ? "FAILED" : "all results match");
  return failures ? 1 : 0;
}
