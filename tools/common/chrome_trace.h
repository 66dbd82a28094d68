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
// Thread safety: Record is thread-safe (one mutex: tracing is for looking at a
// run, not for timing its fastest paths). Call Write once the traced work is
// done; events recorded after it are not written.
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

  ChromeTrace(std::string path, FILE* file, std::string process_name);

  const std::string path_;
  FILE* file_;
  const std::string process_name_;
  const uint64_t origin_ns_;
  std::mutex mutex_;
  // A deque: growing it moves no event, where a vector's doubling copied
  // every event so far under the mutex and stalled the recording threads
  // (tens of microseconds at 512 and 1024 events, shown as a kernel's time).
  std::deque<Event> events_;
  std::map<std::thread::id, uint32_t> threads_;  // to 1, 2, ... (1: the creator)
};

}  // namespace strata::tools
