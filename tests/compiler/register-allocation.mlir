// Register allocation: two banks, the calling convention, reuse of dead
// registers, coalescing of block arguments and ordered edge moves.
// RUN: compile-module %s --emit=register-allocation | FileCheck %s

vm.module @regs {
  // Arguments take registers 0, 1, 2, ... of their own bank, in order.
  // CHECK-LABEL: vm.func @arguments: 3 scalar, 2 ref registers
  // CHECK-NEXT: ^bb0(s0, r0, s1, r1, s2):
  // CHECK-NEXT: vm.return s2, r1, s0
  vm.func @arguments(%a: i32, %b: !vm.buffer, %c: i64, %d: !vm.list, %e: f32) -> (f32, !vm.list, i32) {
    vm.return %e, %d, %a : f32, !vm.list, i32
  }

  // A result may take the register of an operand that dies at its op, and a
  // register is reused once its value is dead: three values live at most.
  // CHECK-LABEL: vm.func @reuse: 3 scalar, 0 ref registers
  // CHECK-NEXT: ^bb0(s0, s1):
  // CHECK-NEXT: s2 = vm.mul.i32 s0, s1
  // CHECK-NEXT: s0 = vm.add.i32 s0, s1
  // CHECK-NEXT: s2 = vm.sub.i32 s2, s0
  // CHECK-NEXT: vm.return s2
  vm.func @reuse(%a: i32, %b: i32) -> i32 {
    %p = vm.mul.i32 %a, %b
    %s = vm.add.i32 %a, %b
    %d = vm.sub.i32 %p, %s
    vm.return %d : i32
  }

  // The loop latch passes its new values in the registers of the block
  // arguments they flow into, so the back edge needs no moves; the exit
  // argument takes the register of the sum that flows into it.
  // CHECK-LABEL: vm.func @sum_to: 4 scalar, 0 ref registers
  // CHECK-NEXT: ^bb0(s0):
  // CHECK-NEXT: s1 = vm.const.i64
  // CHECK-NEXT: s2 = vm.const.i64
  // CHECK-NEXT: vm.cmp_br.lt.i64.s s0, s2, ^bb2, ^bb1 [s2 -> s3]
  // CHECK-NEXT: ^bb1(s3, s1):
  // CHECK-NEXT: s1 = vm.add.i64 s1, s3
  // CHECK-NEXT: s3 = vm.add.i64 s3, s2
  // CHECK-NEXT: vm.cmp_br.le.i64.s s3, s0, ^bb1, ^bb2{{$}}
  // CHECK-NEXT: ^bb2(s1):
  // CHECK-NEXT: vm.return s1
  vm.func @sum_to(%n: i64) -> i64 {
    %zero = vm.const.i64 0
    %one = vm.const.i64 1
    %empty = vm.cmp.lt.i64.s %n, %one
    vm.cond_br %empty, ^done(%zero : i64), ^body(%one, %zero : i64, i64)
  ^body(%i: i64, %sum: i64):
    %sum_next = vm.add.i64 %sum, %i
    %i_next = vm.add.i64 %i, %one
    %more = vm.cmp.le.i64.s %i_next, %n
    vm.cond_br %more, ^body(%i_next, %sum_next : i64, i64), ^done(%sum_next : i64)
  ^done(%result: i64):
    vm.return %result : i64
  }

  // Swapping two values on the back edge is a cycle of moves, broken through
  // the scratch register of each bank (s3, r2), which the counts include.
  // CHECK-LABEL: vm.func @swap: 4 scalar, 3 ref registers
  // CHECK-NEXT: ^bb0(s0, s1, r0, r1):
  // CHECK-NEXT: vm.br ^bb1
  // CHECK-NEXT: ^bb1(s0, s1, r0, r1):
  // CHECK-NEXT: s2 = vm.cmp.lt.i32.u s0, s1
  // CHECK-NEXT: vm.cond_br s2, ^bb1 [s0 -> s3, s1 -> s0, s3 -> s1, r0 -> r2, r1 -> r0, r2 -> r1], ^bb2
  // CHECK-NEXT: ^bb2:
  vm.func @swap(%a: i32, %b: i32, %x: !vm.buffer, %y: !vm.buffer) -> (!vm.buffer, !vm.buffer) {
    vm.br ^loop(%a, %b, %x, %y : i32, i32, !vm.buffer, !vm.buffer)
  ^loop(%p: i32, %q: i32, %u: !vm.buffer, %v: !vm.buffer):
    // Signed compares fuse into the branch; this unsigned one cannot.
    %c = vm.cmp.lt.i32.u %p, %q
    vm.cond_br %c, ^loop(%q, %p, %v, %u : i32, i32, !vm.buffer, !vm.buffer), ^exit
  ^exit:
    vm.return %u, %v : !vm.buffer, !vm.buffer
  }

  // A chain of moves runs in the order that reads each register before it is
  // overwritten: %y moves into %x's register before %next moves into %y's.
  // CHECK-LABEL: vm.func @fibonacci:
  // CHECK: ^bb1(s[[X:[0-9]+]], s[[Y:[0-9]+]], s[[I:[0-9]+]]):
  // CHECK-NEXT: s[[NEXT:[0-9]+]] = vm.add.i32 s[[X]], s[[Y]]
  // CHECK-NEXT: s[[I]] = vm.add.i32 s[[I]], s{{[0-9]+}}
  // CHECK-NEXT: vm.cmp_br.lt.i32.s s[[I]], s0, ^bb1 [s[[Y]] -> s[[X]], s[[NEXT]] -> s[[Y]]], ^bb2{{$}}
  // CHECK-NEXT: ^bb2(s[[X]]):
  vm.func @fibonacci(%n: i32) -> i32 {
    %zero = vm.const.i32 0
    %one = vm.const.i32 1
    vm.br ^loop(%zero, %one, %zero : i32, i32, i32)
  ^loop(%x: i32, %y: i32, %i: i32):
    %next = vm.add.i32 %x, %y
    %i_next = vm.add.i32 %i, %one
    vm.cmp_br.lt.i32.s %i_next, %n, ^loop(%y, %next, %i_next : i32, i32, i32), ^exit(%x : i32)
  ^exit(%result: i32):
    vm.return %result : i32
  }

  // Unused results and arguments still get a register of their own while
  // they are written; call results land in the registers listed.
  // CHECK-LABEL: vm.func @calls: 2 scalar, 0 ref registers
  // CHECK-NEXT: ^bb0(s0):
  // CHECK-NEXT: s0, s1 = vm.call s0
  // CHECK-NEXT: vm.return s0
  vm.func @calls(%a: i32) -> i32 {
    %r:2 = vm.call @pair(%a) : (i32) -> (i32, i32)
    vm.return %r#0 : i32
  }
  vm.func @pair(%a: i32) -> (i32, i32) {
    vm.return %a, %a : i32, i32
  }
}
