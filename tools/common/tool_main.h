// The shared ending of every runtime tool: run, flush results, and report a
// failure as one line (plus the VM backtrace) on stderr with exit status 1.
#pragma once

#include <cstdio>

#include "vm/base/status.h"

namespace strata::tools {

inline int ToolMain(const char* tool, Status (*run)(int, char**), int argc, char** argv) {
  Status status = run(argc, argv);
  std::fflush(stdout);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", tool, status.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace strata::tools
