// Element types of tensors as the module and the runtime number them: the
// compiler writes these codes into host programs (hal.buffer_view.create,
// hal.buffer_view.assert) and the HAL reads them (hal/buffer_view.h).
//
// A code is (kind << 8) | bits: kind 1 signed integer, 2 unsigned integer,
// 3 IEEE float, 4 bfloat, 5 boolean stored one byte per element.
#pragma once

#include <cstdint>

namespace strata {

enum class ElementType : uint32_t {
  kInt8 = 0x0108,
  kInt16 = 0x0110,
  kInt32 = 0x0120,
  kInt64 = 0x0140,
  kUint8 = 0x0208,
  kUint16 = 0x0210,
  kUint32 = 0x0220,
  kUint64 = 0x0240,
  kFloat16 = 0x0310,
  kFloat32 = 0x0320,
  kFloat64 = 0x0340,
  kBFloat16 = 0x0410,
  kBool8 = 0x0508,  // one byte per element, 0 or 1
};

}  // namespace strata
