// End-to-end test of the CPU code generator: kernels written in upstream MLIR
// are compiled at test time (compileCPUExecutable: pipeline, LLVM, ld.lld),
// the ELF is loaded from memory by the runtime's loader, every workgroup is
// run through the kernel ABI on real buffers, and the results are compared
// with a plain C++ computation of the same thing.
//
// Tolerances: elementwise kernels must match to 1e-6 relative (the same
// float operation, or libm's expf on both sides); reductions and matmuls to
// 1e-5 relative per accumulated term, since tiling, vector reassociation and
// FMA change the rounding order.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <elf.h>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/codegen/cpu/CPUExecutable.h"
#include "compiler/codegen/cpu/Pipeline.h"
#include "compiler/codegen/cpu/RuntimeImports.h"
#include "drivers/cpu/elf_loader.h"
#include "drivers/cpu/kernel_abi.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "strata/schemas/cpu_executable_generated.h"

namespace {

using strata::cpu::CPUExecutable;
using strata::cpu::ElfLibrary;
using strata::cpu::EntryPointInfo;

// The result of compiling a module: the executable, or the diagnostics.
struct Compiled {
  std::optional<CPUExecutable> executable;
  std::string diagnostics;
};

Compiled Compile(const std::string& source, const std::string& triple = "",
                 const std::string& codegenOptions = "") {
  mlir::DialectRegistry registry;
  strata::cpu::registerCPUCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  Compiled compiled;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
    llvm::raw_string_ostream os(compiled.diagnostics);
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module) return compiled;
  strata::cpu::CPUTargetOptions target;
  if (!triple.empty()) {
    target.triple = triple;
  } else {
#if defined(__aarch64__)
    target.triple = "aarch64-linux-gnu";
#else
    target.triple = "x86_64-linux-gnu";
#endif
    target.cpu = "host";
  }
  auto options =
      strata::cpu::CPUCodegenPipelineOptions::createFromString(codegenOptions);
  REQUIRE(options);
  mlir::FailureOr<CPUExecutable> executable =
      strata::cpu::compileCPUExecutable(*module, target, *options);
  if (mlir::succeeded(executable)) compiled.executable = std::move(*executable);
  return compiled;
}

// A compiled and loaded executable.
struct Loaded {
  CPUExecutable executable;
  std::unique_ptr<ElfLibrary> library;

  const EntryPointInfo& Entry(const std::string& name) const {
    for (const EntryPointInfo& entry : executable.entryPoints)
      if (entry.name == name) return entry;
    FAIL("no entry point " << name);
    return executable.entryPoints.front();
  }
};

Loaded CompileAndLoad(const std::string& source, const std::string& codegenOptions = "") {
  Compiled compiled = Compile(source, "", codegenOptions);
  INFO("diagnostics: " << compiled.diagnostics);
  REQUIRE(compiled.executable);
  Loaded loaded{std::move(*compiled.executable), nullptr};
  auto library = ElfLibrary::Load(loaded.executable.elf, strata::cpu::RuntimeImports());
  INFO(library.status().ToString());
  REQUIRE(library.ok());
  loaded.library = std::move(library.value());
  return loaded;
}

// Runs every workgroup of `count` through the kernel ABI, in order; returns
// the first non-zero kernel result.
int Dispatch(const Loaded& loaded, const std::string& name, std::vector<void*> bindings,
             std::vector<uint64_t> lengths, std::vector<uint32_t> constants,
             std::optional<std::array<uint32_t, 3>> count = std::nullopt) {
  const EntryPointInfo& entry = loaded.Entry(name);
  void* symbol = loaded.library->Lookup(name);
  REQUIRE(symbol != nullptr);
  auto kernel = reinterpret_cast<strata_cpu_kernel_fn_t>(symbol);
  std::array<uint32_t, 3> grid = {1, 1, 1};
  if (count) {
    grid = *count;
  } else if (entry.workgroupCount) {
    grid = *entry.workgroupCount;
  } else {
    REQUIRE(entry.workgroupCountConstant);
    uint32_t n = constants.at(*entry.workgroupCountConstant);
    grid[0] = std::max<uint32_t>(1, (n + entry.workgroupSize[0] - 1) / entry.workgroupSize[0]);
  }
  strata_cpu_dispatch_v0_t dispatch = {};
  dispatch.binding_count = uint32_t(bindings.size());
  dispatch.constant_count = uint32_t(constants.size());
  dispatch.bindings = bindings.data();
  dispatch.binding_lengths = lengths.data();
  dispatch.constants = constants.data();
  // The runtime's per-thread local memory, as the kernel declares it.
  std::vector<uint64_t> local(entry.localMemoryBytes / 8 + 1);
  dispatch.local_memory = local.data();
  dispatch.local_memory_size = entry.localMemoryBytes;
  for (int axis = 0; axis < 3; ++axis) dispatch.workgroup_count[axis] = grid[axis];
  for (uint32_t z = 0; z < grid[2]; ++z)
    for (uint32_t y = 0; y < grid[1]; ++y)
      for (uint32_t x = 0; x < grid[0]; ++x) {
        dispatch.workgroup_id[0] = x;
        dispatch.workgroup_id[1] = y;
        dispatch.workgroup_id[2] = z;
        if (int result = kernel(&dispatch)) return result;
      }
  return 0;
}

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(engine);
  return values;
}

