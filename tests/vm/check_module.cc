#include "tests/vm/check_module.h"

#include <cmath>

namespace strata::testing {
namespace {

template <typename T>
bool SameFloat(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

template <typename T>
bool Near(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= T(1e-6) * std::fmax(std::fabs(a), std::fabs(b)) + T(1e-30);
}

Status Mismatch(const char* name, const vm::Value& actual, const vm::Value& expected) {
  return InvalidArgumentError(name, ": expected ", expected.ToString(), ", got ", actual.ToString());
}

}  // namespace

Ref<vm::NativeModule> CreateCheckModule() {
  auto m = vm::NativeModule::Create("check");
  auto add = [&](const char* name, const char* sig, vm::NativeFunction fn) {
    m->AddFunction(name, sig, std::move(fn)).IgnoreError();  // names and signatures are fixed here
  };
  add("expect_true", "i_", [](vm::CallArgs a, vm::CallResults) {
    return a[0].i32() != 0 ? OkStatus() : InvalidArgumentError("expect_true: got 0");
  });
  add("expect_false", "i_", [](vm::CallArgs a, vm::CallResults) {
    return a[0].i32() == 0 ? OkStatus() : InvalidArgumentError("expect_false: got ", a[0].i32());
  });
  add("expect_eq_i32", "ii_", [](vm::CallArgs a, vm::CallResults) {
    return a[0].i32() == a[1].i32() ? OkStatus() : Mismatch("expect_eq_i32", a[0], a[1]);
  });
  add("expect_eq_i64", "II_", [](vm::CallArgs a, vm::CallResults) {
    return a[0].i64() == a[1].i64() ? OkStatus() : Mismatch("expect_eq_i64", a[0], a[1]);
  });
  add("expect_eq_f32", "ff_", [](vm::CallArgs a, vm::CallResults) {
    return SameFloat(a[0].f32(), a[1].f32()) ? OkStatus() : Mismatch("expect_eq_f32", a[0], a[1]);
  });
  add("expect_eq_f64", "FF_", [](vm::CallArgs a, vm::CallResults) {
    return SameFloat(a[0].f64(), a[1].f64()) ? OkStatus() : Mismatch("expect_eq_f64", a[0], a[1]);
  });
  add("expect_near_f32", "ff_", [](vm::CallArgs a, vm::CallResults) {
    return Near(a[0].f32(), a[1].f32()) ? OkStatus() : Mismatch("expect_near_f32", a[0], a[1]);
  });
  add("expect_near_f64", "FF_", [](vm::CallArgs a, vm::CallResults) {
    return Near(a[0].f64(), a[1].f64()) ? OkStatus() : Mismatch("expect_near_f64", a[0], a[1]);
  });
  return m;
}

}  // namespace strata::testing
