// strata.h: version and status.
#include <cstring>

#include "drivers/runtime/api_internal.h"

namespace strata::api {
namespace {

static_assert(static_cast<int>(StatusCode::kInvalidArgument) == STRATA_INVALID_ARGUMENT &&
                  static_cast<int>(StatusCode::kNotFound) == STRATA_NOT_FOUND &&
                  static_cast<int>(StatusCode::kOutOfRange) == STRATA_OUT_OF_RANGE &&
                  static_cast<int>(StatusCode::kFailedPrecondition) == STRATA_FAILED_PRECONDITION &&
                  static_cast<int>(StatusCode::kResourceExhausted) == STRATA_RESOURCE_EXHAUSTED &&
                  static_cast<int>(StatusCode::kDeadlineExceeded) == STRATA_DEADLINE_EXCEEDED &&
                  static_cast<int>(StatusCode::kAborted) == STRATA_ABORTED &&
                  static_cast<int>(StatusCode::kUnimplemented) == STRATA_UNIMPLEMENTED &&
                  static_cast<int>(StatusCode::kUnavailable) == STRATA_UNAVAILABLE &&
                  static_cast<int>(StatusCode::kIncompatible) == STRATA_INCOMPATIBLE &&
                  static_cast<int>(StatusCode::kDataLoss) == STRATA_DATA_LOSS &&
                  static_cast<int>(StatusCode::kInternal) == STRATA_INTERNAL &&
                  static_cast<int>(StatusCode::kPermissionDenied) == STRATA_PERMISSION_DENIED,
              "strata_code mirrors strata::StatusCode");

// Handed out when there is no memory for a status of its own; never freed.
strata_status out_of_memory_status{STRATA_RESOURCE_EXHAUSTED, std::string()};

}  // namespace

strata_status* ToCStatus(const Status& status) {
  if (status.ok()) return nullptr;
#if __cpp_exceptions
  try {
#endif
    std::unique_ptr<strata_status> out(new (std::nothrow) strata_status{static_cast<strata_code>(status.code()), {}});
    if (!out) return &out_of_memory_status;
    out->message = status.message();
    for (const std::string& frame : status.backtrace()) out->message += "\n  at " + frame;
    return out.release();
#if __cpp_exceptions
  } catch (...) {
    return &out_of_memory_status;
  }
#endif
}

}  // namespace strata::api

extern "C" {

const char* strata_version(void) { return STRATA_VERSION_STRING; }

strata_code strata_status_code(const strata_status* status) { return status ? status->code : STRATA_OK; }

const char* strata_status_message(const strata_status* status) {
  if (!status) return "";
  if (status == &strata::api::out_of_memory_status) return "out of memory";
  return status->message.c_str();
}

const char* strata_code_name(strata_code code) {
  if (code < STRATA_OK || code > STRATA_PERMISSION_DENIED) return "UNKNOWN";
  return strata::StatusCodeName(static_cast<strata::StatusCode>(code));
}

void strata_status_free(strata_status* status) {
  if (status != &strata::api::out_of_memory_status) delete status;
}

}  // extern "C"
