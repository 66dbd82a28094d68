// A default input for a function argument from its recorded source type, for
// harnesses that run every export of any module (the module fuzzer, the
// bit-flip test): "tensor<?x4xf32>" -> "2x4xf32=1" (dynamic sizes 2, every
// element 1), in run-module's input syntax. Empty when the type is not a
// tensor, has a zero dimension or holds over 2^20 elements.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace strata::testing {

inline std::string DefaultInputText(std::string_view type) {
  if (type.rfind("tensor<", 0) != 0 || type.back() != '>') return {};
  std::string shape(type.substr(7, type.size() - 8));
  std::string text;
  uint64_t elements = 1;
  size_t start = 0;
  for (size_t x; (x = shape.find('x', start)) != std::string::npos; start = x + 1) {
    std::string dim = shape.substr(start, x - start);
    uint64_t size = dim == "?" ? 2 : std::strtoull(dim.c_str(), nullptr, 10);
    elements *= size;
    if (size == 0 || elements > (uint64_t{1} << 20)) return {};
    text += std::to_string(size) + "x";
  }
  return text + shape.substr(start) + "=1";
}

}  // namespace strata::testing
