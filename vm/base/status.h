// Status: how every fallible call in Strata reports failure.
//
// A Status is OK or carries a code, a message that names the problem with the
// expected and actual values, and, for failures inside the VM, a backtrace of
// frames ("module.function@pc (file:line:col)"). An OK status holds no memory,
// so returning one costs a null pointer. Nothing in the runtime aborts on bad
// input: failures travel up as values and every caller forwards them.
//
// StatusOr<T> holds either a T or a failed Status.
//
// Thread safety: a Status is a value; distinct Status objects may be used from
// distinct threads freely.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

// STRATA_STATUS_MESSAGES=0 (cmake -DSTRATA_STATUS_MESSAGES=OFF) keeps the
// codes of errors and drops their messages, for embeddings where every byte
// counts: the error constructors then format nothing.
#ifndef STRATA_STATUS_MESSAGES
#define STRATA_STATUS_MESSAGES 1
#endif

namespace strata {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,     // bad input: wrong type, shape, count, malformed data
  kNotFound,            // missing file, function, import, device
  kOutOfRange,          // index or byte range past the end
  kFailedPrecondition,  // object in the wrong state (released, read-only)
  kResourceExhausted,   // out of memory, VM stack depth, step budget
  kDeadlineExceeded,    // a deadline or timeout passed
  kAborted,             // the program asked to fail (vm.fail)
  kUnimplemented,       // a valid feature this build does not have
  kUnavailable,         // a driver present in the build but not on this machine
  kIncompatible,        // a module newer than, or built for other than, this runtime
  kDataLoss,            // truncated or corrupt file
  kInternal,            // a bug in Strata
  kPermissionDenied,    // a module not signed by a trusted key
};

const char* StatusCodeName(StatusCode code);

template <typename... Args>
std::string StrCat(const Args&... args);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message);
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  const std::string& message() const;
  const std::vector<std::string>& backtrace() const;

  // Appends one frame to the backtrace (innermost first).
  Status& AddFrame(std::string frame);
  // Prefixes the message with context, its parts concatenated as by StrCat:
  // status.Annotate("loading '", path, "': "). Without messages
  // (STRATA_STATUS_MESSAGES=0) it is a macro that evaluates no part.
  template <typename... Args>
  Status& Annotate(const Args&... parts);

  // "ABORTED: message" followed by one "  at frame" line per frame.
  std::string ToString() const;

  // What Annotate becomes without messages.
  Status& Annotated() { return *this; }

  // Marks the status as seen when the caller deliberately drops it.
  void IgnoreError() const {}

 private:
  void Prepend(const std::string& prefix);

  struct State {
    StatusCode code;
    std::string message;
    std::vector<std::string> backtrace;
  };
  // Deletes out of line, so that destroying an OK status (every call that
  // succeeds returns one) is a test of the pointer and no call.
  struct StateDeleter {
    void operator()(State* state) const;
  };
  std::unique_ptr<State, StateDeleter> state_;
};

inline Status OkStatus() { return Status(); }

// A number that StrCat prints in hexadecimal (without a "0x"):
// StrCat("0x", Hex(255)) == "0xff".
struct Hex {
  explicit Hex(unsigned long long value) : value(value) {}
  unsigned long long value;
};

namespace status_internal {
void AppendHex(std::string& out, unsigned long long value);
void AppendSigned(std::string& out, long long value);
void AppendUnsigned(std::string& out, unsigned long long value);
// As printf's %g: six significant digits.
void AppendFloat(std::string& out, double value);

inline void Append(std::string& out, std::string_view text) { out.append(text); }
inline void Append(std::string& out, const char* text) { out.append(text ? text : "(null)"); }
inline void Append(std::string& out, char c) { out.push_back(c); }
inline void Append(std::string& out, Hex hex) { AppendHex(out, hex.value); }
// Exactly bool, integers, floats and enums: a pointer or an iostream
// manipulator does not compile.
template <typename T>
  requires(std::is_arithmetic_v<T> || std::is_enum_v<T>)
void Append(std::string& out, T value) {
  if constexpr (std::is_same_v<T, bool>) {
    out.push_back(value ? '1' : '0');
  } else if constexpr (std::is_floating_point_v<T>) {
    AppendFloat(out, value);
  } else if constexpr (std::is_enum_v<T> || std::is_signed_v<T>) {
    AppendSigned(out, static_cast<long long>(value));
  } else {
    AppendUnsigned(out, value);
  }
}
}  // namespace status_internal

// Concatenates strings, characters and numbers (integers in decimal, floats
// as %g): StrCat("expected ", 2, " inputs, got ", n). No iostreams.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (status_internal::Append(out, args), ...);
  return out;
}

