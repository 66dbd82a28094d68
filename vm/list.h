// vm.list: a growable list of Values (any mix of scalars and refs).
//
// Element access is bounds-checked and typed: reading an f32 element as i32 is
// an error naming both types, never a reinterpretation.
//
// Thread safety: not thread-safe; a list shared between threads needs the
// caller's lock.
#pragma once

#include <vector>

#include "vm/ref.h"
#include "vm/status.h"
#include "vm/value.h"

namespace strata::vm {

class List final : public RefObject {
 public:
  static const RefTypeInfo kType;
  // Lists hold at most this many elements, so a corrupt size is an error.
  static constexpr uint32_t kMaxSize = 1u << 26;

  static StatusOr<Ref<List>> Create(uint32_t initial_capacity);

  uint32_t size() const { return static_cast<uint32_t>(items_.size()); }
  // New elements are empty (type none) until set.
  Status Resize(int64_t new_size);
  Status Get(int64_t index, ValueType expected, Value* out) const;
  Status Set(int64_t index, Value value);
  void PushBack(Value value) { items_.push_back(std::move(value)); }

 private:
  List() : RefObject(&kType) {}
  Status CheckIndex(int64_t index) const;

  std::vector<Value> items_;
};

}  // namespace strata::vm
