// file_io: whole files, as the runtime tools read and write them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vm/base/status.h"

namespace strata::tools {

// Whole files; errors name the path and strerror.
StatusOr<std::vector<uint8_t>> ReadFile(const std::string& path);
Status WriteFile(const std::string& path, std::span<const uint8_t> bytes);


// Bytes of physical memory here: the most one file or tensor could ever take.
uint64_t PhysicalMemoryBytes();

}  // namespace strata::tools
