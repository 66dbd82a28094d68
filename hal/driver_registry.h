// DriverRegistry: the drivers a program can create devices from, by name.
//
// A driver registers a name ("cpu-task"), a one-line description and a
// factory. Devices are created from a device spec, the driver name optionally
// followed by options:
//
//   cpu-sync
//   cpu-task?threads=2
//   vulkan?device=1&validation=1
//   vulkan://1                      (short for vulkan?device=1)
//
// The registry parses the spec (DeviceSpec) and hands the options to the
// factory, which rejects any option it does not know, naming those it does. An
// unknown driver name fails with the list of registered drivers. A driver that
// is built in but cannot run here (its GPU or runtime library is absent)
// fails creation with UNAVAILABLE and a message saying what is missing, so
// callers (the conformance suite, run-module) can skip it with one clear line.
//
// drivers/registry.h offers the registry with every driver of the build.
//
// Thread safety: every method is thread-safe; factories may be called
// concurrently.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hal/device.h"
#include "vm/base/ref.h"
#include "vm/base/status.h"

namespace strata::hal {

// A parsed device spec: "driver?key=value&key=value", where "driver://X"
// stands for "driver?device=X".
class DeviceSpec {
 public:
  static StatusOr<DeviceSpec> Parse(std::string_view spec);

  const std::string& spec() const { return spec_; }
  const std::string& driver() const { return driver_; }
  const std::vector<std::pair<std::string, std::string>>& options() const { return options_; }

  // Fails naming the first option whose key is not in `known`.
  Status CheckKnownOptions(std::initializer_list<std::string_view> known) const;
  // The option's value as an integer in [min, max], or `default_value` when
  // absent.
  StatusOr<int64_t> GetInt(std::string_view key, int64_t default_value, int64_t min, int64_t max) const;
  // The option's value, one of `allowed`, or `default_value` when absent.
  StatusOr<std::string_view> GetChoice(std::string_view key, std::string_view default_value,
                                       std::initializer_list<std::string_view> allowed) const;

 private:
  std::string spec_;
  std::string driver_;
  std::vector<std::pair<std::string, std::string>> options_;
};

using DeviceFactory = std::function<StatusOr<Ref<Device>>(const DeviceSpec& spec)>;

struct DriverInfo {
  std::string name;
  std::string description;
  DeviceFactory factory;
};

class DriverRegistry {
 public:
  // Fails if a driver of that name is already registered.
  Status Register(DriverInfo driver);
  // Names and descriptions, in registration order.
  std::vector<std::pair<std::string, std::string>> List() const;
  StatusOr<Ref<Device>> CreateDevice(std::string_view spec) const;

 private:
  mutable std::mutex mutex_;
  std::vector<DriverInfo> drivers_;
};

}  // namespace strata::hal
