#include "tools/common/tensor_compare.h"

#include <cmath>
#include <cstdio>

#include "tools/common/tensor_text.h"

namespace strata::tools {

namespace {

std::string DescribeKind(const Tensor& tensor) {
  return StrCat(tensor.scalar ? "a scalar " : "a tensor ", tensor.DescribeType());
}

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

}  // namespace

Comparison CompareTensors(const Tensor& expected, const Tensor& actual, const Tolerance& tolerance) {
  Comparison result;
  // A ui16 .npy (how bf16 is saved) compares with a bf16 result bit for bit.
  ElementType type = expected.element_type;
  if (type == ElementType::kUint16 && actual.element_type == ElementType::kBFloat16) type = actual.element_type;
  // A scalar and a 0-d tensor of one type hold the same value.
  const bool kinds_differ = (expected.scalar && !actual.shape.empty()) || (actual.scalar && !expected.shape.empty());
  if (kinds_differ || type != actual.element_type || expected.shape != actual.shape) {
    result.message = StrCat("expected ", DescribeKind(expected), ", got ", DescribeKind(actual));
    return result;
  }
  result.element_count = actual.element_count();
  const size_t size = ElementTypeByteSize(type);
  uint64_t first = 0;
  std::string why;
  for (uint64_t i = 0; i < result.element_count; ++i) {
    const uint8_t* e = expected.bytes.data() + i * size;
    const uint8_t* a = actual.bytes.data() + i * size;
    bool equal;
    std::string reason;
    if (IsFloat(type)) {
      const double ev = LoadFloat(type, e), av = LoadFloat(type, a);
      if (std::isnan(ev) || std::isnan(av)) {
        equal = std::isnan(ev) && std::isnan(av);
        reason = "NaN matches only NaN";
      } else if (std::isinf(ev) || std::isinf(av)) {
        equal = ev == av;
        reason = "infinities match only themselves";
      } else {
        const double diff = std::fabs(av - ev);
        result.max_abs_diff = std::max(result.max_abs_diff, diff);
        equal = diff <= tolerance.atol + tolerance.rtol * std::fabs(ev);
        reason = StrCat("|diff| ", FormatNumber(diff), " > atol ", FormatNumber(tolerance.atol), " + rtol ",
                        FormatNumber(tolerance.rtol), " * |expected|");
      }
    } else if (type == ElementType::kBool8) {
      equal = (*e != 0) == (*a != 0);
      reason = "booleans must be equal";
    } else {
      equal = std::memcmp(e, a, size) == 0;
      reason = "integers must be equal";
    }
    if (equal) continue;
    if (result.mismatch_count++ == 0) {
      first = i;
      why = reason;
    }
  }
  result.match = result.mismatch_count == 0;
  if (result.match) return result;
  Tensor expected_view = expected;
  expected_view.element_type = type;
  result.message = StrCat(actual.shape.empty() ? "" : StrCat("element ", FormatIndex(actual.shape, first), ": "),
                          "expected ", FormatElement(expected_view, first), ", got ", FormatElement(actual, first),
                          " (", why, ")");
  if (result.element_count > 1) {
    result.message += StrCat("; ", result.mismatch_count, " of ", result.element_count, " elements differ");
  }
  return result;
}

}  // namespace strata::tools
