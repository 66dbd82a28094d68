// Lists of variants: every element type, resize, typed reads and their errors.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 3 passed, 0 failed
// RUN: not vm-test-runner %t.smod --function=fail_wrong_type 2>&1 | FileCheck --check-prefix=TYPE %s
// TYPE: INVALID_ARGUMENT: list element 0: expected f32, got i32
// RUN: not vm-test-runner %t.smod --function=fail_out_of_range 2>&1 | FileCheck --check-prefix=OOR %s
// OOR: OUT_OF_RANGE: list index 2 is out of range of a list of 2 elements
// Reference cycles cannot be formed, so every list is freed by counting.
// RUN: not vm-test-runner %t.smod --function=fail_self_cycle 2>&1 | FileCheck --check-prefix=SELF %s
// SELF: INVALID_ARGUMENT: list.set: storing a list into element 0 would make the list hold itself (a reference cycle)
// RUN: not vm-test-runner %t.smod --function=fail_cycle 2>&1 | FileCheck --check-prefix=CYCLE %s
// CYCLE: INVALID_ARGUMENT: list.set: storing a list into element 1 would make the list hold itself (a reference cycle)

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
    %other = vm.list.alloc %c1
    vm.list.set.ref %l[%c4], %other : !vm.list
    %gi = vm.list.get.i32 %l[%c0] : i32
    vm.call.import @check.expect_eq_i32(%gi, %i) : (i32, i32) -> ()
    %gw = vm.list.get.i64 %l[%c1] : i64
    vm.call.import @check.expect_eq_i64(%gw, %w) : (i64, i64) -> ()
    %gf = vm.list.get.f32 %l[%c2] : f32
    vm.call.import @check.expect_eq_f32(%gf, %f) : (f32, f32) -> ()
    %gd = vm.list.get.f64 %l[%c3] : f64
    vm.call.import @check.expect_eq_f64(%gd, %d) : (f64, f64) -> ()
    %gl = vm.list.get.ref %l[%c4] : !vm.list
    %same = vm.cmp.eq.ref %gl, %other : !vm.list
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

  vm.func @fail_self_cycle() {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %l = vm.list.alloc %c1
    vm.list.resize %l, %c1
    vm.list.set.ref %l[%c0], %l : !vm.list
    vm.return
  }

  // a holds b holds c; storing a into c closes the loop.
  vm.func @fail_cycle() {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c2 = vm.const.i32 2
    %a = vm.list.alloc %c1
    %b = vm.list.alloc %c1
    %c = vm.list.alloc %c2
    vm.list.resize %a, %c1
    vm.list.resize %b, %c1
    vm.list.resize %c, %c2
    vm.list.set.ref %a[%c0], %b : !vm.list
    vm.list.set.ref %b[%c0], %c : !vm.list
    vm.list.set.ref %c[%c1], %a : !vm.list
    vm.return
  }

  // The same list twice, and lists nested a million deep, are no cycle;
  // releasing the chain does not recurse.
  vm.func @test_nesting() {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c2 = vm.const.i32 2
    %n = vm.const.i32 1000000
    %shared = vm.list.alloc %c0
    %pair = vm.list.alloc %c2
    vm.list.resize %pair, %c2
    vm.list.set.ref %pair[%c0], %shared : !vm.list
    vm.list.set.ref %pair[%c1], %shared : !vm.list
    vm.br ^loop(%pair, %c0 : !vm.list, i32)
  ^loop(%inner: !vm.list, %i: i32):
    %outer = vm.list.alloc %c1
    vm.list.resize %outer, %c1
    vm.list.set.ref %outer[%c0], %inner : !vm.list
    %next = vm.add.i32 %i, %c1
    %more = vm.cmp.lt.i32.s %next, %n
    vm.cond_br %more, ^loop(%outer, %next : !vm.list, i32), ^done
  ^done:
    vm.return
  }

  // A list element overwritten by a scalar and by a ref that is not a list,
  // and a list overwritten in turn: the list stops holding the other, so
  // storing it back the other way forms no cycle.
  vm.func @test_overwrite() {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    %c7 = vm.const.i32 7
    %a = vm.list.alloc %c1
    vm.list.resize %a, %c1
    %b = vm.list.alloc %c1
    vm.list.resize %b, %c1
    vm.list.set.ref %b[%c0], %a : !vm.list
    vm.list.set.i32 %b[%c0], %c7 : i32
    %g = vm.list.get.i32 %b[%c0] : i32
    vm.call.import @check.expect_eq_i32(%g, %c7) : (i32, i32) -> ()
    vm.list.set.ref %b[%c0], %a : !vm.list
    %buffer = vm.const.ref.rodata @bytes : !vm.buffer
    vm.list.set.ref %b[%c0], %buffer : !vm.buffer
    vm.list.set.ref %a[%c0], %b : !vm.list
    %null = vm.const.ref.zero : !vm.list
    vm.list.set.ref %a[%c0], %null : !vm.list
    vm.return
  }
  vm.rodata @bytes dense<[1, 2]> : tensor<2xi8>

  vm.export @test_elements
  vm.export @test_overwrite
  vm.export @test_nesting
  vm.export @fail_self_cycle
  vm.export @fail_cycle
  vm.export @fail_wrong_type
  vm.export @fail_out_of_range
}
