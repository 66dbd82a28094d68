// vm.list: a growable list of Values (any mix of scalars and refs).
//
// Element access is bounds-checked and typed: reading an f32 element as i32 is
// an error naming both types, never a reinterpretation.
//
// A list never holds itself, directly or through other lists: storing a list
// where it would form such a cycle is an error, so reference counting frees
// every list a program makes (a cycle would never be freed). The check needs
// no walk when the caller's reference to the list stored into is its only
// one (the common case: a list being filled); otherwise it walks the lists
// that hold lists, at most kMaxCycleCheck elements of them per store.
// Releasing a deeply nested chain does not recurse.
//
// Thread safety: not thread-safe; a list shared between threads needs the
// caller's lock.
#pragma once

#include <vector>

#include "vm/base/ref.h"
#include "vm/base/status.h"
#include "vm/value.h"

namespace strata::vm {

class List final : public RefObject {
 public:
  static const RefTypeInfo kType;
  // Lists hold at most this many elements, so a corrupt size is an error.
  static constexpr uint32_t kMaxSize = 1u << 26;
  // Elements of nested lists a store may walk looking for a cycle; a store
  // of a list holding more fails with RESOURCE_EXHAUSTED.
  static constexpr uint64_t kMaxCycleCheck = 1u << 16;

  static StatusOr<Ref<List>> Create(uint32_t initial_capacity);

  uint32_t size() const { return static_cast<uint32_t>(items_.size()); }
  // New elements are empty (type none) until set.
  Status Resize(int64_t new_size);
  Status Get(int64_t index, ValueType expected, Value* out) const;
  // The element at `index` when there is one of type `expected`, else null
  // (Get then says what is wrong); not copied, valid until the list changes.
  // For host code reading many elements (a dispatch's bindings).
  const Value* Peek(int64_t index, ValueType expected) const {
    if (index < 0 || index >= static_cast<int64_t>(items_.size())) return nullptr;
    const Value& item = items_[static_cast<size_t>(index)];
    return item.type() == expected ? &item : nullptr;
  }
  // The caller holds a reference to this list (see the cycle check above).
  Status Set(int64_t index, Value value);
  // Set's fast path for what needs no cycle check, a scalar or a ref to
  // anything but a list, into an element that holds no list: false, with
  // nothing changed, for everything else (Set then does it, or says what is
  // wrong). The interpreter's list.set takes it first; building a
  // dispatch's bindings is most of what list.set does.
  bool TrySetScalar(int64_t index, ValueType type, uint64_t slot) {
    Value* item = PlainElement(index);
    if (!item) return false;
    *item = Value::FromSlot(type, slot);
    return true;
  }
  bool TrySetRef(int64_t index, RefObject* object) {
    if (object && object->type() == &kType) return false;
    Value* item = PlainElement(index);
    if (!item) return false;
    *item = Value::FromRef(Ref<RefObject>::Borrow(object));
    return true;
  }
  // Appends a value that is not a list (host code building shapes and
  // argument lists).
  void PushBack(Value value);

  ~List() override;

 private:
  List() : RefObject(&kType) {}
  Status CheckIndex(int64_t index) const;
  // The element at `index` when it exists and holds no list, else null.
  Value* PlainElement(int64_t index) {
    if (index < 0 || index >= static_cast<int64_t>(items_.size())) return nullptr;
    Value& item = items_[static_cast<size_t>(index)];
    if (list_items_ != 0 && item.type() == ValueType::kRef && item.ref() && item.ref()->type() == &kType) {
      return nullptr;
    }
    return &item;
  }
  // OK when storing `value` into this list forms no cycle.
  Status CheckNoCycle(const Value& value, int64_t index) const;

  std::vector<Value> items_;
  uint32_t list_items_ = 0;  // elements that are lists
};

}  // namespace strata::vm