template <typename T>
uint64_t Bytes(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

// Checks got[i] against want[i] within tolerance * (1 + |want[i]|).
void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, double tolerance) {
  REQUIRE(got.size() == want.size());
  size_t failures = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double error = std::fabs(double(got[i]) - want[i]);
    if (!(error <= tolerance * (1 + std::fabs(want[i]))) && failures++ < 5)
      FAIL_CHECK("element " << i << ": got " << got[i] << ", want " << want[i]);
  }
  CHECK(failures == 0);
}

std::string ElementwiseAdd(const std::string& shape, int rank) {
  std::string dims = "d0";
  for (int i = 1; i < rank; ++i) dims += ", d" + std::to_string(i);
  std::string iterators = "\"parallel\"";
  for (int i = 1; i < rank; ++i) iterators += ", \"parallel\"";
  std::string type = "memref<" + shape + "xf32>";
  return "#map = affine_map<(" + dims + ") -> (" + dims + ")>\n"
         "func.func @add(%a: " + type + ", %b: " + type + ", %c: " + type + ") {\n"
         "  linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = [" +
         iterators + "]}\n"
         "    ins(%a, %b : " + type + ", " + type + ") outs(%c : " + type + ") {\n"
         "  ^bb0(%x: f32, %y: f32, %o: f32):\n"
         "    %s = arith.addf %x, %y : f32\n"
         "    linalg.yield %s : f32\n"
         "  }\n"
         "  return\n"
         "}\n";
}

void CheckAdd(const std::string& shape, int rank, size_t n) {
  CAPTURE(shape);
  Loaded loaded = CompileAndLoad(ElementwiseAdd(shape, rank));
  std::vector<float> a = Random(n, 1), b = Random(n, 2), c(n, 0.0f);
  REQUIRE(Dispatch(loaded, "add", {a.data(), b.data(), c.data()}, {Bytes(a), Bytes(b), Bytes(c)},
                   {}) == 0);
  std::vector<double> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = double(a[i] + b[i]);
  ExpectNear(c, want, 1e-6);
}

TEST_CASE("elementwise add, 2-D and odd 1-D sizes") {
  CheckAdd("13x1000", 2, 13 * 1000);
  CheckAdd("1", 1, 1);
  CheckAdd("7", 1, 7);
  CheckAdd("13", 1, 13);
  CheckAdd("1000", 1, 1000);
  CheckAdd("1000x1000", 2, 1000 * 1000);
}


std::string Matmul(int m, int n, int k) {
  auto type = [](int rows, int cols) {
    return "memref<" + std::to_string(rows) + "x" + std::to_string(cols) + "xf32>";
  };
  std::string a = type(m, k), b = type(k, n), c = type(m, n);
  return "func.func @matmul(%a: " + a + ", %b: " + b + ", %c: " + c + ") {\n"
         "  %zero = arith.constant 0.0 : f32\n"
         "  linalg.fill ins(%zero : f32) outs(%c : " + c + ")\n"
         "  linalg.matmul ins(%a, %b : " + a + ", " + b + ") outs(%c : " + c + ")\n"
         "  return\n"
         "}\n";
}

void CheckMatmul(int m, int n, int k, const std::string& codegenOptions = "") {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  Loaded loaded = CompileAndLoad(Matmul(m, n, k), codegenOptions);
  std::vector<float> a = Random(size_t(m) * k, 3), b = Random(size_t(k) * n, 4);
  std::vector<float> c(size_t(m) * n, 42.0f);  // the kernel must overwrite it
  REQUIRE(Dispatch(loaded, "matmul", {a.data(), b.data(), c.data()},
                   {Bytes(a), Bytes(b), Bytes(c)}, {}) == 0);
  std::vector<double> want(size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p) want[size_t(i) * n + j] += double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
  ExpectNear(c, want, 1e-5 * k);
}

TEST_CASE("matmul: odd, square and tall shapes") {
  CheckMatmul(7, 13, 5);
  CheckMatmul(64, 64, 64);
  CheckMatmul(1, 1, 1);
  CheckMatmul(1000, 7, 13);
  CheckMatmul(33, 100, 17);
  // Without peeling, partial tiles run masked.
  CheckMatmul(7, 13, 5, "peel=false");
  CheckMatmul(64, 64, 64, "peel=false");
}

TEST_CASE("matmul: any workgroup count covers the iteration space") {
  Loaded loaded = CompileAndLoad(Matmul(64, 64, 64), "workgroup-iterations=4096");
  const EntryPointInfo& entry = loaded.Entry("matmul");
  REQUIRE(entry.workgroupCount);
  CHECK((*entry.workgroupCount)[0] > 1);
  CHECK(entry.workgroupSize[0] * (*entry.workgroupCount)[0] >= 64);
  std::vector<float> a = Random(64 * 64, 5), b = Random(64 * 64, 6);
  std::vector<double> want(64 * 64, 0.0);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j)
      for (int p = 0; p < 64; ++p) want[i * 64 + j] += double(a[i * 64 + p]) * b[p * 64 + j];
  for (std::array<uint32_t, 3> grid : {std::array<uint32_t, 3>{1, 1, 1}, {3, 1, 1}, {100, 1, 1},
                                       {2, 3, 2}}) {
    CAPTURE(grid[0]);
    CAPTURE(grid[1]);
    CAPTURE(grid[2]);
    std::vector<float> c(64 * 64, 42.0f);
    REQUIRE(Dispatch(loaded, "matmul", {a.data(), b.data(), c.data()},
                     {Bytes(a), Bytes(b), Bytes(c)}, {}, grid) == 0);
    ExpectNear(c, want, 1e-5 * 64);
  }
}

