// i64 arithmetic, including wrap-around and shift-amount masking.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: [       OK ] test_add_sub_mul
// CHECK: [       OK ] test_div_rem
// CHECK: [       OK ] test_bitwise
// CHECK: [       OK ] test_shifts
// CHECK: 4 passed, 0 failed

vm.module @int64 {
  vm.import @check.expect_eq_i64(i64, i64)

  vm.func @test_add_sub_mul() {
    %a = vm.const.i64 7
    %b = vm.const.i64 -3
    %max = vm.const.i64 9223372036854775807
    %min = vm.const.i64 -9223372036854775808
    %one = vm.const.i64 1
    %sum = vm.add.i64 %a, %b
    %c4 = vm.const.i64 4
    vm.call.import @check.expect_eq_i64(%sum, %c4) : (i64, i64) -> ()
    %diff = vm.sub.i64 %b, %a
    %cm10 = vm.const.i64 -10
    vm.call.import @check.expect_eq_i64(%diff, %cm10) : (i64, i64) -> ()
    %prod = vm.mul.i64 %a, %b
    %cm21 = vm.const.i64 -21
    vm.call.import @check.expect_eq_i64(%prod, %cm21) : (i64, i64) -> ()
    // Overflow wraps: INT_MAX + 1 == INT_MIN, INT_MIN - 1 == INT_MAX.
    %wrap = vm.add.i64 %max, %one
    vm.call.import @check.expect_eq_i64(%wrap, %min) : (i64, i64) -> ()
    %wrap2 = vm.sub.i64 %min, %one
    vm.call.import @check.expect_eq_i64(%wrap2, %max) : (i64, i64) -> ()
    %sq = vm.mul.i64 %max, %max
    vm.call.import @check.expect_eq_i64(%sq, %one) : (i64, i64) -> ()
    vm.return
  }

  vm.func @test_div_rem() {
    %a = vm.const.i64 -7
    %b = vm.const.i64 2
    %q = vm.div.i64.s %a, %b
    %cm3 = vm.const.i64 -3
    vm.call.import @check.expect_eq_i64(%q, %cm3) : (i64, i64) -> ()
    %r = vm.rem.i64.s %a, %b
    %cm1 = vm.const.i64 -1
    vm.call.import @check.expect_eq_i64(%r, %cm1) : (i64, i64) -> ()
    // -7 as unsigned is 18446744073709551609.
    %qu = vm.div.i64.u %a, %b
    %c9223372036854775804 = vm.const.i64 9223372036854775804
    vm.call.import @check.expect_eq_i64(%qu, %c9223372036854775804) : (i64, i64) -> ()
    %ru = vm.rem.i64.u %a, %b
    %c1 = vm.const.i64 1
    vm.call.import @check.expect_eq_i64(%ru, %c1) : (i64, i64) -> ()
    vm.return
  }

  vm.func @test_bitwise() {
    %a = vm.const.i64 12
    %b = vm.const.i64 10
    %and = vm.and.i64 %a, %b
    %c8 = vm.const.i64 8
    vm.call.import @check.expect_eq_i64(%and, %c8) : (i64, i64) -> ()
    %or = vm.or.i64 %a, %b
    %c14 = vm.const.i64 14
    vm.call.import @check.expect_eq_i64(%or, %c14) : (i64, i64) -> ()
    %xor = vm.xor.i64 %a, %b
    %c6 = vm.const.i64 6
    vm.call.import @check.expect_eq_i64(%xor, %c6) : (i64, i64) -> ()
    %not = vm.not.i64 %a
    %cm13 = vm.const.i64 -13
    vm.call.import @check.expect_eq_i64(%not, %cm13) : (i64, i64) -> ()
    vm.return
  }

  vm.func @test_shifts() {
    %one = vm.const.i64 1
    %c31 = vm.const.i64 63
    %c33 = vm.const.i64 65
    %min = vm.const.i64 -9223372036854775808
    %shl = vm.shl.i64 %one, %c31
    vm.call.import @check.expect_eq_i64(%shl, %min) : (i64, i64) -> ()
    // Shift amounts are taken modulo 64.
    %shl33 = vm.shl.i64 %one, %c33
    %c2 = vm.const.i64 2
    vm.call.import @check.expect_eq_i64(%shl33, %c2) : (i64, i64) -> ()
    %sra = vm.shr.i64.s %min, %c31
    %cm1 = vm.const.i64 -1
    vm.call.import @check.expect_eq_i64(%sra, %cm1) : (i64, i64) -> ()
    %srl = vm.shr.i64.u %min, %c31
    vm.call.import @check.expect_eq_i64(%srl, %one) : (i64, i64) -> ()
    vm.return
  }

  vm.export @test_add_sub_mul
  vm.export @test_div_rem
  vm.export @test_bitwise
  vm.export @test_shifts
}
