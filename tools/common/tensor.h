// Tensor: a tensor or scalar in host memory as the runtime tools hold it
// (run-module, benchmark-module), and what the other parts of tools/common
// share about its elements. The parts, one job each:
//
//   tensor_text.h     the text syntax: parsing inputs, printing results
//   numpy_io.h        .npy files
//   file_io.h         whole files
//   tensor_compare.h  expected against actual, numpy.isclose-style
//   tensor_values.h   to and from VM values and HAL buffer views
//
// Thread safety: free functions over values; no shared state.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/buffer_view.h"
#include "vm/base/status.h"

namespace strata::tools {

using hal::ElementType;

// A tensor (or scalar) in host memory: the elements packed in row-major
// order, little-endian, element_count() * ElementTypeByteSize bytes.
struct Tensor {
  hal::ElementType element_type = hal::ElementType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  // Written as TYPE=VALUE (or a VM scalar result): passed to and from the VM
  // as a scalar, not as a buffer view. Implies an empty shape.
  bool scalar = false;

  uint64_t element_count() const;
  // "2x3xf32"; "f32" for scalars and 0-d tensors.
  std::string DescribeType() const;
};

// "f32" -> kFloat32, ... ; fails naming the accepted names.
StatusOr<hal::ElementType> ParseElementType(std::string_view name);

// "f32, bf16, ..." in the order of schemas/element_types.def.
std::string ElementTypeNames();

// ---- elements ----

// The kind byte of the (kind << 8) | bits encoding.
enum class Kind { kSigned = 1, kUnsigned = 2, kFloat = 3, kBFloat = 4, kBool = 5 };
inline Kind KindOf(ElementType type) { return static_cast<Kind>(static_cast<uint32_t>(type) >> 8); }
inline bool IsFloat(ElementType type) { return KindOf(type) == Kind::kFloat || KindOf(type) == Kind::kBFloat; }

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
// An element widened: floats (f16 and bf16 converted) to double, integers
// sign- or zero-extended.
double LoadFloat(ElementType type, const uint8_t* p);
int64_t LoadSigned(ElementType type, const uint8_t* p);
uint64_t LoadUnsigned(ElementType type, const uint8_t* p);

// ---- shapes ----

// The dimensions joined by `separator`: "2x3", "0, 3".
std::string FormatDims(std::span<const int64_t> shape, const char* separator);
// "[0, 3]" for row-major element `index` of `shape`; "[]" for rank 0.
std::string FormatIndex(std::span<const int64_t> shape, uint64_t index);
// The byte size of `shape` of `type`, or false on overflow.
bool ShapeByteSize(std::span<const int64_t> shape, ElementType type, uint64_t* bytes);
// Sizes tensor->bytes, refusing more than this machine's memory with
// RESOURCE_EXHAUSTED rather than letting the allocator abort.
Status ResizeBytes(Tensor* tensor, uint64_t bytes);

}  // namespace strata::tools
