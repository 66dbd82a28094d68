// StreamDevice: the HAL device of a driver on a CUDA-style API (CUDA, HIP;
// stream_context.h), whatever the API.
//
// The queue: semaphores are host timelines (hal::HostSemaphore), and
// submissions go through hal::ThreadedHostQueue, pipelined: when a
// submission's waits are met, the device's queue thread enqueues its
// command buffers on the device's stream (one stream per HAL queue) and
// records an event (cuEventRecord) after them, without waiting; a second
// thread waits for each event in turn (cuEventSynchronize), reads the check
// words and signals or fails the signal semaphores, while the first
// enqueues the next submission, so the GPU finds it queued when it finishes
// one. Waits on semaphores that earlier work of the queue signals are left
// to the stream's order. A submission that cannot be launched so (a command
// buffer of several segments, whose check words must be read between them;
// one launched and not yet finished, or named twice in the submission; a
// traced or late one) waits for the launched work, then runs segment by
// segment with a synchronization after each. pipelined=0 runs every
// submission that way.
//
// Device specs: `DRIVER` (device 0), `DRIVER?device=1` or `DRIVER://1` (by
// index among the devices the API lists); graphs=0 replays every command
// buffer operation by operation instead of as graphs from its second
// submission on (stream_command_buffer.h).
//
// Indirect command buffers are stream command buffers that bind each
// submission's table themselves (stream_command_buffer.h), so that a
// compiled program's submissions, recorded once, run as graphs too.
//
// Errors: a kernel fault fails the submission running then, every later one
// of the device and, as the APIs allow no recovery short of a new process,
// every new device of the same GPU, while the other drivers go on.
//
// Thread safety: see hal/device.h.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "drivers/stream/stream_buffer.h"
#include "drivers/stream/stream_context.h"
#include "hal/device.h"
#include "hal/driver_registry.h"
#include "hal/host_queue.h"

namespace strata::stream {

// Runs ready submissions on a thread of its own; launches them, when
// `pipelined`, and awaits their events on a second.
class StreamQueue final : public hal::ThreadedHostQueue {
 public:
  StreamQueue(std::string device_name, std::shared_ptr<StreamContext> context, bool pipelined)
      : ThreadedHostQueue(std::move(device_name), pipelined), context_(std::move(context)) {}
  ~StreamQueue() override;

 protected:
  Status Execute(hal::CommandBuffer& command_buffer, std::span<const hal::BufferBinding> binding_table, Tracer* tracer,
                 std::chrono::steady_clock::time_point deadline) override;
  StatusOr<bool> Launch(std::span<const Ref<hal::CommandBuffer>> command_buffers,
                        std::span<const std::span<const hal::BufferBinding>> binding_tables,
                        uint64_t* ticket) override;
  Status Await(uint64_t ticket, std::span<const Ref<hal::CommandBuffer>> command_buffers,
               std::chrono::steady_clock::time_point deadline) override;

 private:
  const std::shared_ptr<StreamContext> context_;
  // Launched work's events, oldest first, and events free for reuse.
  std::mutex events_mutex_;
  std::deque<std::pair<uint64_t, EventHandle>> in_flight_;
  std::vector<EventHandle> free_events_;
  uint64_t last_ticket_ = 0;  // the queue thread's
};

class StreamDevice final : public hal::Device {
 public:
  StreamDevice(hal::DeviceInfo info, std::shared_ptr<StreamContext> context, Ref<StreamAllocator> allocator,
               std::shared_ptr<StreamQueue> queue, bool graphs);
  ~StreamDevice() override;

  StatusOr<Ref<hal::CommandBuffer>> CreateCommandBuffer() override;
  StatusOr<Ref<hal::Semaphore>> CreateSemaphore(uint64_t initial_value) override;

  const StreamContext& context() const { return *context_; }
  const StreamQueue& queue() const { return *queue_; }

 protected:
  StatusOr<Ref<hal::CommandBuffer>> CreateIndirectCommandBufferImpl() override;
  Status QueueExecuteIndirectImpl(std::span<const hal::SemaphoreValue> waits,
                                  std::span<const hal::SemaphoreValue> signals,
                                  std::span<hal::CommandBuffer* const> command_buffers,
                                  std::span<const std::span<const hal::BufferBinding>> binding_tables,
                                  std::chrono::steady_clock::time_point deadline) override;
  const hal::DriverFamily* family() const override { return context_->family(); }
  StatusOr<Ref<hal::Executable>> PrepareExecutableImpl(const hal::ExecutableParams& params) override;
  Status QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits, std::span<const hal::SemaphoreValue> signals,
                          std::span<hal::CommandBuffer* const> command_buffers,
                          std::chrono::steady_clock::time_point deadline) override;

 private:
  // Every command buffer is one of this device's context.
  Status CheckOwnCommandBuffers(std::span<hal::CommandBuffer* const> command_buffers) const;

  std::shared_ptr<StreamContext> context_;
  Ref<StreamAllocator> allocator_;
  std::shared_ptr<StreamQueue> queue_;
  const bool graphs_;
};

// The options every stream driver's specs take: the device index ("" for
// the first), whether replays run as graphs and whether the queue launches
// submissions without waiting for them.
struct StreamDeviceOptions {
  std::string device;
  bool graphs = true;
  bool pipelined = true;
};
StatusOr<StreamDeviceOptions> ReadStreamDeviceOptions(const hal::DeviceSpec& spec);

// The HAL device over an opened context.
StatusOr<Ref<hal::Device>> CreateStreamDevice(const hal::DeviceSpec& spec, std::shared_ptr<StreamContext> context,
                                              const StreamDeviceOptions& options);

}  // namespace strata::stream