TEST_CASE("row sums: a reduction along the contiguous dimension") {
  const char* source = R"mlir(
    func.func @row_sum(%in: memref<13x1000xf32>, %out: memref<13xf32>) {
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%out : memref<13xf32>)
      linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                      iterator_types = ["parallel", "reduction"]}
          ins(%in : memref<13x1000xf32>) outs(%out : memref<13xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
      return
    })mlir";
  Loaded loaded = CompileAndLoad(source);
  std::vector<float> in = Random(13 * 1000, 7), out(13, 42.0f);
  REQUIRE(Dispatch(loaded, "row_sum", {in.data(), out.data()}, {Bytes(in), Bytes(out)}, {}) == 0);
  std::vector<double> want(13, 0.0);
  for (int i = 0; i < 13; ++i)
    for (int j = 0; j < 1000; ++j) want[i] += in[i * 1000 + j];
  ExpectNear(out, want, 1e-5 * 1000);
}

TEST_CASE("column sums and a full sum (one workgroup)") {
  const char* source = R"mlir(
    func.func @col_sum(%in: memref<7x1000xf32>, %out: memref<1000xf32>) {
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%out : memref<1000xf32>)
      linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                      iterator_types = ["reduction", "parallel"]}
          ins(%in : memref<7x1000xf32>) outs(%out : memref<1000xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
      return
    }
    func.func @total(%in: memref<1000xf32>, %out: memref<f32>) {
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%out : memref<f32>)
      linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                      iterator_types = ["reduction"]}
          ins(%in : memref<1000xf32>) outs(%out : memref<f32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
      return
    })mlir";
  Loaded loaded = CompileAndLoad(source);
  std::vector<float> in = Random(7 * 1000, 8), columns(1000, 42.0f);
  REQUIRE(Dispatch(loaded, "col_sum", {in.data(), columns.data()}, {Bytes(in), Bytes(columns)},
                   {}) == 0);
  std::vector<double> want(1000, 0.0);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 1000; ++j) want[j] += in[i * 1000 + j];
  ExpectNear(columns, want, 1e-5 * 7);

  const EntryPointInfo& total = loaded.Entry("total");
  CHECK(total.workgroupSize == std::array<uint32_t, 3>{1, 1, 1});
  std::vector<float> row(in.begin(), in.begin() + 1000), sum(1, 42.0f);
  // More workgroups than needed: all but the first return at once.
  REQUIRE(Dispatch(loaded, "total", {row.data(), sum.data()}, {Bytes(row), Bytes(sum)}, {},
                   std::array<uint32_t, 3>{4, 1, 1}) == 0);
  double expected = 0;
  for (float v : row) expected += v;
  ExpectNear(sum, {expected}, 1e-5 * 1000);
}

TEST_CASE("math.exp: a vector polynomial by default, the runtime's expf with approximate-math=none") {
  const char* source = R"mlir(
    func.func @exp(%in: memref<1000xf32>, %out: memref<1000xf32>) {
      linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                      iterator_types = ["parallel"]}
          ins(%in : memref<1000xf32>) outs(%out : memref<1000xf32>) {
      ^bb0(%x: f32, %o: f32):
        %e = math.exp %x : f32
        linalg.yield %e : f32
      }
      return
    })mlir";
  for (const char* options : {"", "approximate-math=none"}) {
    CAPTURE(options);
    Loaded loaded = CompileAndLoad(source, options);
    const std::vector<uint8_t>& elf = loaded.executable.elf;
    const bool callsExpf = std::search(elf.begin(), elf.end(), std::begin("expf"), std::end("expf")) != elf.end();
    CHECK(callsExpf == (std::string(options) != ""));
    std::vector<float> in = Random(1000, 9), out(1000, 0.0f);
    for (float& v : in) v *= 10;
    REQUIRE(Dispatch(loaded, "exp", {in.data(), out.data()}, {Bytes(in), Bytes(out)}, {}) == 0);
    std::vector<double> want(1000);
    for (int i = 0; i < 1000; ++i) want[i] = std::exp(double(in[i]));
    ExpectNear(out, want, 1e-6);
  }
}


uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

const char* kDynamic = R"mlir(
  func.func @scale_add(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %s: f32) {
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                     affine_map<(i, j) -> (i, j)>],
                    iterator_types = ["parallel", "parallel"]}
        ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %s : f32
      %r = arith.addf %m, %y : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<?x?xf32>)
    linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
    return
  })mlir";

