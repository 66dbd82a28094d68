#include "vm/list.h"

namespace strata::vm {

const RefTypeInfo List::kType = {"vm.list"};

StatusOr<Ref<List>> List::Create(uint32_t initial_capacity) {
  if (initial_capacity > kMaxSize) {
    return ResourceExhaustedError("list.alloc: capacity ", initial_capacity, " exceeds the limit of ",
                                  kMaxSize);
  }
  Ref<List> list = Ref<List>::Adopt(new List());
  list->items_.reserve(initial_capacity);
  return list;
}

Status List::CheckIndex(int64_t index) const {
  if (index < 0 || index >= static_cast<int64_t>(items_.size())) {
    return OutOfRangeError("list index ", index, " is out of range of a list of ", items_.size(),
                           " elements");
  }
  return OkStatus();
}

Status List::Resize(int64_t new_size) {
  if (new_size < 0 || new_size > kMaxSize) {
    return OutOfRangeError("list.resize: size ", new_size, " is outside [0, ", kMaxSize, "]");
  }
  items_.resize(static_cast<size_t>(new_size));
  return OkStatus();
}

Status List::Get(int64_t index, ValueType expected, Value* out) const {
  STRATA_RETURN_IF_ERROR(CheckIndex(index));
  const Value& item = items_[static_cast<size_t>(index)];
  if (item.type() != expected) {
    return InvalidArgumentError("list element ", index, ": expected ", ValueTypeName(expected),
                                ", got ", ValueTypeName(item.type()));
  }
  *out = item;
  return OkStatus();
}

Status List::Set(int64_t index, Value value) {
  STRATA_RETURN_IF_ERROR(CheckIndex(index));
  items_[static_cast<size_t>(index)] = std::move(value);
  return OkStatus();
}

}  // namespace strata::vm
