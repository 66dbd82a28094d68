// Integer width changes, int<->float conversions (saturating, NaN -> 0), bitcasts.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 3 passed, 0 failed

vm.module @cast {
  vm.import @check.expect_eq_i32(i32, i32)
  vm.import @check.expect_eq_i64(i64, i64)
  vm.import @check.expect_eq_f32(f32, f32)
  vm.import @check.expect_eq_f64(f64, f64)

  vm.func @test_int_widths() {
    %big = vm.const.i64 -4294967297
    %t = vm.trunc.i64.i32 %big
    %m1 = vm.const.i32 -1
    vm.call.import @check.expect_eq_i32(%t, %m1) : (i32, i32) -> ()
    %es = vm.ext.i32.i64.s %m1
    %m1l = vm.const.i64 -1
    vm.call.import @check.expect_eq_i64(%es, %m1l) : (i64, i64) -> ()
    %eu = vm.ext.i32.i64.u %m1
    %u32max = vm.const.i64 4294967295
    vm.call.import @check.expect_eq_i64(%eu, %u32max) : (i64, i64) -> ()
    %x = vm.const.i32 0x1FF80
    %t8 = vm.trunc.i32.i8 %x
    %c128 = vm.const.i32 128
    vm.call.import @check.expect_eq_i32(%t8, %c128) : (i32, i32) -> ()
    %s8 = vm.ext.i8.i32.s %t8
    %cm128 = vm.const.i32 -128
    vm.call.import @check.expect_eq_i32(%s8, %cm128) : (i32, i32) -> ()
    %t16 = vm.trunc.i32.i16 %x
    %cff80 = vm.const.i32 0xFF80
    vm.call.import @check.expect_eq_i32(%t16, %cff80) : (i32, i32) -> ()
    %s16 = vm.ext.i16.i32.s %t16
    vm.call.import @check.expect_eq_i32(%s16, %cm128) : (i32, i32) -> ()
    vm.return
  }

  vm.func @test_int_float() {
    %m3 = vm.const.i32 -3
    %f = vm.cast.si32.f32 %m3
    %em3 = vm.const.f32 -3.0
    vm.call.import @check.expect_eq_f32(%f, %em3) : (f32, f32) -> ()
    %fu = vm.cast.ui32.f32 %m3
    %e4g = vm.const.f32 4294967296.0
    vm.call.import @check.expect_eq_f32(%fu, %e4g) : (f32, f32) -> ()
    %l = vm.const.i64 9007199254740993
    %d = vm.cast.si64.f64 %l
    %ed = vm.const.f64 9007199254740992.0
    vm.call.import @check.expect_eq_f64(%d, %ed) : (f64, f64) -> ()
    %lm1 = vm.const.i64 -1
    %du = vm.cast.ui64.f64 %lm1
    %edu = vm.const.f64 18446744073709551616.0
    vm.call.import @check.expect_eq_f64(%du, %edu) : (f64, f64) -> ()
    %fs64 = vm.cast.si64.f32 %lm1
    %em1 = vm.const.f32 -1.0
    vm.call.import @check.expect_eq_f32(%fs64, %em1) : (f32, f32) -> ()
    %d32 = vm.cast.si32.f64 %m3
    %edm3 = vm.const.f64 -3.0
    vm.call.import @check.expect_eq_f64(%d32, %edm3) : (f64, f64) -> ()
    // Float to int truncates toward zero, saturates, and maps NaN to 0.
    %fx = vm.const.f32 -2.75
    %i = vm.cast.f32.si32 %fx
    %cm2 = vm.const.i32 -2
    vm.call.import @check.expect_eq_i32(%i, %cm2) : (i32, i32) -> ()
    %huge = vm.const.f32 1.0e20
    %sat = vm.cast.f32.si32 %huge
    %max = vm.const.i32 2147483647
    vm.call.import @check.expect_eq_i32(%sat, %max) : (i32, i32) -> ()
    %satu = vm.cast.f32.ui32 %fx
    %zero = vm.const.i32 0
    vm.call.import @check.expect_eq_i32(%satu, %zero) : (i32, i32) -> ()
    %nan = vm.const.f32 0x7FC00000
    %n = vm.cast.f32.si32 %nan
    vm.call.import @check.expect_eq_i32(%n, %zero) : (i32, i32) -> ()
    %n64 = vm.cast.f32.si64 %nan
    %zl = vm.const.i64 0
    vm.call.import @check.expect_eq_i64(%n64, %zl) : (i64, i64) -> ()
    %dneg = vm.const.f64 -1.0e300
    %s64 = vm.cast.f64.si64 %dneg
    %minl = vm.const.i64 -9223372036854775808
    vm.call.import @check.expect_eq_i64(%s64, %minl) : (i64, i64) -> ()
    %dsmall = vm.const.f64 123.9
    %s32 = vm.cast.f64.si32 %dsmall
    %c123 = vm.const.i32 123
    vm.call.import @check.expect_eq_i32(%s32, %c123) : (i32, i32) -> ()
    %dbig = vm.const.f64 1.0e19
    %u64 = vm.cast.f64.ui64 %dbig
    %e19 = vm.const.i64 -8446744073709551616
    vm.call.import @check.expect_eq_i64(%u64, %e19) : (i64, i64) -> ()
    vm.return
  }

  vm.func @test_float_widths_and_bits() {
    %third = vm.const.f64 0.3333333333333333
    %f = vm.trunc.f64.f32 %third
    %ef = vm.const.f32 0.333333343
    vm.call.import @check.expect_eq_f32(%f, %ef) : (f32, f32) -> ()
    %d = vm.ext.f32.f64 %f
    %ed = vm.const.f64 0.3333333432674408
    vm.call.import @check.expect_eq_f64(%d, %ed) : (f64, f64) -> ()
    %one = vm.const.f32 1.0
    %bits = vm.bitcast.f32.i32 %one
    %e = vm.const.i32 0x3F800000
    vm.call.import @check.expect_eq_i32(%bits, %e) : (i32, i32) -> ()
    %back = vm.bitcast.i32.f32 %bits
    vm.call.import @check.expect_eq_f32(%back, %one) : (f32, f32) -> ()
    %two = vm.const.f64 2.0
    %lbits = vm.bitcast.f64.i64 %two
    %el = vm.const.i64 0x4000000000000000
    vm.call.import @check.expect_eq_i64(%lbits, %el) : (i64, i64) -> ()
    %dback = vm.bitcast.i64.f64 %lbits
    vm.call.import @check.expect_eq_f64(%dback, %two) : (f64, f64) -> ()
    vm.return
  }

  vm.export @test_int_widths
  vm.export @test_int_float
  vm.export @test_float_widths_and_bits
}
