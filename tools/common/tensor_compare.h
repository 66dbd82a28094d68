// tensor_compare: an expected tensor against an actual one.
//
// Comparison: floats match when |actual - expected| <= atol + rtol * |expected|
// (numpy.isclose), NaN matches NaN and infinities match themselves; integers
// and i1 must be equal. A mismatch names the first differing element's index.
//
#pragma once

#include <cstdint>
#include <string>

#include "tools/common/tensor.h"

namespace strata::tools {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

struct Comparison {
  bool match = false;
  uint64_t element_count = 0;
  uint64_t mismatch_count = 0;
  // Over the elements where both values are finite.
  double max_abs_diff = 0;
  // Why it does not match: "expected a tensor 2x3xf32, got 3x2xf32",
  // "element [0, 3]: expected 4, got 4.5 (|diff| 0.5 > atol 1e-06 + rtol 1e-05 * |expected|);
  // 1 of 6 elements differ". Empty on a match.
  std::string message;
};
Comparison CompareTensors(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance);

}  // namespace strata::tools
