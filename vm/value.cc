#include "vm/value.h"

#include <cstdio>

#include "vm/buffer.h"
#include "vm/list.h"
#include "vm/base/status.h"

namespace strata::vm {

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kNone: return "none";
    case ValueType::kI32: return "i32";
    case ValueType::kI64: return "i64";
    case ValueType::kF32: return "f32";
    case ValueType::kF64: return "f64";
    case ValueType::kRef: return "ref";
  }
  return "?";
}

char ValueTypeSignatureChar(ValueType type) {
  switch (type) {
    case ValueType::kI32: return 'i';
    case ValueType::kI64: return 'I';
    case ValueType::kF32: return 'f';
    case ValueType::kF64: return 'F';
    case ValueType::kRef: return 'r';
    case ValueType::kNone: break;
  }
  return '?';
}

// Shortest decimal that reads back to the same float, so printed results can
// be pasted back as inputs.
template <typename T>
static std::string FormatFloat(T v) {
  char buf[64];
  for (int precision = std::is_same_v<T, float> ? 6 : 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, static_cast<double>(v));
    T back;
    if (std::sscanf(buf, std::is_same_v<T, float> ? "%g" : "%lg", &back) == 1 && back == v) break;
  }
  return buf;
}

std::string Value::ToString() const {
  switch (type_) {
    case ValueType::kNone: return "none";
    case ValueType::kI32: return StrCat("i32=", i32());
    case ValueType::kI64: return StrCat("i64=", i64());
    case ValueType::kF32: return "f32=" + FormatFloat(f32_);
    case ValueType::kF64: return "f64=" + FormatFloat(f64_);
    case ValueType::kRef: {
      if (!ref_) return "ref=null";
      if (auto* buffer = RefCast<Buffer>(ref_.get())) {
        return StrCat("vm.buffer<", buffer->length(), " bytes>");
      }
      if (auto* list = RefCast<List>(ref_.get())) {
        return StrCat("vm.list<", list->size(), " elements>");
      }
      return StrCat(ref_->type_name(), "<>");
    }
  }
  return "?";
}

}  // namespace strata::vm
