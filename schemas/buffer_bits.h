// Memory types and buffer usages as the module and the runtime number them:
// the compiler writes these bits into host programs (hal.allocator.allocate,
// hal.allocator.import) and the HAL reads them (hal/buffer.h).
#pragma once

#include <cstdint>

namespace strata::buffer_bits {

// Memory types.
inline constexpr uint32_t kDeviceLocal = 1u << 0;   // fastest for the device to access
inline constexpr uint32_t kHostVisible = 1u << 1;   // the host can map it
inline constexpr uint32_t kHostCoherent = 1u << 2;  // host and device see each other's writes without flushes
inline constexpr uint32_t kAllMemoryTypes = kDeviceLocal | kHostVisible | kHostCoherent;

// Usages: what a buffer may be used for.
inline constexpr uint32_t kTransferSource = 1u << 0;   // copy source
inline constexpr uint32_t kTransferTarget = 1u << 1;   // fill, copy and update target
inline constexpr uint32_t kDispatchStorage = 1u << 2;  // dispatch binding
inline constexpr uint32_t kMapping = 1u << 3;          // host mapping
inline constexpr uint32_t kAllUsages = kTransferSource | kTransferTarget | kDispatchStorage | kMapping;

}  // namespace strata::buffer_bits
