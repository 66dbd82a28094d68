#include "drivers/stream/stream_context.h"

namespace strata::stream {

Status StreamContext::failure() const {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return failure_;
}

void StreamContext::Fail(const Status& status) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failure_.ok()) failure_ = status;
}

std::string Gibibytes(uint64_t bytes) {
  const uint64_t tenths = bytes * 10 / (uint64_t{1} << 30);
  return StrCat(tenths / 10, ".", tenths % 10, " GiB");
}

StatusOr<int> DeviceIndex(const std::string& driver, const std::string& device,
                          const std::vector<std::string>& devices) {
  if (device.empty()) return 0;
  bool digits = device.size() <= 9;
  for (char c : device) digits = digits && c >= '0' && c <= '9';
  if (!digits || std::stoul(device) >= devices.size()) {
    std::string names;
    for (const std::string& name : devices) names += StrCat(names.empty() ? "" : ", ", name);
    return NotFoundError(driver, ": no device with index '", device, "' (devices: ", names, ")");
  }
  return static_cast<int>(std::stoul(device));
}

}  // namespace strata::stream
