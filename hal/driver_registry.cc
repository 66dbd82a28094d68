#include "hal/driver_registry.h"

#include <cerrno>
#include <cstdlib>

namespace strata::hal {

StatusOr<DeviceSpec> DeviceSpec::Parse(std::string_view text) {
  DeviceSpec spec;
  spec.spec_ = std::string(text);
  size_t question = text.find('?');
  spec.driver_ = std::string(text.substr(0, question));
  // "driver://DEVICE" is short for "driver?device=DEVICE".
  if (size_t scheme = spec.driver_.find("://"); scheme != std::string::npos) {
    std::string device = spec.driver_.substr(scheme + 3);
    spec.driver_.resize(scheme);
    if (device.empty()) {
      return InvalidArgumentError("device '", text, "': expected a device after '://', e.g. vulkan://1");
    }
    spec.options_.emplace_back("device", std::move(device));
  }
  if (spec.driver_.empty()) {
    return InvalidArgumentError("device '", text, "': expected a driver name, e.g. cpu-task?threads=2");
  }
  if (question == std::string_view::npos) return spec;
  std::string_view rest = text.substr(question + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view option = rest.substr(0, amp);
    size_t eq = option.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgumentError("device '", text, "': option '", option, "' is not of the form key=value");
    }
    std::string key(option.substr(0, eq));
    for (const auto& existing : spec.options_) {
      if (existing.first == key) {
        return InvalidArgumentError("device '", text, "': option '", key, "' is given twice");
      }
    }
    spec.options_.emplace_back(std::move(key), std::string(option.substr(eq + 1)));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return spec;
}

Status DeviceSpec::CheckKnownOptions(std::initializer_list<std::string_view> known) const {
  for (const auto& [key, value] : options_) {
    bool found = false;
    for (std::string_view k : known) found |= k == key;
    if (!found) {
      return InvalidArgumentError("device '", spec_, "': driver '", driver_, "' has no option '", key,
                                  "' (options: ", JoinNames(known, [](std::string_view k) { return k; }), ")");
    }
  }
  return OkStatus();
}

StatusOr<int64_t> DeviceSpec::GetInt(std::string_view key, int64_t default_value, int64_t min,
                                     int64_t max) const {
  for (const auto& [k, value] : options_) {
    if (k != key) continue;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || errno == ERANGE || v < min || v > max) {
      return InvalidArgumentError("device '", spec_, "': option ", key, "='", value,
                                  "' must be an integer in [", min, ", ", max, "]");
    }
    return static_cast<int64_t>(v);
  }
  return default_value;
}

StatusOr<std::string_view> DeviceSpec::GetChoice(std::string_view key, std::string_view default_value,
                                                 std::initializer_list<std::string_view> allowed) const {
  for (const auto& [k, value] : options_) {
    if (k != key) continue;
    for (std::string_view choice : allowed) {
      if (value == choice) return choice;
    }
    std::string names;
    for (std::string_view choice : allowed) names += StrCat(names.empty() ? "" : ", ", choice);
    return InvalidArgumentError("device '", spec_, "': option ", key, "='", value, "' must be one of ", names);
  }
  return default_value;
}

Status DriverRegistry::Register(DriverInfo driver) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const DriverInfo& existing : drivers_) {
    if (existing.name == driver.name) {
      return InvalidArgumentError("driver '", driver.name, "' is already registered");
    }
  }
  drivers_.push_back(std::move(driver));
  return OkStatus();
}

std::vector<std::pair<std::string, std::string>> DriverRegistry::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const DriverInfo& driver : drivers_) out.emplace_back(driver.name, driver.description);
  return out;
}

StatusOr<Ref<Device>> DriverRegistry::CreateDevice(std::string_view text) const {
  STRATA_ASSIGN_OR_RETURN(DeviceSpec spec, DeviceSpec::Parse(text));
  DeviceFactory factory;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const DriverInfo& driver : drivers_) {
      if (driver.name == spec.driver()) factory = driver.factory;
    }
  }
  if (!factory) {
    return NotFoundError("no driver named '", spec.driver(), "' (available: ",
                         JoinNames(List(), [](const auto& driver) { return driver.first; }), ")");
  }
  // Factories run outside the lock: creating a device may take a while and may
  // itself consult the registry.
  return factory(spec);
}

}  // namespace strata::hal
