// Lists of variants: every element type, resize, typed reads and their errors.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 1 passed, 0 failed
// RUN: not vm-test-runner %t.smod --function=fail_wrong_type 2>&1 | FileCheck --check-prefix=TYPE %s
// TYPE: INVALID_ARGUMENT: list element 0: expected f32, got i32
// RUN: not vm-test-runner %t.smod --function=fail_out_of_range 2>&1 | FileCheck --check-prefix=OOR %s
// OOR: OUT_OF_RANGE: list index 2 is out of range of a list of 2 elements

vm.module @list {
  vm.import @check.expect_eq_i32(i32, i32)
  vm.import @check.expect_eq_i64(i64, i64)
  vm.import @check.expect_eq_f32(f32, f32)
  vm.import @check.expect_eq_f64(f64, f64)
  vm.import @check.expect_true(i32)

  vm.func @test_elements() {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c2 = vm.const.i32 2
    %c3 = vm.const.i32 3
    %c4 = vm.const.i32 4
    %c5 = vm.const.i32 5
    %l = vm.list.alloc %c2
    %s0 = vm.list.size %l
    vm.call.import @check.expect_eq_i32(%s0, %c0) : (i32, i32) -> ()
    vm.list.resize %l, %c5
    %s5 = vm.list.size %l
    vm.call.import @check.expect_eq_i32(%s5, %c5) : (i32, i32) -> ()
    %i = vm.const.i32 -42
    %w = vm.const.i64 1234567890123
    %f = vm.const.f32 0.25
    %d = vm.const.f64 -1.0e-300
    vm.list.set.i32 %l[%c0], %i : i32
    vm.list.set.i64 %l[%c1], %w : i64
    vm.list.set.f32 %l[%c2], %f : f32
    vm.list.set.f64 %l[%c3], %d : f64
    vm.list.set.ref %l[%c4], %l : !vm.list
    %gi = vm.list.get.i32 %l[%c0] : i32
    vm.call.import @check.expect_eq_i32(%gi, %i) : (i32, i32) -> ()
    %gw = vm.list.get.i64 %l[%c1] : i64
    vm.call.import @check.expect_eq_i64(%gw, %w) : (i64, i64) -> ()
    %gf = vm.list.get.f32 %l[%c2] : f32
    vm.call.import @check.expect_eq_f32(%gf, %f) : (f32, f32) -> ()
    %gd = vm.list.get.f64 %l[%c3] : f64
    vm.call.import @check.expect_eq_f64(%gd, %d) : (f64, f64) -> ()
    %gl = vm.list.get.ref %l[%c4] : !vm.list
    %same = vm.cmp.eq.ref %gl, %l : !vm.list
    vm.call.import @check.expect_true(%same) : (i32) -> ()
    // Break the self-reference so the list can be freed.
    %null = vm.const.ref.zero : !vm.list
    vm.list.set.ref %l[%c4], %null : !vm.list
    vm.list.resize %l, %c1
    %s1 = vm.list.size %l
    vm.call.import @check.expect_eq_i32(%s1, %c1) : (i32, i32) -> ()
    vm.return
  }

  vm.func @fail_wrong_type() {
    %c1 = vm.const.i32 1
    %c0 = vm.const.i32 0
    %l = vm.list.alloc %c1
    vm.list.resize %l, %c1
    vm.list.set.i32 %l[%c0], %c1 : i32
    %f = vm.list.get.f32 %l[%c0] : f32
    vm.return
  }

  vm.func @fail_out_of_range() {
    %c2 = vm.const.i32 2
    %l = vm.list.alloc %c2
    vm.list.resize %l, %c2
    %x = vm.list.get.i64 %l[%c2] : i64
    vm.return
  }

  vm.export @test_elements
  vm.export @fail_wrong_type
  vm.export @fail_out_of_range
}
