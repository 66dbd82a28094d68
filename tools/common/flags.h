// flags: how the runtime tools read their command lines.
//
// Flags are --name=value and switches --name; a '_' in the name reads as '-',
// so IREE's spellings work too (--expected_output, --print_statistics).
// Values that must be numbers are checked, and a bad one is refused naming
// the flag and what was expected.
//
// Thread safety: free functions; no shared state.
#pragma once

#include <cstdint>
#include <string>

#include "vm/base/status.h"

namespace strata::tools {

// True when `arg` is --name=VALUE; sets *value.
bool ParseFlag(const std::string& arg, const char* name, std::string* value);
// True when `arg` is the switch --name.
bool ParseSwitch(const std::string& arg, const char* name);
// A non-negative decimal integer, for --name=`text`.
StatusOr<uint64_t> ParseCount(const char* name, const std::string& text);
// A finite non-negative number, for --name=`text`.
StatusOr<double> ParseNonNegative(const char* name, const std::string& text);

}  // namespace strata::tools
