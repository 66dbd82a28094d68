// vm-fuse-compare-branch turns a signed lt/le compare whose only use is the
// condition of a vm.cond_br in its block into one vm.cmp_br op.
// RUN: strata-opt %s --vm-fuse-compare-branch --split-input-file | FileCheck %s

// CHECK-LABEL: vm.func @latch
// CHECK-SAME: (%[[N:.*]]: i64)
vm.module @m {
  vm.func @latch(%n: i64) -> i64 {
    %one = vm.const.i64 1
    vm.br ^loop(%one : i64)
  // CHECK: ^[[LOOP:.*]](%[[I:.*]]: i64):
  ^loop(%i: i64):
    // CHECK-NEXT: %[[NEXT:.*]] = vm.add.i64
    // CHECK-NEXT: vm.cmp_br.le.i64.s %[[NEXT]], %[[N]], ^[[LOOP]](%[[NEXT]] : i64), ^[[EXIT:.*]](%[[I]] : i64)
    %next = vm.add.i64 %i, %one
    %c = vm.cmp.le.i64.s %next, %n
    vm.cond_br %c, ^loop(%next : i64), ^exit(%i : i64)
  ^exit(%r: i64):
    vm.return %r : i64
  }
}

// -----

// The four fusable compares; ops between the compare and the branch stay.
// CHECK-LABEL: vm.func @all
vm.module @m {
  vm.func @all(%a: i32, %b: i32, %x: i64, %y: i64) {
    // CHECK: vm.cmp_br.lt.i32.s %{{.*}}, %{{.*}}, ^bb1, ^bb2
    %c0 = vm.cmp.lt.i32.s %a, %b
    vm.cond_br %c0, ^bb1, ^bb2
  ^bb1:
    // CHECK: vm.add.i32
    // CHECK-NEXT: vm.cmp_br.le.i32.s %{{.*}}, %{{.*}}, ^bb2, ^bb3
    %c1 = vm.cmp.le.i32.s %a, %b
    %unrelated = vm.add.i32 %a, %b
    vm.cond_br %c1, ^bb2, ^bb3
  ^bb2:
    // CHECK: vm.cmp_br.lt.i64.s %{{.*}}, %{{.*}}, ^bb3, ^bb4
    %c2 = vm.cmp.lt.i64.s %x, %y
    vm.cond_br %c2, ^bb3, ^bb4
  ^bb3:
    // CHECK: vm.cmp_br.le.i64.s %{{.*}}, %{{.*}}, ^bb4, ^bb4
    %c3 = vm.cmp.le.i64.s %x, %y
    vm.cond_br %c3, ^bb4, ^bb4
  ^bb4:
    vm.return
  }
}

// -----

// Left alone: a compare with other uses, one from another block, compares
// that have no fused row, and a compare passed on as a block argument too.
// CHECK-LABEL: vm.func @unfused
vm.module @m {
  vm.import @check.expect_true(i32)
  vm.func @unfused(%a: i32, %b: i32) {
    // CHECK: %[[USED:.*]] = vm.cmp.lt.i32.s
    // CHECK-NEXT: vm.call.import @check.expect_true(%[[USED]])
    // CHECK-NEXT: vm.cond_br %[[USED]]
    %used = vm.cmp.lt.i32.s %a, %b
    vm.call.import @check.expect_true(%used) : (i32) -> ()
    vm.cond_br %used, ^bb1, ^bb2
  ^bb1:
    // CHECK: %[[EARLY:.*]] = vm.cmp.le.i32.s
    // CHECK-NEXT: vm.br ^[[LATER:.*]]
    // CHECK: ^[[LATER]]:
    // CHECK-NEXT: vm.cond_br %[[EARLY]]
    %early = vm.cmp.le.i32.s %a, %b
    vm.br ^later
  ^later:
    vm.cond_br %early, ^bb2, ^bb3
  ^bb2:
    // CHECK: vm.cmp.lt.i32.u
    // CHECK-NEXT: vm.cond_br
    %unsigned = vm.cmp.lt.i32.u %a, %b
    vm.cond_br %unsigned, ^bb3, ^bb4(%a : i32)
  ^bb3:
    // CHECK: %[[EQ:.*]] = vm.cmp.eq.i32
    // CHECK-NEXT: vm.cond_br
    %eq = vm.cmp.eq.i32 %a, %b
    vm.cond_br %eq, ^bb4(%a : i32), ^bb5
  ^bb4(%v: i32):
    // CHECK: %[[LT:.*]] = vm.cmp.lt.i32.s
    // CHECK-NEXT: vm.cond_br %[[LT]], ^{{.*}}(%[[LT]] : i32), ^{{.*}}
    %lt = vm.cmp.lt.i32.s %v, %b
    vm.cond_br %lt, ^bb4(%lt : i32), ^bb5
  ^bb5:
    vm.return
  }
}
