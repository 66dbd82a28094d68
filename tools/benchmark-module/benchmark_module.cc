// benchmark-module: times calls of one function of a module on a device, as
// IREE's iree-benchmark-module does (Google Benchmark).
//
//   benchmark-module --module=mlp.smod --function=predict --input=1x784xf32=0.5
//   Benchmark                                   Time     CPU  Iterations dispatches submissions
//   BM_predict/process_time/real_time         215 us  410 us        3254          3           1
//   ... one row per repetition, then _mean, _median, _stddev, _cv, _min, _max
//
// It takes run-module's --module, --function, --device and --input flags
// (tools/common/program.h). Inputs are parsed once and the same buffer views
// go to every call; results are dropped. The function is first called
// --warmup-calls times (default 1: the first call also prepares the module's
// executables, which is load work, not call work), and a failing call stops
// the tool with the program's error and backtrace before anything is timed.
//
// One benchmark iteration is one call, timed in wall-clock time, because the
// work runs on the device's threads ("real_time"); the CPU column is the CPU
// time of the whole process ("process_time"). The counters `dispatches` and
// `submissions` are per call, counted by the device (hal/device.h; counting
// costs two atomic additions per submission). Unless
// given otherwise, the benchmark runs 5 repetitions and prints the mean,
// median, standard deviation, coefficient of variation, minimum and maximum
// over them, in microseconds when a warm-up call took under a millisecond
// and in milliseconds otherwise. Every --benchmark_* flag of Google Benchmark
// passes through: --benchmark_repetitions=N, --benchmark_min_time=SECONDS,
// --benchmark_time_unit=ns|us|ms|s, --benchmark_format=json,
// --benchmark_out=FILE, --benchmark_report_aggregates_only=true, ...
//
// With --baseline=OLD.smod it compares two builds of a program instead:
// both modules are loaded on one device, warmed up, and called in pairs
// (--pairs=N, default 100), the order alternating from pair to pair, so
// that both calls of a pair meet the same state of a noisy machine. It
// prints each module's minimum, quartiles and median call time, and the
// quartiles and median of the pairs' ratios (module over baseline): a
// slow spell that lengthens both calls of a pair leaves their ratio.
// --burst=N makes each side of a pair N calls in a row, the first not
// timed and the others' mean its time: what one call leaves in the caches
// for the next (a model whose weights nearly fit L2) then counts, where
// single calls alternating with the other build's never see it.
//
//   benchmark-module --module=new.smod --baseline=old.smod --input=...
//   paired calls of sgemm(...) on CPU, inline on the calling thread: 100 pairs
//   module                  min us      25 %    median      75 %
//   old.smod (baseline)    (one time each column)
//   new.smod               ...
//   new.smod / old.smod, pair by pair:  25 % R  median R  75 % R
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/common/flags.h"
#include "tools/common/program.h"
#include "tools/common/tool_main.h"

namespace strata::tools {
namespace {

constexpr int kDefaultRepetitions = 5;
constexpr uint64_t kDefaultPairs = 100;

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: benchmark-module --module=FILE.smod [--function=NAME] [--device=SPEC]\n"
               "                        [--input=VALUE ...] [--warmup-calls=N] [--benchmark_...]\n"
               "       benchmark-module --module=FILE.smod --baseline=OLD.smod [--pairs=N] [--burst=N] ...\n"
               "       benchmark-module --module=FILE.smod --list-functions\n"
               "       benchmark-module --list-devices\n"
               "\n"
               "%s"
               "  --warmup-calls  calls made before timing (default 1; the first call also\n"
               "                  prepares the module's executables)\n"
               "  --benchmark_*   Google Benchmark's flags pass through, e.g.\n"
               "                  --benchmark_repetitions=N (default %d), --benchmark_min_time=SECONDS,\n"
               "                  --benchmark_time_unit=ns|us|ms|s, --benchmark_format=json\n"
               "  --baseline      another build of the module: calls of both alternate in pairs,\n"
               "                  and the pairs' time ratios are printed (no Google Benchmark)\n"
               "  --pairs         pairs of calls with --baseline (default %llu)\n"
               "  --burst         with --baseline, each side of a pair is N calls in a row, the\n"
               "                  first not timed, the others' mean its time (default 1)\n",
               kProgramFlagsHelp, kDefaultRepetitions, static_cast<unsigned long long>(kDefaultPairs));
}

