// run-module: runs one function of a module on a device and prints its
// results.
//
//   run-module --module=mnist.smod --function=main --input=@image.npy
//   1x10xf32=[[-2.1 0.3 ... ]]
//   run-module --module=loop.smod --function=loop --input=i64=100
//   i64=5050
//
// The program runs in a context of two modules, the `hal` module on the
// device named by --device and the program itself (tools/common/program.h).
// Inputs, printed results and expected outputs share one syntax
// (tools/common/tensor_text.h), so a printed result can be pasted back as an
// input; tensors travel as buffer views. A bare TYPE=VALUE is a scalar,
// except for an argument whose recorded source type is that 0-d tensor
// (f32=2.5 for a tensor<f32>). Flags also accept IREE's spelling with
// underscores (--expected_output). Every failure prints one clear message
// (with the VM backtrace when the program failed) and exits non-zero.
//
// --trace=FILE.json records the run as Chrome trace-event JSON (open it in
// ui.perfetto.dev): the call and every call into the hal module, each queue
// submission and host wait, and each submission and dispatch on the threads
// that ran them. --print-statistics prints load and call times, dispatches,
// submissions and the device allocator's peak to stderr.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "hal/buffer_view.h"
#include "tools/common/chrome_trace.h"
#include "tools/common/flags.h"
#include "tools/common/program.h"
#include "tools/common/file_io.h"
#include "tools/common/numpy_io.h"
#include "tools/common/tensor_compare.h"
#include "tools/common/tensor_text.h"
#include "tools/common/tensor_values.h"
#include "tools/common/tool_main.h"
#include "vm/value.h"

namespace strata::tools {
namespace {

using vm::Value;

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: run-module --module=FILE.smod [--function=NAME] [--device=SPEC]\n"
               "                  [--input=VALUE ...] [--output=@FILE.npy ...]\n"
               "                  [--expected-output=VALUE ...] [--rtol=X] [--atol=X]\n"
               "                  [--print-max-elements=N] [--max-steps=N] [--timeout-ms=N]\n"
               "                  [--trace=FILE.json] [--print-statistics] [--warmup-calls=N]\n"
               "       run-module --module=FILE.smod --list-functions\n"
               "       run-module --list-devices\n"
               "\n"
               "%s"
               "  --output        one per result, in order: @FILE.npy writes a NumPy file, @FILE\n"
               "                  raw bytes, an empty value skips the result (bf16 is saved as <u2)\n"
               "  --expected-output  one per result, in order, or (ignore); floats match within\n"
               "                  atol + rtol * |expected| (defaults 1e-6, 1e-5), integers exactly\n"
               "  --print-max-elements  elide printed tensors larger than this (default 1024,\n"
               "                  0 prints everything)\n"
               "  --max-steps     stops a program after N branches and calls (0 = no limit)\n"
               "  --trace         writes the run as Chrome trace-event JSON (ui.perfetto.dev)\n"
               "  --print-statistics  prints load and call time, dispatches, submissions and\n"
               "                  peak device memory to stderr\n"
               "  --warmup-calls  calls made first, untraced and unmeasured, so that --trace\n"
               "                  and --print-statistics show a steady-state call (default 0)\n",
               kProgramFlagsHelp);
}

std::string Times(size_t n) { return n == 1 ? std::string("once") : StrCat(n, " times"); }

struct Options {
  ProgramOptions program;
  std::vector<std::string> outputs, expected_outputs;
  Tolerance tolerance;
  PrintOptions print;
  vm::InvocationOptions invocation;
  std::string trace_path;
  bool print_statistics = false;
  uint64_t warmup_calls = 0;
};

