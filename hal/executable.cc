#include "hal/executable.h"

namespace strata::hal {

const RefTypeInfo Executable::kType = {"hal.executable"};

Executable::Executable(const DriverFamily* family, std::string name, std::string format,
                       std::vector<EntryPointInfo> entry_points)
    : Resource(&kType, family),
      name_(std::move(name)),
      format_(std::move(format)),
      entry_points_(std::move(entry_points)) {}

StatusOr<uint32_t> Executable::LookupEntryPoint(std::string_view name) const {
  for (uint32_t i = 0; i < entry_points_.size(); ++i) {
    if (entry_points_[i].name == name) return i;
  }
  return NotFoundError("executable '", name_, "' has no entry point '", name, "' (it has: ",
                       JoinNames(entry_points_, [](const EntryPointInfo& e) { return e.name; }), ")");
}

}  // namespace strata::hal
