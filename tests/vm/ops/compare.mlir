// Comparisons: signed/unsigned integers, IEEE floats with NaN, refs; select.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 4 passed, 0 failed

vm.module @compare {
  vm.import @check.expect_true(i32)
  vm.import @check.expect_false(i32)
  vm.import @check.expect_eq_i64(i64, i64)
  vm.import @check.expect_eq_f32(f32, f32)

  vm.func @test_int() {
    %m1 = vm.const.i32 -1
    %one = vm.const.i32 1
    %lt = vm.cmp.lt.i32.s %m1, %one
    vm.call.import @check.expect_true(%lt) : (i32) -> ()
    // -1 is the largest unsigned value.
    %ltu = vm.cmp.lt.i32.u %m1, %one
    vm.call.import @check.expect_false(%ltu) : (i32) -> ()
    %le = vm.cmp.le.i32.s %one, %one
    vm.call.import @check.expect_true(%le) : (i32) -> ()
    %leu = vm.cmp.le.i32.u %one, %m1
    vm.call.import @check.expect_true(%leu) : (i32) -> ()
    %eq = vm.cmp.eq.i32 %one, %m1
    vm.call.import @check.expect_false(%eq) : (i32) -> ()
    %ne = vm.cmp.ne.i32 %one, %m1
    vm.call.import @check.expect_true(%ne) : (i32) -> ()
    %a = vm.const.i64 -5
    %b = vm.const.i64 3
    %lt64 = vm.cmp.lt.i64.s %a, %b
    vm.call.import @check.expect_true(%lt64) : (i32) -> ()
    %ltu64 = vm.cmp.lt.i64.u %a, %b
    vm.call.import @check.expect_false(%ltu64) : (i32) -> ()
    %le64 = vm.cmp.le.i64.s %b, %a
    vm.call.import @check.expect_false(%le64) : (i32) -> ()
    %leu64 = vm.cmp.le.i64.u %b, %a
    vm.call.import @check.expect_true(%leu64) : (i32) -> ()
    %eq64 = vm.cmp.eq.i64 %a, %a
    vm.call.import @check.expect_true(%eq64) : (i32) -> ()
    %ne64 = vm.cmp.ne.i64 %a, %a
    vm.call.import @check.expect_false(%ne64) : (i32) -> ()
    vm.return
  }

  vm.func @test_float_nan() {
    %nan = vm.const.f32 0x7FC00000
    %one = vm.const.f32 1.0
    // Ordered predicates are false with a NaN, ne is true, even NaN vs NaN.
    %eq = vm.cmp.eq.f32 %nan, %nan
    vm.call.import @check.expect_false(%eq) : (i32) -> ()
    %ne = vm.cmp.ne.f32 %nan, %nan
    vm.call.import @check.expect_true(%ne) : (i32) -> ()
    %lt = vm.cmp.lt.f32 %nan, %one
    vm.call.import @check.expect_false(%lt) : (i32) -> ()
    %gt = vm.cmp.lt.f32 %one, %nan
    vm.call.import @check.expect_false(%gt) : (i32) -> ()
    %le = vm.cmp.le.f32 %nan, %nan
    vm.call.import @check.expect_false(%le) : (i32) -> ()
    %isnan = vm.cmp.nan.f32 %nan
    vm.call.import @check.expect_true(%isnan) : (i32) -> ()
    %notnan = vm.cmp.nan.f32 %one
    vm.call.import @check.expect_false(%notnan) : (i32) -> ()
    %pz = vm.const.f32 0.0
    %nz = vm.const.f32 -0.0
    %zeq = vm.cmp.eq.f32 %pz, %nz
    vm.call.import @check.expect_true(%zeq) : (i32) -> ()
    %dnan = vm.const.f64 0x7FF8000000000000
    %d1 = vm.const.f64 1.0
    %deq = vm.cmp.eq.f64 %dnan, %dnan
    vm.call.import @check.expect_false(%deq) : (i32) -> ()
    %dne = vm.cmp.ne.f64 %dnan, %d1
    vm.call.import @check.expect_true(%dne) : (i32) -> ()
    %dlt = vm.cmp.lt.f64 %d1, %dnan
    vm.call.import @check.expect_false(%dlt) : (i32) -> ()
    %dle = vm.cmp.le.f64 %d1, %d1
    vm.call.import @check.expect_true(%dle) : (i32) -> ()
    %disnan = vm.cmp.nan.f64 %dnan
    vm.call.import @check.expect_true(%disnan) : (i32) -> ()
    vm.return
  }

  vm.func @test_refs() {
    %null = vm.const.ref.zero : !vm.list
    %cap = vm.const.i32 0
    %l1 = vm.list.alloc %cap
    %l2 = vm.list.alloc %cap
    %nz = vm.cmp.nz.ref %null : !vm.list
    vm.call.import @check.expect_false(%nz) : (i32) -> ()
    %nz1 = vm.cmp.nz.ref %l1 : !vm.list
    vm.call.import @check.expect_true(%nz1) : (i32) -> ()
    %same = vm.cmp.eq.ref %l1, %l1 : !vm.list
    vm.call.import @check.expect_true(%same) : (i32) -> ()
    %diff = vm.cmp.eq.ref %l1, %l2 : !vm.list
    vm.call.import @check.expect_false(%diff) : (i32) -> ()
    %one = vm.const.i32 1
    %pick = vm.select.ref %one, %l2, %l1 : !vm.list
    %is2 = vm.cmp.eq.ref %pick, %l2 : !vm.list
    vm.call.import @check.expect_true(%is2) : (i32) -> ()
    vm.return
  }

  vm.func @test_select() {
    %t = vm.const.i32 7
    %f = vm.const.i32 0
    %a = vm.const.i64 10
    %b = vm.const.i64 20
    %s1 = vm.select.i64 %t, %a, %b
    vm.call.import @check.expect_eq_i64(%s1, %a) : (i64, i64) -> ()
    %s2 = vm.select.i64 %f, %a, %b
    vm.call.import @check.expect_eq_i64(%s2, %b) : (i64, i64) -> ()
    %x = vm.const.f32 1.0
    %y = vm.const.f32 2.0
    %s3 = vm.select.f32 %f, %x, %y
    vm.call.import @check.expect_eq_f32(%s3, %y) : (f32, f32) -> ()
    vm.return
  }

  vm.export @test_int
  vm.export @test_float_nan
  vm.export @test_refs
  vm.export @test_select
}
