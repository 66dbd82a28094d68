// Element types of tensors as the module and the runtime number them, from
// the one table of them, schemas/element_types.def: the enum, the names the
// tools read and print ("f32"), the bytes per element and the NumPy codes.
// Header-only and constexpr, for the compiler and the runtime alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

enum class ElementType : uint32_t {
#define STRATA_ELEMENT_TYPE(e, code, name, numpy, c_name) e = code,
#include "schemas/element_types.def"
#undef STRATA_ELEMENT_TYPE
};

struct ElementTypeInfo {
  ElementType type;
  const char* name;   // "f32", "i1", "ui8", ...
  const char* numpy;  // "f4", "b1", "u1", ...: a .npy dtype without its byte order
};

inline constexpr ElementTypeInfo kElementTypes[] = {
#define STRATA_ELEMENT_TYPE(e, code, name, numpy, c_name) {ElementType::e, name, numpy},
#include "schemas/element_types.def"
#undef STRATA_ELEMENT_TYPE
};

// The row of `type`; null for a value that is no element type.
constexpr const ElementTypeInfo* FindElementType(ElementType type) {
  for (const ElementTypeInfo& info : kElementTypes) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

// "f32", "i8", ...; null for a value that is no element type.
constexpr const char* ElementTypeName(ElementType type) {
  const ElementTypeInfo* info = FindElementType(type);
  return info ? info->name : nullptr;
}

// Bytes per element (0 for a value that is no element type).
constexpr uint32_t ElementTypeByteSize(ElementType type) {
  return FindElementType(type) ? (static_cast<uint32_t>(type) & 0xFF) / 8 : 0;
}

// The element type named `name` ("f32"), if any.
constexpr std::optional<ElementType> ElementTypeFromName(std::string_view name) {
  for (const ElementTypeInfo& info : kElementTypes) {
    if (name == info.name) return info.type;
  }
  return std::nullopt;
}

}  // namespace strata
