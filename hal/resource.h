// Resource: what every object a device creates has in common.
//
// Buffers, executables, command buffers and semaphores are ref-counted
// RefObjects, so the VM holds them in ref registers and C++ holds them in
// Ref<T>. Each also records the *driver family* that created it: the set of
// drivers sharing one implementation of that object (cpu-sync and cpu-task
// share every CPU object; a future Vulkan driver has its own). A device accepts
// only resources of its own family and says so by name otherwise, instead of
// reinterpreting another driver's object.
//
// Thread safety: the family is fixed at creation; reading it is thread-safe.
#pragma once

#include "vm/base/ref.h"

namespace strata::hal {

// One static instance per family; its address is its identity.
struct DriverFamily {
  const char* name;  // "cpu", "vulkan", ...
};

class Resource : public RefObject {
 public:
  const DriverFamily* family() const { return family_; }

 protected:
  Resource(const RefTypeInfo* type, const DriverFamily* family) : RefObject(type), family_(family) {}

 private:
  const DriverFamily* family_;
};

}  // namespace strata::hal
