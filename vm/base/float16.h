// Conversions between double and the 16-bit float formats f16 (IEEE binary16)
// and bf16, rounding to nearest-even: shared by the tools (literals, .npy) and
// the CPU drivers (the half-precision helpers LLVM calls on CPUs without
// native conversions).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace strata {

// Rounds `value` to nearest-even in a binary format with `exp_bits` exponent
// and `mant_bits` mantissa bits (at most 16 in all). *tie says whether
// `value` lay exactly halfway between two representable values.
inline uint16_t NarrowFloat(double value, int exp_bits, int mant_bits, bool* tie) {
  *tie = false;
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint16_t sign = (bits >> 63) ? static_cast<uint16_t>(1u << (exp_bits + mant_bits)) : 0;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint16_t exp_mask = static_cast<uint16_t>(((1u << exp_bits) - 1) << mant_bits);
  const int double_exp = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (double_exp == 0x7FF) {  // inf, or NaN made quiet
    return sign | exp_mask | (fraction ? static_cast<uint16_t>(1u << (mant_bits - 1)) : 0);
  }
  // Zero, or a double subnormal: far below half the smallest subnormal here.
  if (double_exp == 0) return sign;
  const int exp = double_exp - 1023;
  const uint64_t significand = (uint64_t{1} << 52) | fraction;
  const bool normal = exp >= 1 - bias;
  // Bits of the significand that do not fit; subnormals lose more.
  const int shift = 52 - mant_bits + (normal ? 0 : 1 - bias - exp);
  if (shift >= 64) return sign;
  uint64_t q = significand >> shift;
  const uint64_t rest = significand & ((uint64_t{1} << shift) - 1);
  const uint64_t halfway = uint64_t{1} << (shift - 1);
  *tie = rest == halfway;
  if (rest > halfway || (rest == halfway && (q & 1))) ++q;
  if (!normal) return static_cast<uint16_t>(sign | q);  // q == 1 << mant_bits: the smallest normal
  int biased = exp + bias;
  if (q == (uint64_t{2} << mant_bits)) {
    q >>= 1;
    ++biased;
  }
  if (biased >= (1 << exp_bits) - 1) return sign | exp_mask;  // overflow: infinity
  return static_cast<uint16_t>(sign | (biased << mant_bits) | (q & ((1u << mant_bits) - 1)));
}

inline double WidenFloat(uint16_t bits, int exp_bits, int mant_bits) {
  const bool negative = (bits >> (exp_bits + mant_bits)) & 1;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int exp = (bits >> mant_bits) & ((1 << exp_bits) - 1);
  const uint32_t mantissa = bits & ((1u << mant_bits) - 1);
  double v;
  if (exp == (1 << exp_bits) - 1) {
    v = mantissa ? std::nan("") : INFINITY;
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mantissa), 1 - bias - mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(mantissa | (1u << mant_bits)), exp - bias - mant_bits);
  }
  return negative ? -v : v;
}

inline constexpr int kF16Exp = 5, kF16Mant = 10, kBF16Exp = 8, kBF16Mant = 7;

inline uint16_t DoubleToF16(double value) {
  bool tie;
  return NarrowFloat(value, kF16Exp, kF16Mant, &tie);
}
inline double F16ToDouble(uint16_t bits) { return WidenFloat(bits, kF16Exp, kF16Mant); }
inline uint16_t DoubleToBF16(double value) {
  bool tie;
  return NarrowFloat(value, kBF16Exp, kBF16Mant, &tie);
}
inline double BF16ToDouble(uint16_t bits) { return WidenFloat(bits, kBF16Exp, kBF16Mant); }

}  // namespace strata