double Min(const std::vector<double>& values) { return *std::min_element(values.begin(), values.end()); }
double Max(const std::vector<double>& values) { return *std::max_element(values.begin(), values.end()); }

// The value at fraction `q` of sorted `values` (nearest rank).
double Quantile(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<size_t>(std::lround(q * static_cast<double>(sorted.size() - 1)))];
}

// One program's calls, as a function to time.
struct Timed {
  std::string name;
  Program* program;
  std::vector<vm::Value> args;
  std::vector<double> micros;
};

// --baseline: `pairs` pairs of calls of both programs (of bursts of `burst`
// calls, the first of each not timed), the order alternating, then each
// one's times and the pairs' ratios (program over baseline).
Status RunPaired(Timed& baseline, Timed& timed, uint64_t warmup_calls, uint64_t pairs, uint64_t burst) {
  for (Timed* t : {&baseline, &timed}) {
    for (uint64_t i = 0; i < warmup_calls; ++i) {
      auto results = t->program->context->Invoke(t->program->function, t->args);
      if (!results.ok()) return std::move(results).status().Annotate(t->name, ": warm-up call ", i + 1, ": ");
    }
  }
  std::vector<double> ratios;
  for (uint64_t pair = 0; pair < pairs; ++pair) {
    Timed* order[2] = {&baseline, &timed};
    if (pair % 2) std::swap(order[0], order[1]);
    for (Timed* t : order) {
      // A burst's first call is not timed; a single call is.
      const uint64_t untimed = burst > 1 ? 1 : 0;
      double timed_micros = 0;
      for (uint64_t call = 0; call < burst; ++call) {
        const auto begin = std::chrono::steady_clock::now();
        auto results = t->program->context->Invoke(t->program->function, t->args);
        const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - begin;
        if (!results.ok()) return std::move(results).status().Annotate(t->name, ": call ", pair * burst + call + 1, ": ");
        if (call >= untimed) timed_micros += took.count();
      }
      t->micros.push_back(timed_micros / static_cast<double>(burst - untimed));
    }
    ratios.push_back(timed.micros.back() / baseline.micros.back());
  }
  std::printf("paired calls of %s on %s: %llu pairs", timed.program->description.c_str(),
              timed.program->device->info().description.c_str(), static_cast<unsigned long long>(pairs));
  if (burst > 1) {
    std::printf(" of bursts of %llu calls (the first of each not timed)", static_cast<unsigned long long>(burst));
  }
  std::printf("\n");
  std::printf("%-32s %10s %10s %10s %10s\n", "module", "min us", "25 %", "median", "75 %");
  for (Timed* t : {&baseline, &timed}) {
    std::sort(t->micros.begin(), t->micros.end());
    const std::string label = t == &baseline ? StrCat(t->name, " (baseline)") : t->name;
    std::printf("%-32s %10.1f %10.1f %10.1f %10.1f\n", label.c_str(), t->micros.front(), Quantile(t->micros, 0.25),
                Quantile(t->micros, 0.5), Quantile(t->micros, 0.75));
  }
  std::sort(ratios.begin(), ratios.end());
  std::printf("%s / %s, pair by pair:  25 %% %.3f  median %.3f  75 %% %.3f\n", timed.name.c_str(),
              baseline.name.c_str(), Quantile(ratios, 0.25), Quantile(ratios, 0.5), Quantile(ratios, 0.75));
  return OkStatus();
}

// Whether the command line sets Google Benchmark's --benchmark_`name`.
bool HasBenchmarkFlag(int argc, char** argv, const char* name) {
  const std::string prefix = StrCat("--benchmark_", name, "=");
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) return true;
  }
  return false;
}

