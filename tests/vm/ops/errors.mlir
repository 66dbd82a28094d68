// Run-time failures: each a clear message with a backtrace that names the
// module, function, pc and source line.
// RUN: compile-module %s -o %t.smod
// RUN: not vm-test-runner %t.smod --function=fail_div_zero 2>&1 | FileCheck --check-prefix=DIV %s
// DIV: INVALID_ARGUMENT: division by zero in div.i32.s
// DIV-NEXT: at errors.divide@{{[0-9]+}} ({{.*}}errors.mlir:[[@LINE+23]]:{{[0-9]+}})
// DIV-NEXT: at errors.fail_div_zero@{{[0-9]+}} ({{.*}}errors.mlir:[[@LINE+29]]:{{[0-9]+}})
// RUN: not vm-test-runner %t.smod --function=fail_overflow 2>&1 | FileCheck --check-prefix=OVF %s
// OVF: INVALID_ARGUMENT: signed division overflow in div.i64.s: -9223372036854775808 / -1
// RUN: not vm-test-runner %t.smod --function=fail_rem_zero 2>&1 | FileCheck --check-prefix=REM %s
// REM: INVALID_ARGUMENT: division by zero in rem.i64.u
// RUN: not vm-test-runner %t.smod --function=fail_message 2>&1 | FileCheck --check-prefix=MSG %s
// MSG: ABORTED: the model refused: input out of range
// RUN: not vm-test-runner %t.smod --function=fail_cond 2>&1 | FileCheck --check-prefix=COND %s
// COND: ABORTED: condition held
// RUN: not vm-test-runner %t.smod --function=fail_check_eq 2>&1 | FileCheck --check-prefix=EQ %s
// EQ: INVALID_ARGUMENT: dimension 0 of 'a' and 'b' differ; they are 8 and -1
// RUN: not vm-test-runner %t.smod --function=fail_check_le 2>&1 | FileCheck --check-prefix=LE %s
// LE: INVALID_ARGUMENT: the slice ends past the tensor; they are 9 and -1
// RUN: not vm-test-runner %t.smod --function=fail_check 2>&1 | FileCheck --check-prefix=CHK %s
// CHK: INVALID_ARGUMENT: in check.expect_eq_i32: expect_eq_i32: expected i32=4, got i32=3
// RUN: vm-test-runner %t.smod | FileCheck --check-prefix=PASS %s
// PASS: 1 passed, 0 failed

vm.module @errors {
  vm.import @check.expect_eq_i32(i32, i32)

  vm.func @divide(%a: i32, %b: i32) -> i32 {
    %q = vm.div.i32.s %a, %b
    vm.return %q : i32
  }

  vm.func @fail_div_zero() {
    %a = vm.const.i32 1
    %z = vm.const.i32 0
    %q = vm.call @divide(%a, %z) : (i32, i32) -> i32
    vm.return
  }

  vm.func @fail_overflow() {
    %min = vm.const.i64 -9223372036854775808
    %m1 = vm.const.i64 -1
    %q = vm.div.i64.s %min, %m1
    vm.return
  }

  vm.func @fail_rem_zero() {
    %a = vm.const.i64 5
    %z = vm.const.i64 0
    %r = vm.rem.i64.u %a, %z
    vm.return
  }

  vm.func @fail_message() {
    vm.fail "the model refused: input out of range"
  }

  vm.func @fail_cond() {
    %t = vm.const.i32 1
    vm.cond_fail %t, "condition held"
    vm.return
  }

  vm.func @fail_check_eq() {
    %a = vm.const.i64 8
    %b = vm.const.i64 -1
    vm.check.eq.i64 %a, %b, "dimension 0 of 'a' and 'b' differ"
    vm.return
  }

  vm.func @fail_check_le() {
    %a = vm.const.i64 9
    %b = vm.const.i64 -1
    vm.check.le.i64.s %a, %b, "the slice ends past the tensor"
    vm.return
  }

  vm.func @fail_check() {
    %a = vm.const.i32 3
    %b = vm.const.i32 4
    vm.call.import @check.expect_eq_i32(%a, %b) : (i32, i32) -> ()
    vm.return
  }

  // cond_fail with a false condition and check.eq with equal values pass.
  vm.func @test_cond_fail_false() {
    %f = vm.const.i32 0
    vm.cond_fail %f, "must not fire"
    %a = vm.const.i64 8
    %b = vm.const.i64 8
    vm.check.eq.i64 %a, %b, "must not fire"
    %m = vm.const.i64 -5
    vm.check.le.i64.s %m, %a, "must not fire"
    vm.return
  }

  vm.export @fail_div_zero
  vm.export @fail_overflow
  vm.export @fail_rem_zero
  vm.export @fail_message
  vm.export @fail_cond
  vm.export @fail_check
  vm.export @fail_check_eq
  vm.export @fail_check_le
  vm.export @test_cond_fail_false
}
