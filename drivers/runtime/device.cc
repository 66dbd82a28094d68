// strata.h: instances and devices, on the build's driver registry.
#include <string>

#include "drivers/runtime/api_internal.h"
#include "drivers/registry.h"

using strata::InvalidArgumentError;
using strata::OkStatus;
using strata::Status;
using strata::api::Guard;

extern "C" {

strata_status* strata_instance_create(strata_instance** out_instance) {
  return Guard([&]() -> Status {
    if (!out_instance) return InvalidArgumentError("strata_instance_create: out_instance is null");
    auto instance = std::make_unique<strata_instance>();
    for (auto& [name, description] : strata::drivers::DefaultRegistry().List()) {
      instance->drivers.emplace_back(name, description);
    }
    *out_instance = instance.release();
    return OkStatus();
  });
}

void strata_instance_retain(strata_instance* instance) { strata::api::RetainObject(instance); }
void strata_instance_release(strata_instance* instance) { strata::api::ReleaseObject(instance); }

size_t strata_instance_driver_count(const strata_instance* instance) {
  return instance ? instance->drivers.size() : 0;
}

const char* strata_instance_driver_name(const strata_instance* instance, size_t index) {
  return instance && index < instance->drivers.size() ? instance->drivers[index].first.c_str() : nullptr;
}

const char* strata_instance_driver_description(const strata_instance* instance, size_t index) {
  return instance && index < instance->drivers.size() ? instance->drivers[index].second.c_str() : nullptr;
}

strata_status* strata_device_open(strata_instance* instance, const char* driver, const char* options,
                                  strata_device** out_device) {
  return Guard([&]() -> Status {
    if (!instance) return InvalidArgumentError("strata_device_open: instance is null");
    if (!driver) return InvalidArgumentError("strata_device_open: driver is null");
    if (!out_device) return InvalidArgumentError("strata_device_open: out_device is null");
    std::string spec = driver;
    if (options && *options) {
      if (spec.find('?') != std::string::npos) {
        return InvalidArgumentError("strata_device_open: driver '", driver, "' already carries options and '",
                                    options, "' gives more; pass the options in one place");
      }
      spec += "?";
      spec += options;
    }
    STRATA_ASSIGN_OR_RETURN(strata::Ref<strata::hal::Device> device,
                            strata::drivers::DefaultRegistry().CreateDevice(spec));
    auto* out = new strata_device();
    out->device = std::move(device);
    *out_device = out;
    return OkStatus();
  });
}

void strata_device_retain(strata_device* device) { strata::api::RetainObject(device); }
void strata_device_release(strata_device* device) { strata::api::ReleaseObject(device); }

const char* strata_device_name(const strata_device* device) {
  return device ? device->device->info().name.c_str() : "";
}

const char* strata_device_description(const strata_device* device) {
  return device ? device->device->info().description.c_str() : "";
}

}  // extern "C"
