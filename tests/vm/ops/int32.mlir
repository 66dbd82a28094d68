// i32 arithmetic, including wrap-around and shift-amount masking.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: [       OK ] test_add_sub_mul
// CHECK: [       OK ] test_div_rem
// CHECK: [       OK ] test_bitwise
// CHECK: [       OK ] test_shifts
// CHECK: 4 passed, 0 failed

vm.module @int32 {
  vm.import @check.expect_eq_i32(i32, i32)

  vm.func @test_add_sub_mul() {
    %a = vm.const.i32 7
    %b = vm.const.i32 -3
    %max = vm.const.i32 2147483647
    %min = vm.const.i32 -2147483648
    %one = vm.const.i32 1
    %sum = vm.add.i32 %a, %b
    %c4 = vm.const.i32 4
    vm.call.import @check.expect_eq_i32(%sum, %c4) : (i32, i32) -> ()
    %diff = vm.sub.i32 %b, %a
    %cm10 = vm.const.i32 -10
    vm.call.import @check.expect_eq_i32(%diff, %cm10) : (i32, i32) -> ()
    %prod = vm.mul.i32 %a, %b
    %cm21 = vm.const.i32 -21
    vm.call.import @check.expect_eq_i32(%prod, %cm21) : (i32, i32) -> ()
    // Overflow wraps: INT_MAX + 1 == INT_MIN, INT_MIN - 1 == INT_MAX.
    %wrap = vm.add.i32 %max, %one
    vm.call.import @check.expect_eq_i32(%wrap, %min) : (i32, i32) -> ()
    %wrap2 = vm.sub.i32 %min, %one
    vm.call.import @check.expect_eq_i32(%wrap2, %max) : (i32, i32) -> ()
    %sq = vm.mul.i32 %max, %max
    vm.call.import @check.expect_eq_i32(%sq, %one) : (i32, i32) -> ()
    vm.return
  }

  vm.func @test_div_rem() {
    %a = vm.const.i32 -7
    %b = vm.const.i32 2
    %q = vm.div.i32.s %a, %b
    %cm3 = vm.const.i32 -3
    vm.call.import @check.expect_eq_i32(%q, %cm3) : (i32, i32) -> ()
    %r = vm.rem.i32.s %a, %b
    %cm1 = vm.const.i32 -1
    vm.call.import @check.expect_eq_i32(%r, %cm1) : (i32, i32) -> ()
    // -7 as unsigned is 4294967289.
    %qu = vm.div.i32.u %a, %b
    %c2147483644 = vm.const.i32 2147483644
    vm.call.import @check.expect_eq_i32(%qu, %c2147483644) : (i32, i32) -> ()
    %ru = vm.rem.i32.u %a, %b
    %c1 = vm.const.i32 1
    vm.call.import @check.expect_eq_i32(%ru, %c1) : (i32, i32) -> ()
    vm.return
  }

  vm.func @test_bitwise() {
    %a = vm.const.i32 12
    %b = vm.const.i32 10
    %and = vm.and.i32 %a, %b
    %c8 = vm.const.i32 8
    vm.call.import @check.expect_eq_i32(%and, %c8) : (i32, i32) -> ()
    %or = vm.or.i32 %a, %b
    %c14 = vm.const.i32 14
    vm.call.import @check.expect_eq_i32(%or, %c14) : (i32, i32) -> ()
    %xor = vm.xor.i32 %a, %b
    %c6 = vm.const.i32 6
    vm.call.import @check.expect_eq_i32(%xor, %c6) : (i32, i32) -> ()
    %not = vm.not.i32 %a
    %cm13 = vm.const.i32 -13
    vm.call.import @check.expect_eq_i32(%not, %cm13) : (i32, i32) -> ()
    vm.return
  }

  vm.func @test_shifts() {
    %one = vm.const.i32 1
    %c31 = vm.const.i32 31
    %c33 = vm.const.i32 33
    %min = vm.const.i32 -2147483648
    %shl = vm.shl.i32 %one, %c31
    vm.call.import @check.expect_eq_i32(%shl, %min) : (i32, i32) -> ()
    // Shift amounts are taken modulo 32.
    %shl33 = vm.shl.i32 %one, %c33
    %c2 = vm.const.i32 2
    vm.call.import @check.expect_eq_i32(%shl33, %c2) : (i32, i32) -> ()
    %sra = vm.shr.i32.s %min, %c31
    %cm1 = vm.const.i32 -1
    vm.call.import @check.expect_eq_i32(%sra, %cm1) : (i32, i32) -> ()
    %srl = vm.shr.i32.u %min, %c31
    vm.call.import @check.expect_eq_i32(%srl, %one) : (i32, i32) -> ()
    vm.return
  }

  vm.export @test_add_sub_mul
  vm.export @test_div_rem
  vm.export @test_bitwise
  vm.export @test_shifts
}