TEST_CASE("dynamic shapes: sizes and scalars are push constants") {
  Loaded loaded = CompileAndLoad(kDynamic);
  // Push constants: the scalar first, then each dynamic dimension.
  const EntryPointInfo& scaleAdd = loaded.Entry("scale_add");
  CHECK(scaleAdd.bindingCount == 3);
  CHECK(scaleAdd.constantCount == 7);
  CHECK(scaleAdd.workgroupCountConstant == std::optional<uint32_t>(1));
  for (auto [rows, cols] : {std::pair{13, 1000}, {1, 1}, {7, 13}, {1000, 7}}) {
    CAPTURE(rows);
    CAPTURE(cols);
    size_t n = size_t(rows) * cols;
    std::vector<float> a = Random(n, 10), b = Random(n, 11), c(n, 0.0f);
    uint32_t r = rows, k = cols;
    REQUIRE(Dispatch(loaded, "scale_add", {a.data(), b.data(), c.data()},
                     {Bytes(a), Bytes(b), Bytes(c)}, {Bits(0.5f), r, k, r, k, r, k}) == 0);
    std::vector<double> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = double(a[i] * 0.5f + b[i]);
    ExpectNear(c, want, 1e-6);
  }

  const EntryPointInfo& matmul = loaded.Entry("matmul");
  CHECK(matmul.constantCount == 6);
  for (auto [m, n, k] : {std::tuple{7, 13, 5}, {64, 64, 64}, {1, 1, 1}, {100, 33, 17}}) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    std::vector<float> a = Random(size_t(m) * k, 12), b = Random(size_t(k) * n, 13);
    std::vector<float> c(size_t(m) * n, 42.0f);
    std::vector<uint32_t> dims = {uint32_t(m), uint32_t(k), uint32_t(k),
                                  uint32_t(n), uint32_t(m), uint32_t(n)};
    REQUIRE(Dispatch(loaded, "matmul", {a.data(), b.data(), c.data()},
                     {Bytes(a), Bytes(b), Bytes(c)}, dims) == 0);
    std::vector<double> want(size_t(m) * n, 0.0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p) want[size_t(i) * n + j] += double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
    ExpectNear(c, want, 1e-5 * k);
  }
}

TEST_CASE("the entry point checks the dispatch before touching memory") {
  Loaded loaded = CompileAndLoad(kDynamic);
  std::vector<float> a(16), b(16), c(16);
  // Too few bindings or constants: 1.
  CHECK(Dispatch(loaded, "scale_add", {a.data(), b.data()}, {Bytes(a), Bytes(b)},
                 {Bits(1.0f), 4, 4, 4, 4, 4, 4}) == 1);
  CHECK(Dispatch(loaded, "scale_add", {a.data(), b.data(), c.data()},
                 {Bytes(a), Bytes(b), Bytes(c)}, {Bits(1.0f), 4, 4}, std::array<uint32_t, 3>{1, 1, 1}) == 1);
  // Sizes that do not fit the bindings: 2, and nothing is written.
  std::fill(c.begin(), c.end(), 7.0f);
  CHECK(Dispatch(loaded, "scale_add", {a.data(), b.data(), c.data()},
                 {Bytes(a), Bytes(b), Bytes(c)}, {Bits(1.0f), 4, 4, 4, 4, 5, 4}) == 2);
  CHECK(c == std::vector<float>(16, 7.0f));
  // A product of sizes that overflows 64 bits does not wrap around to fit.
  CHECK(Dispatch(loaded, "scale_add", {a.data(), b.data(), c.data()},
                 {Bytes(a), Bytes(b), Bytes(c)},
                 {Bits(1.0f), 0xffffffffu, 0xffffffffu, 4, 4, 4, 4},
                 std::array<uint32_t, 3>{1, 1, 1}) == 2);
}

TEST_CASE("a slice at offsets from push constants is checked in the kernel") {
  // The host program checks the offset before it dispatches; the kernel
  // checks it again, so that an altered program cannot make it read outside
  // its buffer (a fuzzed module passed offset 2^30 for an 8-element one).
  const char* source = R"mlir(
    func.func @slice(%a: tensor<8xf32>, %off: index) -> tensor<4xf32> {
      %s = tensor.extract_slice %a[%off] [4] [1] : tensor<8xf32> to tensor<4xf32>
      return %s : tensor<4xf32>
    })mlir";
  Loaded loaded = CompileAndLoad(source);
  const EntryPointInfo& entry = loaded.Entry("slice");
  REQUIRE(entry.checkMessages.size() == 1);
  CHECK(entry.checkMessages[0].find("a slice of a kernel buffer reaches outside it") != std::string::npos);
  std::vector<float> a = {0, 1, 2, 3, 4, 5, 6, 7}, out(4, -1.0f);
  std::vector<uint32_t> constants(entry.constantCount, 0);
  REQUIRE(!constants.empty());
  auto run = [&](uint64_t offset) {
    constants[0] = uint32_t(offset);
    if (constants.size() > 1) constants[1] = uint32_t(offset >> 32);
    return Dispatch(loaded, "slice", {a.data(), out.data()}, {Bytes(a), Bytes(out)}, constants);
  };
  CHECK(run(4) == 0);
  CHECK(out == std::vector<float>{4, 5, 6, 7});
  std::fill(out.begin(), out.end(), -1.0f);
  for (uint64_t offset : {uint64_t{5}, uint64_t{8}, uint64_t{1} << 30, ~uint64_t{0}}) {
    CAPTURE(offset);
    CHECK(run(offset) == STRATA_CPU_KERNEL_CHECK_BASE);
  }
  CHECK(out == std::vector<float>(4, -1.0f));
}

