#include "tools/common/tensor.h"

#include <new>

#include "tools/common/file_io.h"
#include "vm/base/float16.h"

namespace strata::tools {

// Tensors, buffers and .npy files are little-endian; the host copies bytes.
static_assert(std::endian::native == std::endian::little, "the tools assume a little-endian host");

uint64_t Tensor::element_count() const {
  uint64_t count = 1;
  for (int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

std::string Tensor::DescribeType() const {
  const char* name = ElementTypeName(element_type);
  return FormatDims(shape, "x") + (shape.empty() ? "" : "x") + (name ? name : "?");
}

StatusOr<hal::ElementType> ParseElementType(std::string_view name) {
  if (auto type = ElementTypeFromName(name)) return *type;
  return InvalidArgumentError("unknown element type '", name, "' (expected one of ", ElementTypeNames(), ")");
}

std::string ElementTypeNames() {
  std::string names;
  for (const auto& info : kElementTypes) names += StrCat(names.empty() ? "" : ", ", info.name);
  return names;
}

double LoadFloat(ElementType type, const uint8_t* p) {
  switch (type) {
    case ElementType::kFloat16: return F16ToDouble(Load<uint16_t>(p));
    case ElementType::kBFloat16: return BF16ToDouble(Load<uint16_t>(p));
    case ElementType::kFloat32: return Load<float>(p);
    default: return Load<double>(p);
  }
}
int64_t LoadSigned(ElementType type, const uint8_t* p) {
  switch (ElementTypeByteSize(type)) {
    case 1: return Load<int8_t>(p);
    case 2: return Load<int16_t>(p);
    case 4: return Load<int32_t>(p);
    default: return Load<int64_t>(p);
  }
}
uint64_t LoadUnsigned(ElementType type, const uint8_t* p) {
  switch (ElementTypeByteSize(type)) {
    case 1: return Load<uint8_t>(p);
    case 2: return Load<uint16_t>(p);
    case 4: return Load<uint32_t>(p);
    default: return Load<uint64_t>(p);
  }
}

std::string FormatDims(std::span<const int64_t> shape, const char* separator) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) out += StrCat(i ? separator : "", shape[i]);
  return out;
}

// The byte size of `shape` of `type`, or false on overflow.
bool ShapeByteSize(std::span<const int64_t> shape, ElementType type, uint64_t* bytes) {
  *bytes = ElementTypeByteSize(type);
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(*bytes, static_cast<uint64_t>(dim), bytes)) return false;
  }
  return true;
}


Status ResizeBytes(Tensor* tensor, uint64_t bytes) {
  // Refused up front rather than left to the allocator, which may abort
  // (under sanitizers) or overcommit instead of failing.
  if (const uint64_t memory = PhysicalMemoryBytes(); bytes > memory) {
    return ResourceExhaustedError("a ", tensor->DescribeType(), " tensor needs ", bytes,
                                  " bytes, more than this machine's ", memory, " bytes of memory");
  }
  try {
    tensor->bytes.resize(bytes);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError("a ", tensor->DescribeType(), " tensor needs ", bytes,
                                  " bytes of host memory, which cannot be allocated");
  } catch (const std::length_error&) {
    return ResourceExhaustedError("a ", tensor->DescribeType(), " tensor needs ", bytes,
                                  " bytes of host memory, which cannot be allocated");
  }
  return OkStatus();
}

std::string FormatIndex(std::span<const int64_t> shape, uint64_t index) {
  std::vector<int64_t> indices(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const uint64_t dim = static_cast<uint64_t>(shape[d]);
    indices[d] = dim ? static_cast<int64_t>(index % dim) : 0;
    index = dim ? index / dim : 0;
  }
  return "[" + FormatDims(indices, ", ") + "]";
}

}  // namespace strata::tools
