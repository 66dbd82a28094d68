#include "tools/common/chrome_trace.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace strata::tools {

namespace {

// Whether `text` is well-formed UTF-8 (names come from module files, which
// do not promise it).
bool IsUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    if (byte < 0x80) {
      length = 1;
    } else if ((byte >> 5) == 0x6) {
      length = 2;
    } else if ((byte >> 4) == 0xE) {
      length = 3;
    } else if ((byte >> 3) == 0x1E) {
      length = 4;
    }
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    }
    i += length;
  }
  return true;
}

// `text` as a JSON string literal; bytes of malformed UTF-8 are escaped one
// by one, so the file stays valid JSON.
std::string JsonString(std::string_view text) {
  const bool utf8 = IsUtf8(text);
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (byte < 0x20 || (!utf8 && byte >= 0x80)) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(byte));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Nanoseconds as microseconds with three decimals, exactly.
std::string Microseconds(uint64_t ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  return buffer;
}

}  // namespace

StatusOr<std::unique_ptr<ChromeTrace>> ChromeTrace::Create(const std::string& path, std::string process_name) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (!file) return InvalidArgumentError("--trace: cannot write '", path, "': ", std::strerror(errno));
  return std::unique_ptr<ChromeTrace>(new ChromeTrace(path, file, std::move(process_name)));
}

namespace {
std::atomic<uint64_t> next_trace_id{1};
}  // namespace

ChromeTrace::ChromeTrace(std::string path, FILE* file, std::string process_name)
    : path_(std::move(path)),
      file_(file),
      process_name_(std::move(process_name)),
      origin_ns_(Now()),
      id_(next_trace_id.fetch_add(1, std::memory_order_relaxed)) {
  ThisThread();
}

ChromeTrace::ThreadEvents& ChromeTrace::ThisThread() {
  struct Cache {
    uint64_t id = 0;
    ThreadEvents* events = nullptr;
  };
  thread_local Cache cache;
  if (cache.id == id_) return *cache.events;
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<ThreadEvents>& slot = threads_[std::this_thread::get_id()];
  if (!slot) {
    slot = std::make_unique<ThreadEvents>();
    slot->thread = static_cast<uint32_t>(threads_.size());
  }
  cache = {id_, slot.get()};
  return *slot;
}

ChromeTrace::~ChromeTrace() {
  if (file_) std::fclose(file_);
}

void ChromeTrace::Record(const TraceEvent& event) {
  std::string args = "{";
  for (const TraceArg& arg : event.args) {
    args += StrCat(args.size() > 1 ? ", " : "", JsonString(arg.key), ": ",
                   arg.is_text ? JsonString(arg.text) : std::to_string(arg.number));
  }
  args += "}";
  ThreadEvents& mine = ThisThread();
  std::lock_guard<std::mutex> lock(mine.mutex);
  mine.events.push_back({std::string(event.category), std::string(event.name), std::move(args), event.begin_ns,
                         event.end_ns, mine.thread});
}

Status ChromeTrace::Write() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!file_) return FailedPreconditionError("the trace '", path_, "' was already written");
  // By start, longer first, then by thread and in the order recorded.
  std::vector<const Event*> sorted;
  std::vector<ThreadEvents*> buffers(threads_.size());
  for (auto& [id, buffer] : threads_) buffers[buffer->thread - 1] = buffer.get();
  std::vector<std::unique_lock<std::mutex>> locks;
  for (ThreadEvents* buffer : buffers) {
    locks.emplace_back(buffer->mutex);
    for (const Event& event : buffer->events) sorted.push_back(&event);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const Event* a, const Event* b) {
    if (a->begin_ns != b->begin_ns) return a->begin_ns < b->begin_ns;
    return a->end_ns > b->end_ns;
  });
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  out += StrCat("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": ",
                JsonString(process_name_), "}}");
  for (uint32_t thread = 1; thread <= threads_.size(); ++thread) {
    const std::string name = thread == 1 ? "main" : StrCat("thread ", thread);
    out += StrCat(",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": ", thread,
                  ", \"args\": {\"name\": ", JsonString(name), "}}");
  }
  for (const Event* event : sorted) {
    const uint64_t begin = event->begin_ns > origin_ns_ ? event->begin_ns - origin_ns_ : 0;
    const uint64_t duration = event->end_ns > event->begin_ns ? event->end_ns - event->begin_ns : 0;
    out += StrCat(",\n{\"ph\": \"X\", \"cat\": ", JsonString(event->category), ", \"name\": ",
                  JsonString(event->name), ", \"pid\": 1, \"tid\": ", event->thread, ", \"ts\": ",
                  Microseconds(begin), ", \"dur\": ", Microseconds(duration), ", \"args\": ", event->args, "}");
  }
  out += "\n]}\n";
  const bool written = std::fwrite(out.data(), 1, out.size(), file_) == out.size();
  const int error = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!written || !closed) {
    return InvalidArgumentError("--trace: cannot write '", path_, "': ", std::strerror(written ? errno : error));
  }
  return OkStatus();
}

}  // namespace strata::tools
