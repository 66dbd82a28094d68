// The module emitter: tables, scalar global layout, rodata placement, the
// encoding of every operand kind, branch lowering (fall-through, remap lists,
// stubs for edges with moves) and source locations, read back from the
// module file that was written.
// RUN: compile-module %s --emit=bytecode-listing | FileCheck %s

// Imports split at the first '.'; signatures are type characters.
// CHECK:      module @emit version 1.2
// CHECK-NEXT: import #0 @check.expect_eq_i32 ii_
// CHECK-NEXT: import #1 @hal.buffer.view rI_ri
// CHECK-NEXT: export "branches" = function #2
// CHECK-NEXT: export "k" = function #0
// Strings are stored once.
// CHECK-NEXT: string #0 "x is set"
// CHECK-NEXT: string #1 "stop"
// Segments under 64 bytes are inline, others 64-byte aligned outside.
// CHECK-NEXT: rodata #0 @small: 4 bytes inline
// CHECK-NEXT: rodata #1 @big: 64 bytes external at 0
// CHECK-NEXT: rodata #2 @bigger: 65 bytes external at 64
// CHECK-NEXT: rodata #3 @text: 6 bytes inline
// Scalar globals at offsets 0, 8, 16, 24; initial bytes up to the last
// nonzero one (@c ends at 20).
// CHECK-NEXT: globals: 32 scalar bytes (20 initialized), 2 refs
// CHECK-NEXT: external data: 129 bytes
vm.module @emit {
  vm.import @check.expect_eq_i32(i32, i32)
  vm.import @hal.buffer.view(!vm.ref, i64) -> (!vm.buffer, i32)
  vm.global.i32 @a = 1 : i32
  vm.global.i64 @b
  vm.global.f32 @c = 2.0 : f32
  vm.global.f64 @d
  vm.global.ref @e : !vm.buffer
  vm.global.ref @f : !vm.list
  vm.rodata @small dense<[1, 2]> : tensor<2xi16>
  vm.rodata @big dense<1.0> : tensor<16xf32>
  vm.rodata @bigger dense<7> : tensor<65xi8>
  vm.rodata @text "strata"

  // Immediates: 32 and 64 bits, floats as their bit patterns.
  // CHECK-LABEL: function #0 @constants _iIfF: 4 scalar, 0 ref registers
  // CHECK-NEXT: 0000  s0 = const.i32 -2  // {{.*}}emit.mlir:[[@LINE+6]]:10
  // CHECK-NEXT: 0007  s1 = const.i64 4294967296  // {{.*}}emit.mlir:[[@LINE+6]]:10
  // CHECK-NEXT: 0012  s2 = const.f32 0.5  // {{.*}}emit.mlir:[[@LINE+6]]:10
  // CHECK-NEXT: 0019  s3 = const.f64 -1.25  // {{.*}}emit.mlir:[[@LINE+6]]:10
  // CHECK-NEXT: 0024  return (s0, s1, s2, s3)  // {{.*}}emit.mlir:[[@LINE+6]]:5
  vm.func @constants() -> (i32, i64, f32, f64) {
    %i = vm.const.i32 -2
    %l = vm.const.i64 4294967296
    %f = vm.const.f32 0.5
    %d = vm.const.f64 -1.25
    vm.return %i, %l, %f, %d : i32, i64, f32, f64
  }

  // Callees, globals and strings by ordinal or offset; lists of tagged
  // registers; constants hoisted to the entry by canonicalization.
  // CHECK-LABEL: function #1 @symbols ir_r: 3 scalar, 1 ref registers
  // CHECK-NEXT: 0000  s1 = const.i64 0
  // CHECK-NEXT: 000b  call.import @check.expect_eq_i32, (s0, s0)
  // CHECK-NEXT: 0016  (r0, s1) = call.import @hal.buffer.view, (r0, s1)
  // CHECK-NEXT: 0025  global.store.i32 s1, global[0]
  // CHECK-NEXT: 002c  s2 = global.load.f32 global[16]
  // CHECK-NEXT: 0033  global.store.f32 s2, global[16]
  // CHECK-NEXT: 003a  s2 = global.load.f64 global[24]
  // CHECK-NEXT: 0041  global.store.f64 s2, global[24]
  // CHECK-NEXT: 0048  global.store.ref r0, ref_global[0]
  // CHECK-NEXT: 004f  r0 = const.ref.rodata @text
  // CHECK-NEXT: 0056  cond_fail s0, "x is set"
  // CHECK-NEXT: 005d  cond_fail s1, "x is set"
  // CHECK-NEXT: 0064  cond_br s0, ^006f, ^0074
  // CHECK-NEXT: 006f  fail "stop"
  // CHECK-NEXT: 0074  return (r0)
  vm.func @symbols(%x: i32, %r: !vm.ref) -> !vm.buffer {
    vm.call.import @check.expect_eq_i32(%x, %x) : (i32, i32) -> ()
    %zero = vm.const.i64 0
    %b, %n = vm.call.import @hal.buffer.view(%r, %zero) : (!vm.ref, i64) -> (!vm.buffer, i32)
    vm.global.store.i32 %n, @a : i32
    %c = vm.global.load.f32 @c : f32
    vm.global.store.f32 %c, @c : f32
    %d = vm.global.load.f64 @d : f64
    vm.global.store.f64 %d, @d : f64
    vm.global.store.ref %b, @e : !vm.buffer
    %t = vm.const.ref.rodata @text : !vm.buffer
    vm.cond_fail %x, "x is set"
    vm.cond_fail %n, "x is set"
    vm.cond_br %x, ^fail, ^done
  ^fail:
    vm.fail "stop"
  ^done:
    vm.return %t : !vm.buffer
  }

  // A vm.br to the next block without moves is dropped. vm.cond_br has no
  // remap list, so its edge that swaps %a and %b goes through a stub after
  // the last block, which breaks the cycle through the scratch register s3.
  // The fused compare-and-branch rows jump on true (through a stub when the
  // edge has moves) and fall through to the false successor when it is next.
  // CHECK-LABEL: function #2 @branches iII_I: 4 scalar, 0 ref registers
  // CHECK-NEXT: 0000  cond_br s0, ^000b, ^0022  // {{.*}}emit.mlir:[[@LINE+10]]:5
  // CHECK-NEXT: 000b  br.lt.i64.s s2, s1, ^0035  // {{.*}}emit.mlir:[[@LINE+11]]:5
  // CHECK-NEXT: 0014  br.le.i64.s s2, s1, ^0014  // {{.*}}emit.mlir:[[@LINE+12]]:5
  // CHECK-NEXT: 001d  return (s1)
  // CHECK-NEXT: 0022  br ^000b, [s2 -> s3, s1 -> s2, s3 -> s1]  // {{.*}}emit.mlir:[[@LINE+6]]:5
  // CHECK-NEXT: 0035  br ^001d, [s2 -> s1]  // {{.*}}emit.mlir:[[@LINE+7]]:5
  // CHECK-NOT: {{.}}
  vm.func @branches(%c: i32, %a: i64, %b: i64) -> i64 {
    vm.br ^fallthrough
  ^fallthrough:
    vm.cond_br %c, ^swap(%b, %a : i64, i64), ^swap(%a, %b : i64, i64)
  ^swap(%x: i64, %y: i64):
    vm.cmp_br.lt.i64.s %x, %y, ^done(%x : i64), ^next
  ^next:
    vm.cmp_br.le.i64.s %x, %y, ^next, ^done(%y : i64)
  ^done(%r: i64):
    vm.return %r : i64
  }
  vm.export @branches
  vm.export @constants as("k")
}