StatusOr<bool> ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      PrintUsage(stdout);
      return false;
    } else if (ParseProgramFlag(arg, &options->program)) {
      continue;
    } else if (ParseFlag(arg, "output", &value)) {
      if (!value.empty() && (value[0] != '@' || value.size() == 1)) {
        return InvalidArgumentError("--output='", value, "': expected @FILE.npy, @FILE or nothing");
      }
      options->outputs.push_back(value);
    } else if (ParseFlag(arg, "expected-output", &value)) {
      options->expected_outputs.push_back(value);
    } else if (ParseFlag(arg, "rtol", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->tolerance.rtol, ParseNonNegative("rtol", value));
    } else if (ParseFlag(arg, "atol", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->tolerance.atol, ParseNonNegative("atol", value));
    } else if (ParseFlag(arg, "print-max-elements", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->print.max_elements, ParseCount("print-max-elements", value));
    } else if (ParseFlag(arg, "max-steps", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->invocation.max_steps, ParseCount("max-steps", value));
    } else if (ParseFlag(arg, "timeout-ms", &value)) {
      STRATA_ASSIGN_OR_RETURN(uint64_t ms, ParseCount("timeout-ms", value));
      options->invocation.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    } else if (ParseFlag(arg, "trace", &value)) {
      if (value.empty()) return InvalidArgumentError("--trace=: expected a file name, as in --trace=run.json");
      options->trace_path = value;
    } else if (ParseSwitch(arg, "print-statistics")) {
      options->print_statistics = true;
    } else if (ParseFlag(arg, "warmup-calls", &value)) {
      STRATA_ASSIGN_OR_RETURN(options->warmup_calls, ParseCount("warmup-calls", value));
    } else {
      PrintUsage(stderr);
      return InvalidArgumentError("unknown argument '", arg, "'");
    }
  }
  return true;
}

double Milliseconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double, std::milli>(duration).count();
}