TEST_CASE("tensor kernels: results become output bindings") {
  const char* source = R"mlir(
    func.func @dense_relu(%x: tensor<7x5xf32>, %w: tensor<5x13xf32>, %bias: tensor<13xf32>)
        -> tensor<7x13xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<7x13xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<7x13xf32>) -> tensor<7x13xf32>
      %mm = linalg.matmul ins(%x, %w : tensor<7x5xf32>, tensor<5x13xf32>)
                          outs(%f : tensor<7x13xf32>) -> tensor<7x13xf32>
      %e2 = tensor.empty() : tensor<7x13xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                            affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%mm, %bias : tensor<7x13xf32>, tensor<13xf32>) outs(%e2 : tensor<7x13xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        %m = arith.maximumf %s, %zero : f32
        linalg.yield %m : f32
      } -> tensor<7x13xf32>
      return %r : tensor<7x13xf32>
    })mlir";
  Loaded loaded = CompileAndLoad(source);
  const EntryPointInfo& entry = loaded.Entry("dense_relu");
  CHECK(entry.bindingCount == 4);
  CHECK(entry.bindingReadOnly == std::vector<bool>{true, true, true, false});
  std::vector<float> x = Random(7 * 5, 14), w = Random(5 * 13, 15), bias = Random(13, 16);
  std::vector<float> out(7 * 13, 42.0f);
  REQUIRE(Dispatch(loaded, "dense_relu", {x.data(), w.data(), bias.data(), out.data()},
                   {Bytes(x), Bytes(w), Bytes(bias), Bytes(out)}, {}) == 0);
  std::vector<double> want(7 * 13);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 13; ++j) {
      double sum = 0;
      for (int p = 0; p < 5; ++p) sum += double(x[i * 5 + p]) * w[p * 13 + j];
      want[i * 13 + j] = std::max(0.0, sum + bias[j]);
    }
  ExpectNear(out, want, 1e-5 * 5);
}

TEST_CASE("metadata FlatBuffer describes the entry points") {
  Loaded loaded = CompileAndLoad(kDynamic);
  const std::vector<uint8_t>& bytes = loaded.executable.metadata;
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  REQUIRE(strata::schema::cpu::VerifyCpuExecutableDefBuffer(verifier));
  REQUIRE(strata::schema::cpu::CpuExecutableDefBufferHasIdentifier(bytes.data()));
  auto* def = strata::schema::cpu::GetCpuExecutableDef(bytes.data());
  REQUIRE(def->entry_points());
  REQUIRE(def->entry_points()->size() == 2);
  for (const auto* entry : *def->entry_points()) {
    const EntryPointInfo& info = loaded.Entry(entry->name()->str());
    CHECK(entry->binding_count() == info.bindingCount);
    CHECK(entry->constant_count() == info.constantCount);
    REQUIRE(entry->binding_read_only());
    CHECK(entry->binding_read_only()->size() == info.bindingCount);
    REQUIRE(entry->workgroup_size());
    CHECK(entry->workgroup_size()->size() == 3);
    CHECK(entry->workgroup_size()->Get(0) == info.workgroupSize[0]);
  }
  CHECK(loaded.executable.format ==
#if defined(__aarch64__)
        "cpu-elf-aarch64"
#else
        "cpu-elf-x86_64"
#endif
  );
}

TEST_CASE("aarch64: an ELF shared object for the other architecture") {
  for (const std::string& source : {ElementwiseAdd("13x1000", 2), Matmul(7, 13, 5),
                                    std::string(kDynamic)}) {
    Compiled compiled = Compile(source, "aarch64-linux-gnu");
    INFO("diagnostics: " << compiled.diagnostics);
    REQUIRE(compiled.executable);
    const std::vector<uint8_t>& elf = compiled.executable->elf;
    CHECK(compiled.executable->format == "cpu-elf-aarch64");
    REQUIRE(elf.size() >= sizeof(Elf64_Ehdr));
    Elf64_Ehdr header;
    std::memcpy(&header, elf.data(), sizeof(header));
    CHECK(std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0);
    CHECK(header.e_ident[EI_CLASS] == ELFCLASS64);
    CHECK(header.e_type == ET_DYN);
    CHECK(header.e_machine == EM_AARCH64);
#if !defined(__aarch64__)
    // The loader refuses it here, naming the machine.
    auto library = ElfLibrary::Load(elf, strata::cpu::RuntimeImports());
    CHECK_FALSE(library.ok());
#endif
  }
}

TEST_CASE("the compiler's import list is the runtime's") {
  std::vector<std::string> runtime;
  for (const strata::cpu::ImportSymbol& symbol : strata::cpu::RuntimeImports())
    runtime.push_back(symbol.name);
  std::vector<std::string> compiler;
  for (llvm::StringRef name : strata::cpu::runtimeImportNames()) compiler.push_back(name.str());
  std::sort(runtime.begin(), runtime.end());
  std::sort(compiler.begin(), compiler.end());
  CHECK(runtime == compiler);
}

