// The samples compile; the loop's increment and latch become one add_br
// superinstruction jumping to the loop header without moves, and fib's
// base-case test is a fused compare-and-branch.
// RUN: compile-module %samples/vm/loop.mlir -o %t.loop.smod
// RUN: compile-module %samples/vm/fib.mlir -o %t.fib.smod
// RUN: compile-module %samples/vm/loop.mlir --emit=bytecode-listing | FileCheck %s --check-prefix=LOOP
// RUN: compile-module %samples/vm/fib.mlir --emit=vm | FileCheck %s --check-prefix=FIB

// LOOP:      export "loop" = function #0
// LOOP:      function #0 @loop I_I: 4 scalar, 0 ref registers
// LOOP:      [[BODY:[0-9a-f]{4}]]  s1 = add.i64 s1, s3
// LOOP-NEXT: s3 = add_br.le.i64.s s3, s2, s0, ^[[BODY]]
// LOOP-NEXT: return (s1){{.*}}
// LOOP-NOT:  {{.}}

// FIB:      vm.func @fib(%[[N:.*]]: i32) -> i32
// FIB:      vm.cmp_br.lt.i32.s %[[N]], %{{.*}}, ^[[BASE:.*]], ^
// FIB:      vm.call @fib
// FIB:      vm.call @fib
// FIB:      ^[[BASE]]:
// FIB-NEXT: vm.return %[[N]] : i32
