// f32/f64 arithmetic, NaN propagation through min/max, rounding ops.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 3 passed, 0 failed

vm.module @float {
  vm.import @check.expect_eq_f32(f32, f32)
  vm.import @check.expect_eq_f64(f64, f64)
  vm.import @check.expect_near_f64(f64, f64)

  vm.func @test_f32_arith() {
    %a = vm.const.f32 1.5
    %b = vm.const.f32 -4.0
    %sum = vm.add.f32 %a, %b
    %e1 = vm.const.f32 -2.5
    vm.call.import @check.expect_eq_f32(%sum, %e1) : (f32, f32) -> ()
    %diff = vm.sub.f32 %a, %b
    %e2 = vm.const.f32 5.5
    vm.call.import @check.expect_eq_f32(%diff, %e2) : (f32, f32) -> ()
    %prod = vm.mul.f32 %a, %b
    %e3 = vm.const.f32 -6.0
    vm.call.import @check.expect_eq_f32(%prod, %e3) : (f32, f32) -> ()
    %quot = vm.div.f32 %b, %a
    %e4 = vm.const.f32 -2.66666675
    vm.call.import @check.expect_eq_f32(%quot, %e4) : (f32, f32) -> ()
    %rem = vm.rem.f32 %b, %a
    %e5 = vm.const.f32 -1.0
    vm.call.import @check.expect_eq_f32(%rem, %e5) : (f32, f32) -> ()
    %neg = vm.neg.f32 %a
    %e6 = vm.const.f32 -1.5
    vm.call.import @check.expect_eq_f32(%neg, %e6) : (f32, f32) -> ()
    %abs = vm.abs.f32 %b
    %e7 = vm.const.f32 4.0
    vm.call.import @check.expect_eq_f32(%abs, %e7) : (f32, f32) -> ()
    %sqrt = vm.sqrt.f32 %abs
    %e8 = vm.const.f32 2.0
    vm.call.import @check.expect_eq_f32(%sqrt, %e8) : (f32, f32) -> ()
    %fl = vm.floor.f32 %e1
    %e9 = vm.const.f32 -3.0
    vm.call.import @check.expect_eq_f32(%fl, %e9) : (f32, f32) -> ()
    %ce = vm.ceil.f32 %e1
    %e10 = vm.const.f32 -2.0
    vm.call.import @check.expect_eq_f32(%ce, %e10) : (f32, f32) -> ()
    // Division by zero is IEEE: inf, not an error.
    %zero = vm.const.f32 0.0
    %inf = vm.div.f32 %a, %zero
    %einf = vm.const.f32 0x7F800000
    vm.call.import @check.expect_eq_f32(%inf, %einf) : (f32, f32) -> ()
    vm.return
  }

  vm.func @test_min_max_nan() {
    %nan = vm.const.f32 0x7FC00000
    %one = vm.const.f32 1.0
    %two = vm.const.f32 2.0
    %mn = vm.min.f32 %one, %two
    vm.call.import @check.expect_eq_f32(%mn, %one) : (f32, f32) -> ()
    %mx = vm.max.f32 %one, %two
    vm.call.import @check.expect_eq_f32(%mx, %two) : (f32, f32) -> ()
    %mnan = vm.min.f32 %one, %nan
    vm.call.import @check.expect_eq_f32(%mnan, %nan) : (f32, f32) -> ()
    %xnan = vm.max.f32 %nan, %two
    vm.call.import @check.expect_eq_f32(%xnan, %nan) : (f32, f32) -> ()
    %pz = vm.const.f32 0.0
    %nz = vm.const.f32 -0.0
    %mz = vm.min.f32 %pz, %nz
    vm.call.import @check.expect_eq_f32(%mz, %nz) : (f32, f32) -> ()
    %xz = vm.max.f32 %nz, %pz
    vm.call.import @check.expect_eq_f32(%xz, %pz) : (f32, f32) -> ()
    vm.return
  }

  vm.func @test_f64_arith() {
    %a = vm.const.f64 0.1
    %b = vm.const.f64 0.2
    %sum = vm.add.f64 %a, %b
    %e = vm.const.f64 0.30000000000000004
    vm.call.import @check.expect_eq_f64(%sum, %e) : (f64, f64) -> ()
    %prod = vm.mul.f64 %sum, %b
    %e2 = vm.const.f64 0.06
    vm.call.import @check.expect_near_f64(%prod, %e2) : (f64, f64) -> ()
    %q = vm.div.f64 %b, %a
    %two = vm.const.f64 2.0
    vm.call.import @check.expect_eq_f64(%q, %two) : (f64, f64) -> ()
    %s = vm.sqrt.f64 %two
    %e3 = vm.const.f64 1.4142135623730951
    vm.call.import @check.expect_eq_f64(%s, %e3) : (f64, f64) -> ()
    %m = vm.max.f64 %a, %b
    vm.call.import @check.expect_eq_f64(%m, %b) : (f64, f64) -> ()
    %sub = vm.sub.f64 %a, %b
    %n = vm.neg.f64 %sub
    %ab = vm.abs.f64 %sub
    vm.call.import @check.expect_eq_f64(%n, %ab) : (f64, f64) -> ()
    %r = vm.rem.f64 %two, %b
    %fl = vm.floor.f64 %s
    %ce = vm.ceil.f64 %s
    %one = vm.const.f64 1.0
    vm.call.import @check.expect_eq_f64(%fl, %one) : (f64, f64) -> ()
    vm.call.import @check.expect_eq_f64(%ce, %two) : (f64, f64) -> ()
    %mn = vm.min.f64 %fl, %ce
    vm.call.import @check.expect_eq_f64(%mn, %one) : (f64, f64) -> ()
    %e4 = vm.const.f64 0.1999999999999999
    vm.call.import @check.expect_eq_f64(%r, %e4) : (f64, f64) -> ()
    vm.return
  }

  vm.export @test_f32_arith
  vm.export @test_min_max_nan
  vm.export @test_f64_arith
}
