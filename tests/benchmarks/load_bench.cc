// The cost of the integrity check at load (Google Benchmark): loading a module
// file with its digests checked against loading it with the check off, and
// hashing its bytes alone. Loading maps the file and reads it in place either
// way; the check reads every page once.
//
//   load-bench MODULE.smod [--benchmark_repetitions=5 ...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "schemas/integrity.h"
#include "vm/bytecode_module.h"

namespace {

std::string module_path;

void BM_Load(benchmark::State& state, bool verify) {
  for (auto _ : state) {
    auto module = strata::vm::BytecodeModule::LoadFile(module_path, {.verify = verify});
    if (!module.ok()) {
      state.SkipWithError(module.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(module->get());
  }
}

void BM_Hash(benchmark::State& state) {
  auto module = strata::vm::BytecodeModule::LoadFile(module_path);
  if (!module.ok()) {
    state.SkipWithError(module.status().ToString().c_str());
    return;
  }
  std::span<const uint8_t> bytes = (*module)->file_bytes();
  for (auto _ : state) benchmark::DoNotOptimize(strata::integrity::Hash(bytes));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: load-bench MODULE.smod [benchmark flags]\n");
    return 2;
  }
  module_path = argv[1];
  benchmark::RegisterBenchmark("load/verified", BM_Load, true)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("load/unverified", BM_Load, false)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("xxh3_128/file", BM_Hash)->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