// Loads, calls and reports; `tracer` (may be null) receives the run's events.
Status RunProgram(Options& options, Tracer* tracer) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point load_begin = Clock::now();
  const uint64_t trace_load_begin = tracer ? Tracer::Now() : 0;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, Program::Load(options.program));
  const Clock::duration load_time = Clock::now() - load_begin;
  // From here on, so that the inputs count in the peak.
  if (options.print_statistics) program->device->set_statistics_enabled(true);
  if (tracer) tracer->Record({"run-module", "load", trace_load_begin, Tracer::Now(), {}});
  const std::string& described = program->description;
  const size_t result_count = program->result_types.size();

  // Everything that can be checked before running is.
  const uint64_t trace_inputs_begin = tracer ? Tracer::Now() : 0;
  STRATA_ASSIGN_OR_RETURN(std::vector<Value> args, program->ParseInputs(options.program.inputs));
  if (tracer) tracer->Record({"run-module", "inputs", trace_inputs_begin, Tracer::Now(), {}});
  if (options.outputs.size() > result_count) {
    return InvalidArgumentError("--output is given ", Times(options.outputs.size()), ", but function ", described,
                                " returns ", result_count, " result", result_count == 1 ? "" : "s");
  }
  if (!options.expected_outputs.empty() && options.expected_outputs.size() != result_count) {
    return InvalidArgumentError("--expected-output is given ", Times(options.expected_outputs.size()),
                                ", but function ", described, " returns ", result_count, " result",
                                result_count == 1 ? "" : "s", " (give one per result, or (ignore))");
  }
  std::vector<std::optional<Tensor>> expected(options.expected_outputs.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    if (options.expected_outputs[i] == "(ignore)") continue;
    auto tensor = ParseTensor(options.expected_outputs[i]);
    if (!tensor.ok()) {
      Status status = tensor.status();
      return status.Annotate("expected output ", i, ": ");
    }
    expected[i] = std::move(tensor).value();
  }

  for (uint64_t i = 0; i < options.warmup_calls; ++i) {
    auto warmup = program->context->Invoke(program->function, args, options.invocation);
    if (!warmup.ok()) {
      Status status = warmup.status();
      return status.Annotate("warm-up call ", i + 1, ": ");
    }
  }
  if (tracer) {
    program->device->set_tracer(tracer);
    options.invocation.tracer = tracer;
  }
  const hal::DeviceStatistics device_before = program->device->statistics();
  const Clock::time_point call_begin = Clock::now();
  STRATA_ASSIGN_OR_RETURN(std::vector<Value> results,
                          program->context->Invoke(program->function, args, options.invocation));
  const Clock::duration call_time = Clock::now() - call_begin;
  const hal::DeviceStatistics device_after = program->device->statistics();

  const uint64_t trace_results_begin = tracer ? Tracer::Now() : 0;
  std::vector<std::optional<Tensor>> tensors(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    auto tensor = TensorFromValue(results[i], *program->device);
    if (tensor.ok()) {
      std::printf("%s\n", FormatTensor(*tensor, options.print).c_str());
      tensors[i] = std::move(tensor).value();
    } else if (results[i].type() == vm::ValueType::kRef && !RefCast<hal::BufferView>(results[i].ref().get())) {
      std::printf("%s\n", results[i].ToString().c_str());  // a ref that is no tensor
    } else {
      Status status = tensor.status();
      return status.Annotate("result ", i, ": ");
    }
  }
  std::fflush(stdout);
  if (tracer) tracer->Record({"run-module", "results", trace_results_begin, Tracer::Now(), {}});

  if (options.print_statistics) {
    const hal::AllocatorStatistics memory = program->device->allocator()->statistics();
    std::fprintf(stderr, "load time: %.3f ms (module, device and context)\n", Milliseconds(load_time));
    std::fprintf(stderr, "call time: %.3f ms (1 call of %s on %s)\n", Milliseconds(call_time),
                 std::string(program->function.name).c_str(), program->device->info().name.c_str());
    std::fprintf(stderr, "dispatches: %llu\n",
                 static_cast<unsigned long long>(device_after.dispatches - device_before.dispatches));
    std::fprintf(stderr, "queue submissions: %llu\n",
                 static_cast<unsigned long long>(device_after.submissions - device_before.submissions));
    std::fprintf(stderr, "peak device memory: %llu bytes (%llu allocations; inputs and results included)\n",
                 static_cast<unsigned long long>(memory.peak_bytes),
                 static_cast<unsigned long long>(memory.allocations));
    if (program->info) {
      std::fprintf(stderr, "planned transient memory: %llu bytes\n",
                   static_cast<unsigned long long>(program->info->transient_bytes));
    }
  }

  for (size_t i = 0; i < options.outputs.size(); ++i) {
    if (options.outputs[i].empty()) continue;
    const std::string path = options.outputs[i].substr(1);
    if (!tensors[i]) {
      return InvalidArgumentError("--output=@", path, ": result ", i, " is ", results[i].ToString(),
                                  ", not a tensor or scalar");
    }
    const bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    STRATA_RETURN_IF_ERROR(npy ? WriteNpyFile(path, *tensors[i]) : WriteFile(path, tensors[i]->bytes));
  }

  std::string mismatches;
  size_t mismatch_count = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!expected[i]) continue;
    Comparison comparison;
    if (tensors[i]) {
      comparison = CompareTensors(*expected[i], *tensors[i], options.tolerance);
    } else {
      comparison.message = StrCat("expected ", expected[i]->DescribeType(), ", got ", results[i].ToString());
    }
    if (comparison.match) {
      std::printf("expected output %zu: match (%llu element%s, max abs diff %.2g)\n", i,
                  static_cast<unsigned long long>(comparison.element_count),
                  comparison.element_count == 1 ? "" : "s", comparison.max_abs_diff);
    } else {
      mismatches += StrCat(mismatches.empty() ? "" : "\n", "expected output ", i, ": ", comparison.message);
      ++mismatch_count;
    }
  }
  if (mismatch_count == 1) return InvalidArgumentError(mismatches);
  if (mismatch_count > 1) {
    return InvalidArgumentError(mismatch_count, " of ", expected.size(), " expected outputs differ:\n", mismatches);
  }
  return OkStatus();
}

Status Run(int argc, char** argv) {
  Options options;
  STRATA_ASSIGN_OR_RETURN(bool run, ParseOptions(argc, argv, &options));
  if (!run) return OkStatus();
  STRATA_ASSIGN_OR_RETURN(bool listed, PrintListing(options.program));
  if (listed) return OkStatus();
  if (options.program.module_path.empty()) return InvalidArgumentError("missing --module=FILE.smod");

  // The trace outlives the program, whose device finishes all its work when
  // destroyed; it is written whether or not the run succeeded.
  std::unique_ptr<ChromeTrace> trace;
  if (!options.trace_path.empty()) {
    STRATA_ASSIGN_OR_RETURN(trace, ChromeTrace::Create(options.trace_path, "run-module"));
  }
  Status status = RunProgram(options, trace.get());
  if (trace) {
    Status written = trace->Write();
    if (status.ok()) status = std::move(written);
  }
  return status;
}

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  return strata::tools::ToolMain("run-module", strata::tools::Run, argc, argv);
}
