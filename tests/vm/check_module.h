// The `check` native module: assertions that VM op tests (.mlir files) import
// to compare values, with messages that show both sides.
//
//   vm.call.import @check.expect_eq_i64(%actual, %expected) : (i64, i64) -> ()
#pragma once

#include "vm/native_module.h"

namespace strata::testing {

// expect_true(i32), expect_false(i32), expect_eq_{i32,i64,f32,f64}(actual,
// expected): floats compare bit-exact except that any NaN equals any NaN;
// expect_near_{f32,f64}(actual, expected) allow a relative error of 1e-6.
Ref<vm::NativeModule> CreateCheckModule();

}  // namespace strata::testing
