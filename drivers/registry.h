// The driver registry of this build: every driver compiled in, registered on
// first use. Tools and tests create devices from it by spec
// ("cpu-task?threads=2"); an embedder with drivers of its own can fill a
// hal::DriverRegistry of its own instead.
//
// A new driver adds one Register call to registry.cc (under its build
// option), and the conformance suite and every tool pick it up.
//
// Thread safety: the registry is created once, thread-safely, and is itself
// thread-safe.
#pragma once

#include "hal/driver_registry.h"

namespace strata::drivers {

hal::DriverRegistry& DefaultRegistry();

}  // namespace strata::drivers
