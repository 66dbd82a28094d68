#include "vm/base/status.h"

#include <charconv>
#include <cstdio>

namespace strata {
namespace status_internal {

namespace {
template <typename T>
void AppendDigits(std::string& out, T value, int base) {
  char digits[24];
  auto end = std::to_chars(digits, digits + sizeof(digits), value, base).ptr;
  out.append(digits, end);
}
}  // namespace

void AppendHex(std::string& out, unsigned long long value) { AppendDigits(out, value, 16); }
void AppendSigned(std::string& out, long long value) { AppendDigits(out, value, 10); }
void AppendUnsigned(std::string& out, unsigned long long value) { AppendDigits(out, value, 10); }

void AppendFloat(std::string& out, double value) {
  char digits[32];
  int length = std::snprintf(digits, sizeof(digits), "%g", value);
  out.append(digits, length > 0 ? static_cast<size_t>(length) : 0);
}

}  // namespace status_internal

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kIncompatible: return "INCOMPATIBLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) {
    state_.reset(new State{code, std::move(message), {}});
  }
}

Status::Status(const Status& other)
    : state_(other.state_ ? new State(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    state_.reset(other.state_ ? new State(*other.state_) : nullptr);
  }
  return *this;
}

void Status::StateDeleter::operator()(State* state) const { delete state; }

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

const std::vector<std::string>& Status::backtrace() const {
  static const std::vector<std::string> kEmpty;
  return state_ ? state_->backtrace : kEmpty;
}

Status& Status::AddFrame(std::string frame) {
  if (state_) state_->backtrace.push_back(std::move(frame));
  return *this;
}

#if !STRATA_STATUS_MESSAGES
__attribute__((noinline, cold)) Status CodeOnlyStatus(StatusCode code) { return Status(code, std::string()); }
#endif

void Status::Prepend(const std::string& prefix) { state_->message.insert(0, prefix); }

std::string Status::ToString() const {
  if (!state_) return "OK";
  std::string out = StrCat(StatusCodeName(state_->code), ": ", state_->message);
  for (const std::string& frame : state_->backtrace) out += "\n  at " + frame;
  return out;
}

}  // namespace strata
