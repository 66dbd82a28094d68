// ChromeTrace: events from several threads at once get one small thread id
// per thread and the file says which is which; strings are escaped so the
// file stays valid JSON whatever a module names things; a path that cannot be
// written fails before anything runs. (The lit tests check whole runs.)
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tools/common/chrome_trace.h"
#include "tools/common/file_io.h"
#include "tools/common/numpy_io.h"
#include "tools/common/tensor_compare.h"
#include "tools/common/tensor_text.h"
#include "tools/common/tensor_values.h"

namespace strata::tools {
namespace {

std::string TempPath(const char* name) { return StrCat("/tmp/strata_chrome_trace_test_", getpid(), "_", name); }

std::string ReadText(const std::string& path) {
  StatusOr<std::vector<uint8_t>> bytes = ReadFile(path);
  REQUIRE(bytes.ok());
  return std::string(bytes->begin(), bytes->end());
}

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST_CASE("events from several threads get one thread id each") {
  const std::string path = TempPath("threads.json");
  auto trace = ChromeTrace::Create(path, "test");
  REQUIRE(trace.ok());
  constexpr int kThreads = 4, kEvents = 100;
  const uint64_t start = Tracer::Now();
  (*trace)->Record({"main", "first", start, start + 1500, {}});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&trace, t] {
      for (int i = 0; i < kEvents; ++i) {
        const TraceArg args[] = {{"thread", int64_t{t}}, {"index", int64_t{i}}};
        const uint64_t now = Tracer::Now();
        (*trace)->Record({"worker", "step", now, now, args});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  REQUIRE((*trace)->Write().ok());
  const std::string json = ReadText(path);
  std::remove(path.c_str());
  CHECK(json.rfind("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", 0) == 0);
  CHECK(Count(json, "\"ph\": \"X\"") == 1 + kThreads * kEvents);
  CHECK(Count(json, "\"name\": \"thread_name\"") == 1 + kThreads);
  CHECK(Count(json, "\"tid\": 1, \"args\": {\"name\": \"main\"}") == 1);
  for (int t = 2; t <= 1 + kThreads; ++t) {
    CHECK(Count(json, StrCat("\"tid\": ", t, ", \"args\": {\"name\": \"thread ", t, "\"}")) == 1);
    CHECK(Count(json, StrCat("\"tid\": ", t, ", \"ts\"")) == kEvents);
  }
  // 1500 ns is 1.500 us, exactly.
  CHECK(Count(json, "\"dur\": 1.500, \"args\": {}") == 1);
  CHECK(Count(json, "\"args\": {\"thread\": ") == kThreads * kEvents);
  CHECK(json.substr(json.size() - 4) == "\n]}\n");
}

TEST_CASE("strings are escaped into valid JSON") {
  const std::string path = TempPath("escape.json");
  auto trace = ChromeTrace::Create(path, "test");
  REQUIRE(trace.ok());
  const TraceArg args[] = {{"text", std::string_view("caf\xc3\xa9")}, {"bad", std::string_view("x\xff")}};
  (*trace)->Record({"cat", "a\"b\\c\nd\x01", 0, 0, args});
  REQUIRE((*trace)->Write().ok());
  const std::string json = ReadText(path);
  std::remove(path.c_str());
  CHECK(Count(json, "\"name\": \"a\\\"b\\\\c\\nd\\u0001\"") == 1);
  CHECK(Count(json, "\"text\": \"caf\xc3\xa9\"") == 1);  // well-formed UTF-8 stays
  CHECK(Count(json, "\"bad\": \"x\\u00ff\"") == 1);
  CHECK((*trace)->Write().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("a path that cannot be written fails at once, naming it") {
  auto trace = ChromeTrace::Create("/nonexistent-dir/trace.json", "test");
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().message() ==
        "--trace: cannot write '/nonexistent-dir/trace.json': No such file or directory");
}

}  // namespace
}  // namespace strata::tools
