// flip-modules: random single-bit changes over compiled modules, each loaded
// from memory as an app would (integrity check on) and, where it loads, every
// export run on cpu-sync with default inputs and compared with the results
// of the undamaged module. Prints each outcome; exits non-zero when a change
// loaded and silently changed a result. A crash or hang fails the test by
// itself.
//
//   flip-modules --flips=1000 --seed=1 a.smod b.smod ...
//
// Flip i goes to module i mod N, at a random byte and bit.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "drivers/registry.h"
#include "hal/module/hal_module.h"
#include "tests/vm/default_inputs.h"
#include "tools/common/file_io.h"
#include "tools/common/numpy_io.h"
#include "tools/common/tensor_compare.h"
#include "tools/common/tensor_text.h"
#include "tools/common/tensor_values.h"
#include "vm/bytecode_module.h"
#include "vm/context.h"

namespace strata {
namespace {

struct Sample {
  std::string path;
  std::vector<uint8_t> bytes;
  std::vector<std::vector<uint8_t>> results;  // every export's results, flattened
  int refused = 0, same = 0, failed = 0, changed = 0;
};

// Runs every export with default inputs; one entry per export (its results'
// bytes, or the error text).
StatusOr<std::vector<std::vector<uint8_t>>> RunAll(std::span<const uint8_t> bytes, hal::Device& device_ref,
                                                   Ref<hal::Device> device) {
  STRATA_ASSIGN_OR_RETURN(Ref<vm::BytecodeModule> module, vm::BytecodeModule::LoadBytes(bytes));
  STRATA_ASSIGN_OR_RETURN(auto hal_module, hal::CreateHalModule(device));
  STRATA_ASSIGN_OR_RETURN(auto context, vm::Context::Create({hal_module, module}));
  std::vector<std::vector<uint8_t>> outputs;
  for (const auto& fn : module->exports()) {
    const vm::FunctionInfo& info = module->functions()[fn.ordinal];
    std::vector<vm::Value> args;
    for (size_t i = 0; i < info.arg_types.size(); ++i) {
      std::string text = i < info.source_arg_types.size()
                             ? testing::DefaultInputText(info.source_arg_types[i])
                             : std::string();
      if (text.empty()) text = std::string(info.source_arg_types.empty() ? "i64" : info.source_arg_types[i]) + "=2";
      STRATA_ASSIGN_OR_RETURN(tools::Tensor tensor, tools::ParseTensor(text));
      STRATA_ASSIGN_OR_RETURN(vm::Value value, tools::TensorToValue(tensor, info.arg_types[i], *device));
      args.push_back(std::move(value));
    }
    STRATA_ASSIGN_OR_RETURN(vm::FunctionHandle handle, context->LookupFunction(std::string(fn.name)));
    vm::InvocationOptions options;
    options.max_steps = 100000000;
    options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto results = context->Invoke(handle, args, options);
    // 'E' and the error, or 'R' and the results' bytes.
    std::vector<uint8_t> flat(1, results.ok() ? 'R' : 'E');
    if (!results.ok()) {
      std::string text = results.status().ToString();
      flat.insert(flat.end(), text.begin(), text.end());
    } else {
      for (const vm::Value& result : *results) {
        STRATA_ASSIGN_OR_RETURN(tools::Tensor tensor, tools::TensorFromValue(result, device_ref));
        flat.insert(flat.end(), tensor.bytes.begin(), tensor.bytes.end());
      }
    }
    outputs.push_back(std::move(flat));
  }
  return outputs;
}

// Whether some export that ran undamaged now fails with an error.
bool FailsWhereItRan(const std::vector<std::vector<uint8_t>>& damaged,
                     const std::vector<std::vector<uint8_t>>& pristine) {
  for (size_t i = 0; i < damaged.size() && i < pristine.size(); ++i) {
    if (damaged[i][0] == 'E' && pristine[i][0] == 'R') return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  int flips = 1000;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  std::vector<Sample> samples;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--flips=", 0) == 0) {
      flips = std::atoi(arg.c_str() + 8);
    } else if (arg.rfind("--seed=", 0) == 0) {
      state ^= std::strtoull(arg.c_str() + 7, nullptr, 10);
    } else {
      auto bytes = tools::ReadFile(arg);
      if (!bytes.ok()) {
        std::fprintf(stderr, "flip-modules: %s\n", bytes.status().ToString().c_str());
        return 1;
      }
      samples.push_back({arg, std::move(*bytes)});
    }
  }
  if (samples.empty()) {
    std::fprintf(stderr, "usage: flip-modules [--flips=N] [--seed=S] MODULE.smod...\n");
    return 2;
  }
  auto device = drivers::DefaultRegistry().CreateDevice("cpu-sync");
  if (!device.ok()) {
    std::fprintf(stderr, "flip-modules: %s\n", device.status().ToString().c_str());
    return 1;
  }
  for (Sample& sample : samples) {
    auto results = RunAll(sample.bytes, **device, *device);
    if (!results.ok()) {
      std::fprintf(stderr, "flip-modules: %s does not run undamaged: %s\n", sample.path.c_str(),
                   results.status().ToString().c_str());
      return 1;
    }
    sample.results = std::move(*results);
  }
  auto next = [&state] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  std::map<std::string, int> reasons;
  for (int trial = 0; trial < flips; ++trial) {
    Sample& sample = samples[static_cast<size_t>(trial) % samples.size()];
    const size_t at = next() % sample.bytes.size();
    const uint8_t bit = static_cast<uint8_t>(1u << (next() % 8));
    sample.bytes[at] ^= bit;
    auto results = RunAll(sample.bytes, **device, *device);
    sample.bytes[at] ^= bit;
    if (!results.ok()) {
      ++sample.refused;
      std::string message(results.status().message());
      // "the module is damaged: executable 'kernels' (...) (bytes 1 to 2) has ..." -> up to the range
      message = message.substr(0, message.find(" (bytes"));
      reasons[std::string(StatusCodeName(results.status().code())) + ": " + message]++;
    } else if (*results == sample.results) {
      ++sample.same;
    } else if (FailsWhereItRan(*results, sample.results)) {
      ++sample.failed;  // a clear error from a call
    } else {
      ++sample.changed;
      std::fprintf(stderr, "flip-modules: %s: bit %u of byte %zu loaded and changed a result\n",
                   sample.path.c_str(), static_cast<unsigned>(bit), at);
    }
  }
  int changed = 0;
  std::printf(
      "%d flips over %zu modules (refused at load / loaded, same results / loaded, a call fails with an error / "
      "loaded, results changed):\n",
      flips, samples.size());
  for (const Sample& sample : samples) {
    std::printf("  %-24s %9zu bytes: %4d / %4d / %4d / %4d\n",
                sample.path.substr(sample.path.rfind('/') + 1).c_str(), sample.bytes.size(), sample.refused,
                sample.same, sample.failed, sample.changed);
    changed += sample.changed;
  }
  std::printf("reasons for refusal:\n");
  for (const auto& [reason, count] : reasons) std::printf("  %4d x %s\n", count, reason.c_str());
  return changed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) { return strata::Main(argc, argv); }
