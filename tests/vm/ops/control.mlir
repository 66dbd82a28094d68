// Branches with block arguments (including a swap that needs a cycle-breaking
// move), cond_br, fused compare-branches, calls with several results,
// recursion, and refs passed through calls.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 6 passed, 0 failed
// RUN: compile-module %s --emit=bytecode-listing | FileCheck --check-prefix=FUSED %s
// FUSED-DAG: add_br.lt.i32.s
// FUSED-DAG: add_br.le.i64.s

vm.module @control {
  vm.import @check.expect_eq_i32(i32, i32)
  vm.import @check.expect_eq_i64(i64, i64)
  vm.import @check.expect_true(i32)

  // Iterative Fibonacci: the back edge passes (b, a + b) for (a, b).
  vm.func @fib_iter(%n: i32) -> i32 {
    %zero = vm.const.i32 0
    %one = vm.const.i32 1
    vm.br ^loop(%zero, %one, %zero : i32, i32, i32)
  ^loop(%a: i32, %b: i32, %i: i32):
    %done = vm.cmp.lt.i32.s %i, %n
    vm.cond_br %done, ^body, ^exit(%a : i32)
  ^body:
    %s = vm.add.i32 %a, %b
    %i1 = vm.add.i32 %i, %one
    vm.br ^loop(%b, %s, %i1 : i32, i32, i32)
  ^exit(%r: i32):
    vm.return %r : i32
  }

  // Swaps its arguments n times through block arguments (a pure cycle).
  vm.func @swap_n(%x: i64, %y: i64, %n: i32) -> (i64, i64) {
    %zero = vm.const.i32 0
    %one = vm.const.i32 1
    vm.br ^loop(%x, %y, %zero : i64, i64, i32)
  ^loop(%a: i64, %b: i64, %i: i32):
    %i1 = vm.add.i32 %i, %one
    vm.cmp_br.le.i32.s %i1, %n, ^loop(%b, %a, %i1 : i64, i64, i32), ^exit(%b, %a : i64, i64)
  ^exit(%p: i64, %q: i64):
    vm.return %p, %q : i64, i64
  }

  vm.func @test_block_args() {
    %c10 = vm.const.i32 10
    %f = vm.call @fib_iter(%c10) : (i32) -> i32
    %c55 = vm.const.i32 55
    vm.call.import @check.expect_eq_i32(%f, %c55) : (i32, i32) -> ()
    %c0 = vm.const.i32 0
    %f0 = vm.call @fib_iter(%c0) : (i32) -> i32
    vm.call.import @check.expect_eq_i32(%f0, %c0) : (i32, i32) -> ()
    vm.return
  }

  vm.func @test_swap_cycle() {
    %x = vm.const.i64 1
    %y = vm.const.i64 2
    // Odd number of body swaps + the exit swap = even: back in order.
    %c3 = vm.const.i32 3
    %p, %q = vm.call @swap_n(%x, %y, %c3) : (i64, i64, i32) -> (i64, i64)
    vm.call.import @check.expect_eq_i64(%p, %x) : (i64, i64) -> ()
    vm.call.import @check.expect_eq_i64(%q, %y) : (i64, i64) -> ()
    %c4 = vm.const.i32 4
    %r, %s = vm.call @swap_n(%x, %y, %c4) : (i64, i64, i32) -> (i64, i64)
    vm.call.import @check.expect_eq_i64(%r, %y) : (i64, i64) -> ()
    vm.call.import @check.expect_eq_i64(%s, %x) : (i64, i64) -> ()
    vm.return
  }

  vm.func @ackermann(%m: i64, %n: i64) -> i64 {
    %zero = vm.const.i64 0
    %one = vm.const.i64 1
    %mz = vm.cmp.eq.i64 %m, %zero
    vm.cond_br %mz, ^m0, ^mpos
  ^m0:
    %n1 = vm.add.i64 %n, %one
    vm.return %n1 : i64
  ^mpos:
    %m1 = vm.sub.i64 %m, %one
    %nz = vm.cmp.eq.i64 %n, %zero
    vm.cond_br %nz, ^n0, ^npos
  ^n0:
    %r0 = vm.call @ackermann(%m1, %one) : (i64, i64) -> i64
    vm.return %r0 : i64
  ^npos:
    %nm1 = vm.sub.i64 %n, %one
    %inner = vm.call @ackermann(%m, %nm1) : (i64, i64) -> i64
    %r1 = vm.call @ackermann(%m1, %inner) : (i64, i64) -> i64
    vm.return %r1 : i64
  }

  vm.func @test_recursion() {
    %m = vm.const.i64 2
    %n = vm.const.i64 3
    %a = vm.call @ackermann(%m, %n) : (i64, i64) -> i64
    %e = vm.const.i64 9
    vm.call.import @check.expect_eq_i64(%a, %e) : (i64, i64) -> ()
    vm.return
  }

  vm.func @divmod(%a: i32, %b: i32) -> (i32, i32) {
    %q = vm.div.i32.s %a, %b
    %r = vm.rem.i32.s %a, %b
    vm.return %q, %r : i32, i32
  }

  vm.func @test_multiple_results() {
    %a = vm.const.i32 17
    %b = vm.const.i32 5
    %q, %r = vm.call @divmod(%a, %b) : (i32, i32) -> (i32, i32)
    %c3 = vm.const.i32 3
    %c2 = vm.const.i32 2
    vm.call.import @check.expect_eq_i32(%q, %c3) : (i32, i32) -> ()
    vm.call.import @check.expect_eq_i32(%r, %c2) : (i32, i32) -> ()
    vm.return
  }

  vm.func @pick(%c: i32, %x: !vm.list, %y: !vm.list) -> !vm.list {
    %r = vm.select.ref %c, %x, %y : !vm.list
    vm.return %r : !vm.list
  }

  vm.func @test_refs_through_calls() {
    %cap = vm.const.i32 4
    %l1 = vm.list.alloc %cap
    %l2 = vm.list.alloc %cap
    %zero = vm.const.i32 0
    %got = vm.call @pick(%zero, %l1, %l2) : (i32, !vm.list, !vm.list) -> !vm.list
    %same = vm.cmp.eq.ref %got, %l2 : !vm.list
    vm.call.import @check.expect_true(%same) : (i32) -> ()
    vm.return
  }

  // Counted loops whose increment feeds the latch compile to add_br
  // superinstructions; the sum stays visible after the loop.
  vm.func @count_i32(%n: i32, %step: i32) -> (i32, i32) {
    %zero = vm.const.i32 0
    vm.br ^loop(%zero, %zero : i32, i32)
  ^loop(%i: i32, %acc: i32):
    %acc1 = vm.add.i32 %acc, %i
    %i1 = vm.add.i32 %i, %step
    vm.cmp_br.lt.i32.s %i1, %n, ^loop(%i1, %acc1 : i32, i32), ^exit(%i1, %acc1 : i32, i32)
  ^exit(%last: i32, %total: i32):
    vm.return %last, %total : i32, i32
  }

  vm.func @count_i64(%n: i64) -> i64 {
    %zero = vm.const.i64 0
    %three = vm.const.i64 3
    vm.br ^loop(%zero : i64)
  ^loop(%i: i64):
    %i1 = vm.add.i64 %i, %three
    vm.cmp_br.le.i64.s %i1, %n, ^loop(%i1 : i64), ^exit(%i1 : i64)
  ^exit(%last: i64):
    vm.return %last : i64
  }

  vm.func @test_add_br() {
    %c10 = vm.const.i32 10
    %c1 = vm.const.i32 1
    %last, %total = vm.call @count_i32(%c10, %c1) : (i32, i32) -> (i32, i32)
    vm.call.import @check.expect_eq_i32(%last, %c10) : (i32, i32) -> ()
    %c45 = vm.const.i32 45
    vm.call.import @check.expect_eq_i32(%total, %c45) : (i32, i32) -> ()
    // A step past the bound leaves after one iteration.
    %c20 = vm.const.i32 20
    %l2, %t2 = vm.call @count_i32(%c10, %c20) : (i32, i32) -> (i32, i32)
    vm.call.import @check.expect_eq_i32(%l2, %c20) : (i32, i32) -> ()
    %c0 = vm.const.i32 0
    vm.call.import @check.expect_eq_i32(%t2, %c0) : (i32, i32) -> ()
    %n = vm.const.i64 10
    %l3 = vm.call @count_i64(%n) : (i64) -> i64
    %c12 = vm.const.i64 12
    vm.call.import @check.expect_eq_i64(%l3, %c12) : (i64, i64) -> ()
    vm.return
  }

  vm.export @test_add_br
  vm.export @test_block_args
  vm.export @test_swap_cycle
  vm.export @test_recursion
  vm.export @test_multiple_results
  vm.export @test_refs_through_calls
}
