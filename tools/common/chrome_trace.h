// ChromeTrace: a Tracer that keeps the runtime's events and writes them
// as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open (`run-module --trace=FILE.json`).
//
// The file is the JSON object format: {"traceEvents": [...]}. Each event is a
// complete event ("ph": "X") with its category, name and arguments, "ts" and
// "dur" in microseconds (three decimals: nanoseconds) counted from the
// trace's creation, pid 1, and a small thread id: 1 for the thread that
// created the trace, then 2, 3, ... in the order other threads first record.
// Metadata events name the process and the threads ("main", "thread 2"...).
// Events are written sorted by start time, longer first among equal starts,
// so that viewers nest each thread's events as they ran.
//
// Thread safety: Record is thread-safe. Each thread records into a buffer of
// its own, under a mutex only it and Write take: with one mutex for all, a
// thread that found it held slept until woken, and cpu-task's two threads
// showed gaps of 20 to 90 us at once inside a dispatch's workgroups (one
// recording, the other waiting for it), where untraced calls had none. Call
// Write once the traced work is done; events recorded after it are not
// written.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "vm/base/status.h"
#include "vm/base/trace.h"

namespace strata::tools {

class ChromeTrace final : public Tracer {
 public:
  // Opens `path` for writing now, so that a bad path fails before anything
  // runs. `process_name` names the process in the viewer.
  static StatusOr<std::unique_ptr<ChromeTrace>> Create(const std::string& path, std::string process_name);
  ~ChromeTrace() override;

  void Record(const TraceEvent& event) override;

  // Writes every event recorded so far and closes the file.
  Status Write();

 private:
  struct Event {
    std::string category;
    std::string name;
    std::string args;  // a JSON object
    uint64_t begin_ns;
    uint64_t end_ns;
    uint32_t thread;
  };

  // One thread's events. A deque: growing it moves no event, where a
  // vector's doubling copied every event so far and stalled the recording
  // thread (tens of microseconds at 512 and 1024 events, shown as a
  // kernel's time).
  struct ThreadEvents {
    uint32_t thread;  // 1, 2, ... (1: the creator)
    std::mutex mutex;
    std::deque<Event> events;
  };

  ChromeTrace(std::string path, FILE* file, std::string process_name);
  // The calling thread's buffer, made on its first event.
  ThreadEvents& ThisThread();

  const std::string path_;
  FILE* file_;
  const std::string process_name_;
  const uint64_t origin_ns_;
  // Tells this trace's buffers from another's in a thread's cache of its
  // last one (an address can be reused by a later trace).
  const uint64_t id_;
  std::mutex mutex_;  // guards threads_ and file_
  std::map<std::thread::id, std::unique_ptr<ThreadEvents>> threads_;
};

}  // namespace strata::tools