TEST_CASE("unsupported input is a diagnostic with its location, not a crash") {
  struct Case {
    const char* source;
    const char* message;
  };
  const Case cases[] = {
      {R"mlir(func.func @k(%a: memref<4xf32>) {
            %m = memref.alloc() : memref<4xf32>
            return
          })mlir",
       "loc(\"-\":2:18): 'memref.alloc' op allocates on the heap"},
      {R"mlir(func.func private @malloc(i64) -> !llvm.ptr
          func.func @k(%a: memref<4xf32>) { return })mlir",
       "declares 'malloc', which the runtime does not provide"},
      {R"mlir(func.func @k(%a: memref<4xf32>, %n: f64) { return })mlir",
       "argument 1 has type 'f64'"},
      {R"mlir(func.func @k(%a: memref<4xf32, strided<[2]>>) { return })mlir",
       "expected a memref with the identity layout"},
      {R"mlir(func.func @k(%a: memref<4xf32>) {
            %c = arith.constant 1 : i32
            %r = math.fpowi %c, %c : i32, i32
            return
          })mlir",
       ""},  // any diagnostic: the verifier of math.fpowi rejects it
      {R"mlir(func.func @k(%a: memref<4xf32>) {
            gpu.barrier
            return
          })mlir",
       "'gpu.barrier' op is not supported in a CPU kernel"},
      {R"mlir(func.func @k(%a: memref<4xi64>) {
            %c0 = arith.constant 0 : index
            %c1 = arith.constant 1 : index
            %x = memref.load %a[%c0] : memref<4xi64>
            %y = memref.load %a[%c1] : memref<4xi64>
            %xe = arith.extsi %x : i64 to i128
            %ye = arith.extsi %y : i64 to i128
            %q = arith.divsi %xe, %ye : i128
            %r = arith.trunci %q : i128 to i64
            memref.store %r, %a[%c0] : memref<4xi64>
            return
          })mlir",
       "the kernels need __divti3, which the runtime does not provide"},
      {"func.func @k(", "expected"},
  };
  for (const Case& c : cases) {
    std::string source = c.source;
    CAPTURE(source);
    Compiled compiled = Compile(source);
    CHECK_FALSE(compiled.executable);
    CHECK_FALSE(compiled.diagnostics.empty());
    CHECK(compiled.diagnostics.find(c.message) != std::string::npos);
  }
}


TEST_CASE("softmax: a chain of reductions and elementwise ops split by rows") {
  const char* source = R"mlir(
    func.func @softmax(%in: tensor<13x100xf32>) -> tensor<13x100xf32> {
      %ninf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<13xf32>
      %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<13xf32>) -> tensor<13xf32>
      %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
          ins(%in : tensor<13x100xf32>) outs(%m0 : tensor<13xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %r = arith.maximumf %x, %acc : f32
        linalg.yield %r : f32
      } -> tensor<13xf32>
      %e2 = tensor.empty() : tensor<13x100xf32>
      %ex = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                             affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
          ins(%in, %m : tensor<13x100xf32>, tensor<13xf32>) outs(%e2 : tensor<13x100xf32>) {
      ^bb0(%x: f32, %mx: f32, %o: f32):
        %d = arith.subf %x, %mx : f32
        %x2 = math.exp %d : f32
        linalg.yield %x2 : f32
      } -> tensor<13x100xf32>
      %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<13xf32>) -> tensor<13xf32>
      %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
          ins(%ex : tensor<13x100xf32>) outs(%s0 : tensor<13xf32>) {
      ^bb0(%x: f32, %acc: f32):
        %r = arith.addf %x, %acc : f32
        linalg.yield %r : f32
      } -> tensor<13xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                            affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%ex, %s : tensor<13x100xf32>, tensor<13xf32>) outs(%e2 : tensor<13x100xf32>) {
      ^bb0(%x: f32, %t: f32, %o: f32):
        %d = arith.divf %x, %t : f32
        linalg.yield %d : f32
      } -> tensor<13x100xf32>
      return %r : tensor<13x100xf32>
    })mlir";
  Loaded loaded = CompileAndLoad(source, "workgroup-iterations=200");
  const EntryPointInfo& entry = loaded.Entry("softmax");
  REQUIRE(entry.workgroupCount);
  // One row a workgroup: a row's exponentials and divisions alone weigh
  // 2 x 100 x 9 iterations, over the 200 asked for.
  CHECK((*entry.workgroupCount)[0] == 13);
  std::vector<float> in = Random(13 * 100, 17), out(13 * 100, 42.0f);
  for (float& v : in) v *= 5;
  REQUIRE(Dispatch(loaded, "softmax", {in.data(), out.data()}, {Bytes(in), Bytes(out)}, {}) == 0);
  std::vector<double> want(13 * 100);
  for (int i = 0; i < 13; ++i) {
    double max = -INFINITY, sum = 0;
    for (int j = 0; j < 100; ++j) max = std::max(max, double(in[i * 100 + j]));
    for (int j = 0; j < 100; ++j) sum += std::exp(in[i * 100 + j] - max);
    for (int j = 0; j < 100; ++j) want[i * 100 + j] = std::exp(in[i * 100 + j] - max) / sum;
  }
  ExpectNear(out, want, 1e-5 * 100);
}

