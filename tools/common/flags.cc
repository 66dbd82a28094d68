#include "tools/common/flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace strata::tools {

namespace {

// The name of --name or --name=value, with '_' read as '-'.
std::string FlagName(const std::string& arg, size_t end) {
  std::string name = arg.substr(2, end - 2);
  for (char& c : name) c = c == '_' ? '-' : c;
  return name;
}

}  // namespace

bool ParseFlag(const std::string& arg, const char* name, std::string* value) {
  const size_t eq = arg.find('=');
  if (arg.rfind("--", 0) != 0 || eq == std::string::npos || FlagName(arg, eq) != name) return false;
  *value = arg.substr(eq + 1);
  return true;
}

bool ParseSwitch(const std::string& arg, const char* name) {
  return arg.rfind("--", 0) == 0 && arg.find('=') == std::string::npos && FlagName(arg, arg.size()) == name;
}

StatusOr<uint64_t> ParseCount(const char* name, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || text[0] == '-') {
    return InvalidArgumentError("--", name, "='", text, "': expected a non-negative integer");
  }
  return static_cast<uint64_t>(v);
}

StatusOr<double> ParseNonNegative(const char* name, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v) || v < 0) {
    return InvalidArgumentError("--", name, "='", text, "': expected a non-negative number");
  }
  return v;
}

}  // namespace strata::tools
