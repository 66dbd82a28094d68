// The test kernels (kernels/) as HAL executables: their CPU metadata and their
// preparation on a device. Shared by the conformance suite and the HAL
// benchmarks; no test framework here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hal/device.h"
#include "vm/status.h"

namespace strata::testing {

// The metadata FlatBuffer (schemas/cpu_executable.fbs) describing one entry
// point; `read_only` is empty or has one flag per binding; the executable
// requires `features` (names of schemas/cpu_features.def).
std::vector<uint8_t> CpuMetadata(const std::string& entry_point, uint32_t binding_count, uint32_t constant_count,
                                 std::vector<bool> read_only = {}, std::vector<std::string> features = {});

// Prepares test kernel `name` for `device`, in the first of the device's
// formats the kernels are built for, with metadata describing the kernel (as
// its .c file documents it). Returns null when the device runs none of those
// formats; fails for an unknown kernel or a failed preparation.
StatusOr<vm::Ref<hal::Executable>> PrepareTestKernelIfSupported(hal::Device& device, std::string_view name);

}  // namespace strata::testing
