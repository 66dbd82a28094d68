// Value: one argument or result crossing the VM boundary (host calls, native
// module calls, list elements): an i32, i64, f32, f64 or a ref.
#pragma once

#include <cstdint>
#include <string>

#include "vm/base/ref.h"

namespace strata::vm {

enum class ValueType : uint8_t { kNone, kI32, kI64, kF32, kF64, kRef };

const char* ValueTypeName(ValueType type);
// The signature character of a type ('i', 'I', 'f', 'F', 'r'); see module.fbs.
char ValueTypeSignatureChar(ValueType type);
// Inline: the interpreter converts each argument of every native call.
inline ValueType ValueTypeFromSignatureChar(char c) {
  switch (c) {
    case 'i': return ValueType::kI32;
    case 'I': return ValueType::kI64;
    case 'f': return ValueType::kF32;
    case 'F': return ValueType::kF64;
    case 'r': return ValueType::kRef;
    default: return ValueType::kNone;
  }
}

class Value {
 public:
  Value() = default;
  static Value I32(int32_t v) { Value x; x.type_ = ValueType::kI32; x.i64_ = static_cast<uint32_t>(v); return x; }
  static Value I64(int64_t v) { Value x; x.type_ = ValueType::kI64; x.i64_ = v; return x; }
  static Value F32(float v) { Value x; x.type_ = ValueType::kF32; x.f32_ = v; return x; }
  static Value F64(double v) { Value x; x.type_ = ValueType::kF64; x.f64_ = v; return x; }
  static Value FromRef(Ref<RefObject> ref) { Value x; x.type_ = ValueType::kRef; x.ref_ = std::move(ref); return x; }
  // A scalar from its 64-bit register slot.
  static Value FromSlot(ValueType type, uint64_t slot) { Value x; x.type_ = type; x.slot_ = slot; return x; }
  // A ref lent by the interpreter for one call into a native module, whose
  // register keeps it alive meanwhile: no retain now, and ForgetLentRef(),
  // not destruction, ends the loan (no release). A callee that keeps the
  // object copies the Ref, which retains it.
  static Value LendRef(RefObject* object) { return FromRef(Ref<RefObject>::Adopt(object)); }
  void ForgetLentRef() { ref_.Detach(); }
  // The same in place, on a Value that holds no ref (a default one): a
  // Value built apart and copied in stores its type byte and then loads it
  // within a 16-byte copy, which the core cannot forward from the store
  // (in the interpreter's argument marshalling, half its time).
  void SetSlot(ValueType type, uint64_t slot) {
    type_ = type;
    slot_ = slot;
  }
  void SetLentRef(RefObject* object) {
    type_ = ValueType::kRef;
    ref_ = Ref<RefObject>::Adopt(object);
  }
  // Moves the ref out (its reference goes to the caller).
  RefObject* TakeRef() { return ref_.Detach(); }

  ValueType type() const { return type_; }
  int32_t i32() const { return static_cast<int32_t>(i64_); }
  int64_t i64() const { return i64_; }
  float f32() const { return f32_; }
  double f64() const { return f64_; }
  const Ref<RefObject>& ref() const { return ref_; }
  // The 64-bit register slot for a scalar (i32/f32 in the low bits).
  uint64_t slot() const { return slot_; }

  // "i32=5", "f64=2.5", "vm.buffer<16 bytes>", "ref=null".
  std::string ToString() const;

 private:
  ValueType type_ = ValueType::kNone;
  union {
    int64_t i64_ = 0;
    uint64_t slot_;
    float f32_;
    double f64_;
  };
  Ref<RefObject> ref_;
};

}  // namespace strata::vm