TEST_CASE("other linalg ops: batch matmul, transposed operand, convolution, transpose") {
  const char* source = R"mlir(
    func.func @bmm(%a: memref<4x7x5xf32>, %b: memref<4x5x13xf32>, %c: memref<4x7x13xf32>) {
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%c : memref<4x7x13xf32>)
      linalg.batch_matmul ins(%a, %b : memref<4x7x5xf32>, memref<4x5x13xf32>)
                          outs(%c : memref<4x7x13xf32>)
      return
    }
    func.func @matmul_bt(%a: memref<33x17xf32>, %b: memref<40x17xf32>, %c: memref<33x40xf32>) {
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%c : memref<33x40xf32>)
      linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                     affine_map<(m, n, k) -> (m, n)>]
          ins(%a, %b : memref<33x17xf32>, memref<40x17xf32>) outs(%c : memref<33x40xf32>)
      return
    }
    func.func @conv(%in: memref<2x10x10x3xf32>, %f: memref<3x3x3x8xf32>, %out: memref<2x8x8x8xf32>) {
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%out : memref<2x8x8x8xf32>)
      linalg.conv_2d_nhwc_hwcf ins(%in, %f : memref<2x10x10x3xf32>, memref<3x3x3x8xf32>)
                               outs(%out : memref<2x8x8x8xf32>)
      return
    }
    func.func @transpose(%a: memref<33x65xf32>, %b: memref<65x33xf32>) {
      linalg.transpose ins(%a : memref<33x65xf32>) outs(%b : memref<65x33xf32>) permutation = [1, 0]
      return
    })mlir";
  Loaded loaded = CompileAndLoad(source, "workgroup-iterations=64");

  std::vector<float> a = Random(4 * 7 * 5, 18), b = Random(4 * 5 * 13, 19), c(4 * 7 * 13, 42.0f);
  REQUIRE(Dispatch(loaded, "bmm", {a.data(), b.data(), c.data()}, {Bytes(a), Bytes(b), Bytes(c)},
                   {}) == 0);
  std::vector<double> want(4 * 7 * 13, 0.0);
  for (int n = 0; n < 4; ++n)
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 13; ++j)
        for (int p = 0; p < 5; ++p)
          want[(n * 7 + i) * 13 + j] += double(a[(n * 7 + i) * 5 + p]) * b[(n * 5 + p) * 13 + j];
  ExpectNear(c, want, 1e-5 * 5);

  std::vector<float> x = Random(33 * 17, 20), y = Random(40 * 17, 21), z(33 * 40, 42.0f);
  REQUIRE(Dispatch(loaded, "matmul_bt", {x.data(), y.data(), z.data()},
                   {Bytes(x), Bytes(y), Bytes(z)}, {}) == 0);
  want.assign(33 * 40, 0.0);
  for (int i = 0; i < 33; ++i)
    for (int j = 0; j < 40; ++j)
      for (int p = 0; p < 17; ++p) want[i * 40 + j] += double(x[i * 17 + p]) * y[j * 17 + p];
  ExpectNear(z, want, 1e-5 * 17);

  std::vector<float> in = Random(2 * 10 * 10 * 3, 22), f = Random(3 * 3 * 3 * 8, 23);
  std::vector<float> out(2 * 8 * 8 * 8, 42.0f);
  REQUIRE(Dispatch(loaded, "conv", {in.data(), f.data(), out.data()},
                   {Bytes(in), Bytes(f), Bytes(out)}, {}) == 0);
  want.assign(out.size(), 0.0);
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 8; ++h)
      for (int w = 0; w < 8; ++w)
        for (int o = 0; o < 8; ++o)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw)
              for (int ci = 0; ci < 3; ++ci)
                want[((n * 8 + h) * 8 + w) * 8 + o] +=
                    double(in[((n * 10 + h + kh) * 10 + w + kw) * 3 + ci]) *
                    f[((kh * 3 + kw) * 3 + ci) * 8 + o];
  ExpectNear(out, want, 1e-5 * 27);

  std::vector<float> t = Random(33 * 65, 24), tt(65 * 33, 42.0f);
  REQUIRE(Dispatch(loaded, "transpose", {t.data(), tt.data()}, {Bytes(t), Bytes(tt)}, {}) == 0);
  want.assign(tt.size(), 0.0);
  for (int i = 0; i < 33; ++i)
    for (int j = 0; j < 65; ++j) want[j * 33 + i] = t[i * 65 + j];
  ExpectNear(tt, want, 0);
}

TEST_CASE("integers, index ops, strided copies and padding") {
  const char* source = R"mlir(
    func.func @ints(%a: memref<100xi8>, %b: memref<100xi32>, %c: memref<100xi64>) {
      linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                       affine_map<(i) -> (i)>],
                      iterator_types = ["parallel"]}
          ins(%a, %b : memref<100xi8>, memref<100xi32>) outs(%c : memref<100xi64>) {
      ^bb0(%x: i8, %y: i32, %o: i64):
        %xe = arith.extsi %x : i8 to i64
        %ye = arith.extsi %y : i32 to i64
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i64
        %s = arith.muli %xe, %ye : i64
        %t = arith.addi %s, %ii : i64
        linalg.yield %t : i64
      }
      return
    }
    func.func @every_other(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
      %s = memref.subview %a[0, 0] [4, 8] [2, 2] : memref<8x16xf32> to memref<4x8xf32, strided<[32, 2]>>
      %t = memref.subview %b[0, 0] [4, 8] [1, 1] : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1]>>
      memref.copy %s, %t : memref<4x8xf32, strided<[32, 2]>> to memref<4x8xf32, strided<[16, 1]>>
      return
    }
    func.func @pad(%a: tensor<7x7xf32>) -> tensor<9x9xf32> {
      %zero = arith.constant 0.0 : f32
      %p = tensor.pad %a low[1, 1] high[1, 1] {
      ^bb0(%i: index, %j: index):
        tensor.yield %zero : f32
      } : tensor<7x7xf32> to tensor<9x9xf32>
      return %p : tensor<9x9xf32>
    })mlir";
  Loaded loaded = CompileAndLoad(source);

  std::vector<int8_t> a(100);
  std::vector<int32_t> b(100);
  std::vector<int64_t> c(100, 42);
  for (int i = 0; i < 100; ++i) {
    a[i] = int8_t(i * 7 - 300);
    b[i] = i * 1000003 - 50000000;
  }
  REQUIRE(Dispatch(loaded, "ints", {a.data(), b.data(), c.data()}, {Bytes(a), Bytes(b), Bytes(c)},
                   {}) == 0);
  for (int i = 0; i < 100; ++i) CHECK(c[i] == int64_t(a[i]) * b[i] + i);

  std::vector<float> src = Random(8 * 16, 25), dst(8 * 16, 42.0f);
  REQUIRE(Dispatch(loaded, "every_other", {src.data(), dst.data()}, {Bytes(src), Bytes(dst)},
                   {}) == 0);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 16; ++j) {
      float expected = (i < 4 && j < 8) ? src[(2 * i) * 16 + 2 * j] : 42.0f;
      CHECK(dst[i * 16 + j] == expected);
    }

  std::vector<float> small = Random(7 * 7, 26), padded(9 * 9, 42.0f);
  REQUIRE(Dispatch(loaded, "pad", {small.data(), padded.data()}, {Bytes(small), Bytes(padded)},
                   {}) == 0);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) {
      bool inside = i >= 1 && i <= 7 && j >= 1 && j <= 7;
      CHECK(padded[i * 9 + j] == (inside ? small[(i - 1) * 7 + j - 1] : 0.0f));
    }
}


