// Globals: initial values, stores that persist across calls, ref globals.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 2 passed, 0 failed

vm.module @globals {
  vm.import @check.expect_eq_i32(i32, i32)
  vm.import @check.expect_eq_i64(i64, i64)
  vm.import @check.expect_eq_f32(f32, f32)
  vm.import @check.expect_eq_f64(f64, f64)
  vm.import @check.expect_true(i32)

  vm.global.i32 @counter = 5 : i32
  vm.global.i64 @wide = -7 : i64
  vm.global.f32 @scale = 1.5 : f32
  vm.global.f64 @zero
  vm.global.ref @cache : !vm.list

  vm.func @bump() -> i32 {
    %c = vm.global.load.i32 @counter : i32
    %one = vm.const.i32 1
    %n = vm.add.i32 %c, %one
    vm.global.store.i32 %n, @counter : i32
    vm.return %n : i32
  }

  vm.func @test_scalars() {
    %a = vm.call @bump() : () -> i32
    %b = vm.call @bump() : () -> i32
    %c7 = vm.const.i32 7
    vm.call.import @check.expect_eq_i32(%b, %c7) : (i32, i32) -> ()
    %w = vm.global.load.i64 @wide : i64
    %em7 = vm.const.i64 -7
    vm.call.import @check.expect_eq_i64(%w, %em7) : (i64, i64) -> ()
    %s = vm.global.load.f32 @scale : f32
    %e = vm.const.f32 1.5
    vm.call.import @check.expect_eq_f32(%s, %e) : (f32, f32) -> ()
    %z = vm.global.load.f64 @zero : f64
    %ez = vm.const.f64 0.0
    vm.call.import @check.expect_eq_f64(%z, %ez) : (f64, f64) -> ()
    %pi = vm.const.f64 3.25
    vm.global.store.f64 %pi, @zero : f64
    %z2 = vm.global.load.f64 @zero : f64
    vm.call.import @check.expect_eq_f64(%z2, %pi) : (f64, f64) -> ()
    vm.return
  }

  vm.func @test_ref_global() {
    %cap = vm.const.i32 1
    %l = vm.list.alloc %cap
    vm.global.store.ref %l, @cache : !vm.list
    %back = vm.global.load.ref @cache : !vm.list
    %same = vm.cmp.eq.ref %l, %back : !vm.list
    vm.call.import @check.expect_true(%same) : (i32) -> ()
    vm.return
  }

  vm.export @test_scalars
  vm.export @test_ref_global
}
