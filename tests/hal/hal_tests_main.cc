// The HAL test binary: conformance suite, driver registry and `hal` module.
// Before the cases run it lists the drivers under test, and says once why any
// registered driver is skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "tests/hal/hal_test_util.h"

int main(int argc, char** argv) {
  std::string drivers;
  for (const std::string& driver : strata::testing::ConformanceDrivers()) {
    drivers += (drivers.empty() ? "" : ", ") + driver;
  }
  std::printf("hal conformance: drivers under test: %s\n", drivers.empty() ? "none" : drivers.c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
