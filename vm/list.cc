#include "vm/list.h"

#include <cassert>
#include <unordered_set>

namespace strata::vm {

const RefTypeInfo List::kType = {"vm.list"};

namespace {

List* AsList(const Value& value) {
  if (value.type() != ValueType::kRef || !value.ref() || value.ref()->type() != &List::kType) {
    return nullptr;
  }
  return static_cast<List*>(value.ref().get());
}

}  // namespace

List::~List() {
  // Nested lists that only this one holds are emptied here, one level at a
  // time, so that releasing a chain a million lists deep does not recurse.
  std::vector<Value> pending;
  auto take_lists = [&pending](List* list) {
    if (list->list_items_ == 0) return;
    for (Value& item : list->items_) {
      if (AsList(item)) pending.push_back(std::move(item));
    }
    list->items_.clear();
    list->list_items_ = 0;
  };
  take_lists(this);
  while (!pending.empty()) {
    Value item = std::move(pending.back());
    pending.pop_back();
    List* list = AsList(item);
    if (list->ref_count() == 1) take_lists(list);
  }
}

void List::PushBack(Value value) {
  assert(!AsList(value) && "PushBack takes no lists");
  items_.push_back(std::move(value));
}

Status List::CheckNoCycle(const Value& value, int64_t index) const {
  const List* stored = AsList(value);
  if (!stored) return OkStatus();
  if (stored == this) {
    return InvalidArgumentError("list.set: storing a list into element ", index,
                                " would make the list hold itself (a reference cycle)");
  }
  // The caller holds a reference to this list; when it is the only one, no
  // list holds this one, so none reachable from `stored` does.
  if (ref_count() == 1) return OkStatus();
  // Is this list reachable from the one stored?
  std::vector<const List*> stack{stored};
  std::unordered_set<const List*> seen;
  uint64_t walked = 0;
  while (!stack.empty()) {
    const List* list = stack.back();
    stack.pop_back();
    if (list == this) {
      return InvalidArgumentError("list.set: storing a list into element ", index,
                                  " would make the list hold itself (a reference cycle)");
    }
    if (list->list_items_ == 0 || !seen.insert(list).second) continue;
    walked += list->items_.size();
    if (walked > kMaxCycleCheck) {
      return ResourceExhaustedError("list.set: the list stored into element ", index,
                                    " nests lists of more than ", kMaxCycleCheck,
                                    " elements, too many to check for a reference cycle");
    }
    for (const Value& item : list->items_) {
      if (const List* nested = AsList(item)) stack.push_back(nested);
    }
  }
  return OkStatus();
}

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
  for (size_t i = static_cast<size_t>(new_size); i < items_.size(); ++i) {
    if (AsList(items_[i])) --list_items_;
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
  STRATA_RETURN_IF_ERROR(CheckNoCycle(value, index));
  Value& item = items_[static_cast<size_t>(index)];
  list_items_ += (AsList(value) ? 1 : 0) - (AsList(item) ? 1 : 0);
  item = std::move(value);
  return OkStatus();
}

}  // namespace strata::vm
