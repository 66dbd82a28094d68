// The HAL test binary: conformance suite, driver registry and `hal` module.
// Before the cases run it lists the drivers under test, and says once why any
// registered driver is skipped. --hal-driver=NAME runs the cases on that
// driver alone; the other arguments are doctest's.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "tests/hal/hal_test_util.h"

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    constexpr const char* kFlag = "--hal-driver=";
    if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) != 0) {
      args.push_back(argv[i]);
      continue;
    }
    strata::Status status = strata::testing::SetConformanceDriver(argv[i] + std::strlen(kFlag));
    if (!status.ok()) {
      std::fprintf(stderr, "hal_tests: %s\n", status.ToString().c_str());
      return 2;
    }
  }
  std::string drivers;
  for (const std::string& driver : strata::testing::ConformanceDrivers()) {
    drivers += (drivers.empty() ? "" : ", ") + driver;
  }
  std::printf("hal conformance: drivers under test: %s\n", drivers.empty() ? "none" : drivers.c_str());
  doctest::Context context(static_cast<int>(args.size()), args.data());
  return context.run();
}