TEST_CASE("constant globals, two outputs, sliding windows, matvec, dynamic size 0") {
  const char* source = R"mlir(
    memref.global "private" constant @table : memref<3xf32> = dense<[0.25, 0.5, 0.25]>
    func.func @smooth(%a: memref<20xf32>, %b: memref<18xf32>) {
      %w = memref.get_global @table : memref<3xf32>
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%b : memref<18xf32>)
      linalg.generic {indexing_maps = [affine_map<(i, k) -> (i + k)>, affine_map<(i, k) -> (k)>,
                                       affine_map<(i, k) -> (i)>],
                      iterator_types = ["parallel", "reduction"]}
          ins(%a, %w : memref<20xf32>, memref<3xf32>) outs(%b : memref<18xf32>) {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %m = arith.mulf %x, %y : f32
        %r = arith.addf %m, %o : f32
        linalg.yield %r : f32
      }
      return
    }
    func.func @sqrt_abs(%a: memref<10x20xf32>, %s: memref<10x20xf32>, %t: memref<10x20xf32>) {
      linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                       affine_map<(i, j) -> (i, j)>],
                      iterator_types = ["parallel", "parallel"]}
          ins(%a : memref<10x20xf32>) outs(%s, %t : memref<10x20xf32>, memref<10x20xf32>) {
      ^bb0(%x: f32, %o1: f32, %o2: f32):
        %q = math.absf %x : f32
        %r = math.sqrt %q : f32
        linalg.yield %r, %q : f32, f32
      }
      return
    }
    func.func @matvec(%a: memref<100x37xf32>, %x: memref<37xf32>, %y: memref<100xf32>) {
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%y : memref<100xf32>)
      linalg.matvec ins(%a, %x : memref<100x37xf32>, memref<37xf32>) outs(%y : memref<100xf32>)
      return
    }
    func.func @negate(%a: memref<?xf32>, %b: memref<?xf32>) {
      linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                      iterator_types = ["parallel"]}
          ins(%a : memref<?xf32>) outs(%b : memref<?xf32>) {
      ^bb0(%x: f32, %o: f32):
        %n = arith.negf %x : f32
        linalg.yield %n : f32
      }
      return
    })mlir";
  Loaded loaded = CompileAndLoad(source, "workgroup-iterations=32");

  std::vector<float> a = Random(20, 27), b(18, 42.0f);
  REQUIRE(Dispatch(loaded, "smooth", {a.data(), b.data()}, {Bytes(a), Bytes(b)}, {}) == 0);
  std::vector<double> want(18);
  for (int i = 0; i < 18; ++i) want[i] = 0.25 * a[i] + 0.5 * a[i + 1] + 0.25 * a[i + 2];
  ExpectNear(b, want, 1e-6 * 3);

  std::vector<float> in = Random(200, 28), roots(200, 42.0f), magnitudes(200, 42.0f);
  REQUIRE(Dispatch(loaded, "sqrt_abs", {in.data(), roots.data(), magnitudes.data()},
                   {Bytes(in), Bytes(roots), Bytes(magnitudes)}, {}) == 0);
  std::vector<double> wantRoots(200), wantMagnitudes(200);
  for (int i = 0; i < 200; ++i) {
    wantMagnitudes[i] = std::fabs(in[i]);
    wantRoots[i] = std::sqrt(std::fabs(double(in[i])));
  }
  ExpectNear(roots, wantRoots, 1e-6);
  ExpectNear(magnitudes, wantMagnitudes, 0);

  std::vector<float> m = Random(100 * 37, 29), x = Random(37, 30), y(100, 42.0f);
  REQUIRE(Dispatch(loaded, "matvec", {m.data(), x.data(), y.data()},
                   {Bytes(m), Bytes(x), Bytes(y)}, {}) == 0);
  want.assign(100, 0.0);
  for (int i = 0; i < 100; ++i)
    for (int j = 0; j < 37; ++j) want[i] += double(m[i * 37 + j]) * x[j];
  ExpectNear(y, want, 1e-5 * 37);

  // An empty dispatch: zero-sized bindings, every workgroup does nothing.
  CHECK(Dispatch(loaded, "negate", {nullptr, nullptr}, {0, 0}, {0, 0},
                 std::array<uint32_t, 3>{2, 1, 1}) == 0);
}

}  // namespace
