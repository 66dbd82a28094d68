// numpy_io: NumPy .npy files as the runtime tools read and write them.
//
// NumPy files: reading accepts format versions 1, 2 and 3, little-endian (or
// byte-order-free) dtypes in C order; fortran_order, big-endian data and
// other dtypes are refused with a message saying so. Writing produces
// version 1 with the result's own dtype (<f4, <f2, <f8, |b1, |i1, <i2, <i4,
// <i8, |u1, <u2, <u4, <u8). bf16 has no NumPy dtype: it is written as <u2
// holding the raw bits (view it with ml_dtypes.bfloat16), and reads back as
// ui16; a ui16 expected output is compared bit for bit against a bf16 result.
//
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tools/common/tensor.h"

namespace strata::tools {

// Whether `bytes` begin with the .npy magic string.
bool IsNpy(std::span<const uint8_t> bytes);
StatusOr<Tensor> ParseNpy(std::span<const uint8_t> bytes);
StatusOr<Tensor> ReadNpyFile(const std::string& path);
std::vector<uint8_t> EncodeNpy(const Tensor& tensor);
Status WriteNpyFile(const std::string& path, const Tensor& tensor);

}  // namespace strata::tools