Status Run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      PrintUsage(stdout);
      return OkStatus();
    }
  }
  const bool time_unit_given = HasBenchmarkFlag(argc, argv, "time_unit");
  // The default repetitions go in as a flag (set on the benchmark instead,
  // they would show in its name); Initialize takes out the --benchmark_*
  // flags it knows, and ours remain.
  std::string default_repetitions = StrCat("--benchmark_repetitions=", kDefaultRepetitions);
  std::vector<char*> arguments(argv, argv + argc);
  if (!HasBenchmarkFlag(argc, argv, "repetitions")) arguments.insert(arguments.begin() + 1, default_repetitions.data());
  argc = static_cast<int>(arguments.size());
  arguments.push_back(nullptr);
  argv = arguments.data();
  benchmark::Initialize(&argc, argv);

  ProgramOptions options;
  uint64_t warmup_calls = 1, pairs = kDefaultPairs, burst = 1;
  bool burst_given = false;
  std::string baseline_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (ParseProgramFlag(arg, &options)) continue;
    if (ParseFlag(arg, "warmup-calls", &value)) {
      STRATA_ASSIGN_OR_RETURN(warmup_calls, ParseCount("warmup-calls", value));
      continue;
    }
    if (ParseFlag(arg, "pairs", &value)) {
      STRATA_ASSIGN_OR_RETURN(pairs, ParseCount("pairs", value));
      if (pairs == 0) return InvalidArgumentError("--pairs=0: expected at least one pair");
      continue;
    }
    if (ParseFlag(arg, "burst", &value)) {
      STRATA_ASSIGN_OR_RETURN(burst, ParseCount("burst", value));
      if (burst == 0) return InvalidArgumentError("--burst=0: expected at least one call a burst");
      burst_given = true;
      continue;
    }
    if (ParseFlag(arg, "baseline", &baseline_path)) continue;
    PrintUsage(stderr);
    return InvalidArgumentError("unknown argument '", arg, "'");
  }
  if (burst_given && baseline_path.empty()) {
    return InvalidArgumentError("--burst=", burst, ": bursts are of paired calls, which need --baseline=OLD.smod");
  }
  STRATA_ASSIGN_OR_RETURN(bool listed, PrintListing(options));
  if (listed) return OkStatus();

  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, Program::Load(options));
  STRATA_ASSIGN_OR_RETURN(std::vector<vm::Value> args, program->ParseInputs(options.inputs));
  if (!baseline_path.empty()) {
    ProgramOptions baseline_options = options;
    baseline_options.module_path = baseline_path;
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Program> baseline, Program::Load(baseline_options, program->device));
    STRATA_ASSIGN_OR_RETURN(std::vector<vm::Value> baseline_args, baseline->ParseInputs(options.inputs));
    Timed old_build{std::filesystem::path(baseline_path).filename(), baseline.get(), std::move(baseline_args), {}};
    Timed new_build{std::filesystem::path(options.module_path).filename(), program.get(), std::move(args), {}};
    return RunPaired(old_build, new_build, warmup_calls, pairs, burst);
  }
  vm::Context& context = *program->context;
  const vm::FunctionHandle function = program->function;

  std::chrono::steady_clock::duration last_call{};
  for (uint64_t i = 0; i < warmup_calls; ++i) {
    const auto begin = std::chrono::steady_clock::now();
    auto results = context.Invoke(function, args);
    if (!results.ok()) return std::move(results).status().Annotate("warm-up call ", i + 1, ": ");
    last_call = std::chrono::steady_clock::now() - begin;
  }

  benchmark::AddCustomContext("module", options.module_path);
  benchmark::AddCustomContext("function", program->description);
  benchmark::AddCustomContext("device", program->device->info().description);
  Status failure;
  hal::Device& device = *program->device;
  device.set_statistics_enabled(true);
  auto* registered = benchmark::RegisterBenchmark(
      StrCat("BM_", function.name).c_str(), [&](benchmark::State& state) {
        const hal::DeviceStatistics before = device.statistics();
        for (auto _ : state) {
          auto results = context.Invoke(function, args);
          if (!results.ok()) {
            failure = results.status();
            state.SkipWithError(failure.ToString().c_str());
            break;
          }
        }
        const hal::DeviceStatistics after = device.statistics();
        state.counters["dispatches"] = benchmark::Counter(static_cast<double>(after.dispatches - before.dispatches),
                                                          benchmark::Counter::kAvgIterations);
        state.counters["submissions"] = benchmark::Counter(
            static_cast<double>(after.submissions - before.submissions), benchmark::Counter::kAvgIterations);
      });
  registered->MeasureProcessCPUTime()->UseRealTime();
  registered->ComputeStatistics("min", Min)->ComputeStatistics("max", Max);
  if (!time_unit_given) {
    registered->Unit(warmup_calls && last_call < std::chrono::milliseconds(1) ? benchmark::kMicrosecond
                                                                              : benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return failure;
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  return strata::tools::ToolMain("benchmark-module", strata::tools::Run, argc, argv);
}
