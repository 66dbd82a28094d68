// Tracer: where the runtime reports what it is doing, for a timeline.
//
// The runtime keeps a `Tracer*` that is null unless someone asked for events.
// Every place that reports checks that pointer once and does nothing more when
// it is null, so tracing costs nothing when it is off. Two layers report:
//
//   the VM   the invoked function and each call into a native module, such
//            as `hal.queue.execute` (vm::InvocationOptions::tracer);
//   the HAL  queue submissions and host waits, and the device work itself:
//            each submission as it runs and each dispatch, on whichever
//            thread runs it (hal::Device::set_tracer).
//
// The interface lives in the base layer because both layers report through
// it; it knows nothing of either. A build with STRATA_TRACING=0 (cmake
// -DSTRATA_TRACING=OFF) reads every tracer through ActiveTracer, which is then
// always null, so the reporting code compiles away.
// `run-module --trace=FILE.json` implements it (tools/common/chrome_trace.h).
//
// An event is a complete interval on the thread that calls Record: its begin
// and end come from Tracer::Now() on that thread, and events one thread
// records nest (an inner event ends before its outer one). Strings are
// borrowed for the duration of the call only.
//
// Thread safety: Record is called concurrently from any thread (the task
// driver's workers report their own dispatches); implementations must be
// thread-safe. A tracer must outlive every invocation and every submission
// made while it was installed.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string_view>

#ifndef STRATA_TRACING
#define STRATA_TRACING 1
#endif

namespace strata {

// One named argument of an event: an integer or a string.
struct TraceArg {
  TraceArg(std::string_view key, int64_t number) : key(key), number(number), is_text(false) {}
  TraceArg(std::string_view key, std::string_view text) : key(key), text(text), is_text(true) {}

  std::string_view key;
  int64_t number = 0;
  std::string_view text;
  bool is_text;
};

struct TraceEvent {
  // What kind of event it is ("vm", "import", "submit", "dispatch", ...) and
  // which one ("module.main", "hal.queue.execute", an entry point's name).
  std::string_view category;
  std::string_view name;
  uint64_t begin_ns = 0;  // Tracer::Now() values
  uint64_t end_ns = 0;
  std::span<const TraceArg> args;
};

class Tracer {
 public:
  virtual ~Tracer() = default;

  // Nanoseconds on the monotonic clock all events use.
  static uint64_t Now() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  }

  // Records an event that ran on the calling thread.
  virtual void Record(const TraceEvent& event) = 0;
};

// The tracer to report to: `tracer`, or null in a build without tracing.
inline Tracer* ActiveTracer(Tracer* tracer) { return STRATA_TRACING ? tracer : nullptr; }

}  // namespace strata