template <typename... Args>
Status& Status::Annotate(const Args&... parts) {
  if (state_) Prepend(StrCat(parts...));
  return *this;
}

// "a, b, c" (or "none" for no items): each item of `items` as `name(item)`
// gives it, for a message. Called among an error's arguments, it does not
// run when there are no messages.
template <typename Items, typename Name>
std::string JoinNames(const Items& items, Name name, std::string_view separator = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    status_internal::Append(out, name(item));
  }
  return out.empty() ? std::string("none") : out;
}

#define STRATA_STATUS_CTOR(Name, Code)                      \
  template <typename... Args>                               \
  Status Name(const Args&... args) {                        \
    return Status(StatusCode::Code, StrCat(args...));       \
  }
STRATA_STATUS_CTOR(InvalidArgumentError, kInvalidArgument)
STRATA_STATUS_CTOR(NotFoundError, kNotFound)
STRATA_STATUS_CTOR(OutOfRangeError, kOutOfRange)
STRATA_STATUS_CTOR(FailedPreconditionError, kFailedPrecondition)
STRATA_STATUS_CTOR(ResourceExhaustedError, kResourceExhausted)
STRATA_STATUS_CTOR(DeadlineExceededError, kDeadlineExceeded)
STRATA_STATUS_CTOR(AbortedError, kAborted)
STRATA_STATUS_CTOR(UnimplementedError, kUnimplemented)
STRATA_STATUS_CTOR(UnavailableError, kUnavailable)
STRATA_STATUS_CTOR(IncompatibleError, kIncompatible)
STRATA_STATUS_CTOR(DataLossError, kDataLoss)
STRATA_STATUS_CTOR(InternalError, kInternal)
STRATA_STATUS_CTOR(PermissionDeniedError, kPermissionDenied)
#undef STRATA_STATUS_CTOR

#if !STRATA_STATUS_MESSAGES
// Without messages an error is its code: the constructors and Annotate become
// macros that do not evaluate their arguments, so nothing is formatted and no
// message text is compiled in.
Status CodeOnlyStatus(StatusCode code);
#define InvalidArgumentError(...) CodeOnlyStatus(::strata::StatusCode::kInvalidArgument)
#define NotFoundError(...) CodeOnlyStatus(::strata::StatusCode::kNotFound)
#define OutOfRangeError(...) CodeOnlyStatus(::strata::StatusCode::kOutOfRange)
#define FailedPreconditionError(...) CodeOnlyStatus(::strata::StatusCode::kFailedPrecondition)
#define ResourceExhaustedError(...) CodeOnlyStatus(::strata::StatusCode::kResourceExhausted)
#define DeadlineExceededError(...) CodeOnlyStatus(::strata::StatusCode::kDeadlineExceeded)
#define AbortedError(...) CodeOnlyStatus(::strata::StatusCode::kAborted)
#define UnimplementedError(...) CodeOnlyStatus(::strata::StatusCode::kUnimplemented)
#define UnavailableError(...) CodeOnlyStatus(::strata::StatusCode::kUnavailable)
#define IncompatibleError(...) CodeOnlyStatus(::strata::StatusCode::kIncompatible)
#define DataLossError(...) CodeOnlyStatus(::strata::StatusCode::kDataLoss)
#define InternalError(...) CodeOnlyStatus(::strata::StatusCode::kInternal)
#define PermissionDeniedError(...) CodeOnlyStatus(::strata::StatusCode::kPermissionDenied)
#define Annotate(...) Annotated()
#endif

// A value that only a message reads (an instruction's mnemonic passed down
// to name it): the value, or "" without messages, unevaluated.
#if STRATA_STATUS_MESSAGES
#define STRATA_FOR_MESSAGE(...) (__VA_ARGS__)
#else
#define STRATA_FOR_MESSAGE(...) ("")
#endif

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {}
  StatusOr(T value) : value_(std::move(value)) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

#define STRATA_CONCAT_INNER(a, b) a##b
#define STRATA_CONCAT(a, b) STRATA_CONCAT_INNER(a, b)

#define STRATA_RETURN_IF_ERROR(expr)            \
  do {                                          \
    ::strata::Status _strata_status = (expr);   \
    if (!_strata_status.ok()) return _strata_status; \
  } while (0)

#define STRATA_ASSIGN_OR_RETURN(lhs, expr)                                 \
  STRATA_ASSIGN_OR_RETURN_IMPL(STRATA_CONCAT(_strata_or_, __LINE__), lhs, expr)
#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

}  // namespace strata
