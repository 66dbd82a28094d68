// Ref-counted objects: the values that live in the VM's ref registers.
//
// Every object a program can hold by reference (byte buffers, lists, modules,
// and later HAL objects such as devices and buffers) derives from RefObject.
// Each concrete type has one static RefTypeInfo whose address is its identity,
// so a type check is a pointer compare and needs no RTTI.
//
// Ownership: a new object starts with one reference owned by whoever created
// it (normally wrapped at once in a Ref<T>). Retain/Release are atomic, so
// references may be shared across threads; the objects themselves say what
// else is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace strata {

struct RefTypeInfo {
  const char* name;  // "vm.buffer", "vm.list", "hal.buffer", ...
};

class RefObject {
 public:
  explicit RefObject(const RefTypeInfo* type) : type_(type) {}
  RefObject(const RefObject&) = delete;
  RefObject& operator=(const RefObject&) = delete;

  const RefTypeInfo* type() const { return type_; }
  const char* type_name() const { return type_->name; }

  void Retain() { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void Release() {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int32_t ref_count() const { return ref_count_.load(std::memory_order_relaxed); }

 protected:
  virtual ~RefObject() = default;

 private:
  const RefTypeInfo* type_;
  std::atomic<int32_t> ref_count_{1};
};

inline void RetainRef(RefObject* object) {
  if (object) object->Retain();
}
inline void ReleaseRef(RefObject* object) {
  if (object) object->Release();
}

// Returns `object` as T if it is one (T must declare `static const
// RefTypeInfo kType`), else null. Null in, null out.
template <typename T>
T* RefCast(RefObject* object) {
  return object && object->type() == &T::kType ? static_cast<T*>(object) : nullptr;
}

// An owning pointer to a RefObject: copying retains, destruction releases.
template <typename T>
class Ref {
 public:
  Ref() = default;
  Ref(std::nullptr_t) {}
  // Takes over one existing reference (for freshly created objects).
  static Ref Adopt(T* object) {
    Ref ref;
    ref.object_ = object;
    return ref;
  }
  // Adds a reference to a borrowed object.
  static Ref Borrow(T* object) {
    RetainRef(object);
    return Adopt(object);
  }
  Ref(const Ref& other) : object_(other.object_) { RetainRef(object_); }
  Ref(Ref&& other) noexcept : object_(std::exchange(other.object_, nullptr)) {}
  template <typename U>
  Ref(const Ref<U>& other) : object_(other.get()) { RetainRef(object_); }
  template <typename U>
  Ref(Ref<U>&& other) noexcept : object_(other.Detach()) {}
  Ref& operator=(Ref other) noexcept {
    std::swap(object_, other.object_);
    return *this;
  }
  ~Ref() { ReleaseRef(object_); }

  T* get() const { return object_; }
  T* operator->() const { return object_; }
  T& operator*() const { return *object_; }
  explicit operator bool() const { return object_ != nullptr; }
  // Gives up ownership without releasing.
  T* Detach() { return std::exchange(object_, nullptr); }

 private:
  T* object_ = nullptr;
};

template <typename T, typename... Args>
Ref<T> MakeRef(Args&&... args) {
  return Ref<T>::Adopt(new T(std::forward<Args>(args)...));
}

}  // namespace strata
