// cpu-sync: every submission runs inline, on the thread that makes it ready.
//
// Running a submission can signal semaphores that make other submissions
// ready on the same thread. Running those from inside the signal would nest
// one C++ frame per link of a dependency chain (thousands, for a long chain),
// so each thread keeps a list of ready submissions and only its outermost
// Schedule drains it, in the order they became ready.
#include <utility>
#include <vector>

#include "drivers/cpu/cpu_device.h"

namespace strata::cpu {
namespace {

class SyncQueue final : public CpuQueue {
 public:
  using CpuQueue::CpuQueue;

 protected:
  void Schedule(hal::HostSubmission* submission) override {
    // Capacity is kept across calls: draining does not allocate once warm.
    thread_local std::vector<std::pair<SyncQueue*, hal::HostSubmission*>> ready;
    thread_local bool draining = false;
    ready.emplace_back(this, submission);
    if (draining) return;
    draining = true;
    for (size_t i = 0; i < ready.size(); ++i) {
      auto [queue, next] = ready[i];
      queue->Run(next);
    }
    ready.clear();
    draining = false;
  }

  Status ExecuteCommands(const CpuCommandBuffer& command_buffer, const CpuCommandBuffer::Bindings& bindings,
                         Tracer* tracer, std::chrono::steady_clock::time_point deadline) override {
    return command_buffer.RunInOrder(bindings, tracer, deadline);
  }
};

}  // namespace

Status RegisterSyncDriver(hal::DriverRegistry& registry) {
  return registry.Register(
      {"cpu-sync", "CPU, runs every submission inline on the calling thread (option: max_allocation=BYTES)", [](const hal::DeviceSpec& spec) -> StatusOr<Ref<hal::Device>> {
         STRATA_RETURN_IF_ERROR(spec.CheckKnownOptions({"max_allocation"}));
         STRATA_ASSIGN_OR_RETURN(uint64_t max_allocation, CpuMaxAllocation(spec));
         hal::DeviceInfo info = CpuDeviceInfo(spec, "CPU, inline on the calling thread", 1);
         auto queue = std::make_shared<SyncQueue>(info.name);
         return Ref<hal::Device>(MakeRef<CpuDevice>(std::move(info), std::move(queue), max_allocation));
       }});
}

}  // namespace strata::cpu
