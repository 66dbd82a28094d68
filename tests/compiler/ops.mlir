// Every op family of the vm dialect prints as it parses, in the custom and in
// the generic form.
// RUN: strata-opt %s | strata-opt | FileCheck %s
// RUN: strata-opt %s --mlir-print-op-generic | strata-opt | FileCheck %s

// CHECK-LABEL: vm.module @ops
vm.module @ops {
  // CHECK-NEXT: vm.import @check.expect_eq_i64(i64, i64)
  vm.import @check.expect_eq_i64(i64, i64)
  // CHECK-NEXT: vm.import @hal.buffer.allocate(i64) -> !vm.buffer
  vm.import @hal.buffer.allocate(i64) -> !vm.buffer
  // CHECK-NEXT: vm.import @native.pair(!vm.ref) -> (i32, f64)
  vm.import @native.pair(!vm.ref) -> (i32, f64)
  // CHECK-NEXT: vm.global.i32 @counter = 5 : i32
  vm.global.i32 @counter = 5 : i32
  // CHECK-NEXT: vm.global.i64 @zero{{$}}
  vm.global.i64 @zero
  // CHECK-NEXT: vm.global.f32 @scale = 1.500000e+00 : f32
  vm.global.f32 @scale = 1.5 : f32
  // CHECK-NEXT: vm.global.f64 @bias = -2.000000e+00 : f64
  vm.global.f64 @bias = -2.0 : f64
  // CHECK-NEXT: vm.global.ref @cache : !vm.list
  vm.global.ref @cache : !vm.list
  // CHECK-NEXT: vm.rodata @weights dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  vm.rodata @weights dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK-NEXT: vm.rodata @greeting "hello"
  vm.rodata @greeting "hello"

  // CHECK-NEXT: vm.func @scalars(%[[I:.*]]: i32, %[[L:.*]]: i64, %[[F:.*]]: f32, %[[D:.*]]: f64) -> (i32, i64)
  vm.func @scalars(%i: i32, %l: i64, %f: f32, %d: f64) -> (i32, i64) {
    // CHECK-NEXT: %[[C:.*]] = vm.const.i32 7
    %c = vm.const.i32 7
    // CHECK-NEXT: vm.const.i64 -1
    %cl = vm.const.i64 -1
    // CHECK-NEXT: vm.const.f32 2.500000e-01
    %cf = vm.const.f32 0.25
    // CHECK-NEXT: vm.const.f64 1.000000e+10
    %cd = vm.const.f64 1.0e10
    // CHECK-NEXT: %[[SUM:.*]] = vm.add.i32 %[[I]], %[[C]]
    %sum = vm.add.i32 %i, %c
    // CHECK-NEXT: vm.div.i64.s %[[L]], %[[L]]
    %q = vm.div.i64.s %l, %l
    // CHECK-NEXT: vm.not.i64 %[[L]]
    %n = vm.not.i64 %l
    // CHECK-NEXT: vm.max.f32 %[[F]], %[[F]]
    %m = vm.max.f32 %f, %f
    // CHECK-NEXT: vm.sqrt.f64 %[[D]]
    %s = vm.sqrt.f64 %d
    // CHECK-NEXT: vm.cmp.lt.i64.u %[[L]], %[[L]]
    %lt = vm.cmp.lt.i64.u %l, %l
    // CHECK-NEXT: vm.cmp.nan.f32 %[[F]]
    %nan = vm.cmp.nan.f32 %f
    // CHECK-NEXT: vm.ext.i32.i64.s %[[SUM]]
    %e = vm.ext.i32.i64.s %sum
    // CHECK-NEXT: vm.cast.f64.si32 %[[D]]
    %t = vm.cast.f64.si32 %d
    // CHECK-NEXT: vm.bitcast.f32.i32 %[[F]]
    %bits = vm.bitcast.f32.i32 %f
    // CHECK-NEXT: vm.select.i64 %[[I]], %[[L]], %[[L]]
    %sel = vm.select.i64 %i, %l, %l
    // CHECK-NEXT: vm.global.load.i32 @counter : i32
    %g = vm.global.load.i32 @counter : i32
    // CHECK-NEXT: vm.global.store.f64 %[[D]], @bias : f64
    vm.global.store.f64 %d, @bias : f64
    // CHECK-NEXT: vm.cond_fail %[[I]], "i is set"
    vm.cond_fail %i, "i is set"
    // CHECK-NEXT: vm.return %[[SUM]], %[[L]] : i32, i64
    vm.return %sum, %l : i32, i64
  }

  // CHECK: vm.func @refs(%[[B:.*]]: !vm.buffer, %[[LIST:.*]]: !vm.list, %[[R:.*]]: !vm.ref)
  vm.func @refs(%b: !vm.buffer, %list: !vm.list, %r: !vm.ref) {
    // CHECK-NEXT: %[[OFF:.*]] = vm.const.i64 0
    %off = vm.const.i64 0
    // CHECK-NEXT: %[[IDX:.*]] = vm.const.i32 1
    %idx = vm.const.i32 1
    // CHECK-NEXT: vm.const.ref.zero : !vm.list
    %null = vm.const.ref.zero : !vm.list
    // CHECK-NEXT: vm.const.ref.rodata @weights : !vm.buffer
    %w = vm.const.ref.rodata @weights : !vm.buffer
    // CHECK-NEXT: vm.cmp.eq.ref %[[LIST]], %[[LIST]] : !vm.list
    %same = vm.cmp.eq.ref %list, %list : !vm.list
    // CHECK-NEXT: vm.cmp.nz.ref %[[R]] : !vm.ref
    %nz = vm.cmp.nz.ref %r : !vm.ref
    // CHECK-NEXT: vm.select.ref %[[IDX]], %[[B]], %[[B]] : !vm.buffer
    %sel = vm.select.ref %idx, %b, %b : !vm.buffer
    // CHECK-NEXT: %[[NEW:.*]] = vm.buffer.alloc %[[OFF]]
    %new = vm.buffer.alloc %off
    // CHECK-NEXT: vm.buffer.length %[[NEW]]
    %len = vm.buffer.length %new
    // CHECK-NEXT: vm.buffer.copy %[[B]][%[[OFF]]], %[[NEW]][%[[OFF]]], %[[OFF]]
    vm.buffer.copy %b[%off], %new[%off], %off
    // CHECK-NEXT: vm.buffer.fill.i8 %[[B]][%[[OFF]]], %[[OFF]], %[[IDX]]
    vm.buffer.fill.i8 %b[%off], %off, %idx
    // CHECK-NEXT: %[[V:.*]] = vm.buffer.load.i16.s %[[B]][%[[OFF]]] : i32
    %v = vm.buffer.load.i16.s %b[%off] : i32
    // CHECK-NEXT: vm.buffer.store.i8 %[[B]][%[[OFF]]], %[[V]] : i32
    vm.buffer.store.i8 %b[%off], %v : i32
    // CHECK-NEXT: %[[L2:.*]] = vm.list.alloc %[[IDX]]
    %l2 = vm.list.alloc %idx
    // CHECK-NEXT: vm.list.resize %[[L2]], %[[IDX]]
    vm.list.resize %l2, %idx
    // CHECK-NEXT: vm.list.size %[[L2]]
    %size = vm.list.size %l2
    // CHECK-NEXT: vm.list.set.ref %[[L2]][%[[IDX]]], %[[B]] : !vm.buffer
    vm.list.set.ref %l2[%idx], %b : !vm.buffer
    // CHECK-NEXT: vm.list.get.ref %[[L2]][%[[IDX]]] : !vm.buffer
    %e = vm.list.get.ref %l2[%idx] : !vm.buffer
    // CHECK-NEXT: vm.list.get.f64 %[[L2]][%[[IDX]]] : f64
    %x = vm.list.get.f64 %l2[%idx] : f64
    // CHECK-NEXT: vm.global.store.ref %[[L2]], @cache : !vm.list
    vm.global.store.ref %l2, @cache : !vm.list
    // CHECK-NEXT: vm.global.load.ref @cache : !vm.list
    %cached = vm.global.load.ref @cache : !vm.list
    // CHECK-NEXT: vm.call.import @native.pair(%[[B]]) : (!vm.buffer) -> (i32, f64)
    %p:2 = vm.call.import @native.pair(%b) : (!vm.buffer) -> (i32, f64)
    // CHECK-NEXT: vm.return
    vm.return
  }

  // CHECK: vm.func @control(%[[N:.*]]: i64) -> i64
  vm.func @control(%n: i64) -> i64 {
    // CHECK-NEXT: %[[ONE:.*]] = vm.const.i64 1
    %one = vm.const.i64 1
    // CHECK-NEXT: vm.br ^[[LOOP:.*]](%[[ONE]] : i64)
    vm.br ^loop(%one : i64)
  // CHECK-NEXT: ^[[LOOP]](%[[I:.*]]: i64):
  ^loop(%i: i64):
    // CHECK-NEXT: %[[NEXT:.*]] = vm.call @control(%[[I]]) : (i64) -> i64
    %next = vm.call @control(%i) : (i64) -> i64
    // CHECK-NEXT: vm.cmp_br.lt.i64.s %[[NEXT]], %[[N]], ^[[LOOP]](%[[NEXT]] : i64), ^[[TEST:.*]]
    vm.cmp_br.lt.i64.s %next, %n, ^loop(%next : i64), ^test
  // CHECK-NEXT: ^[[TEST]]:
  ^test:
    // CHECK-NEXT: %[[C:.*]] = vm.cmp.eq.i64 %[[N]], %[[ONE]]
    %c = vm.cmp.eq.i64 %n, %one
    // CHECK-NEXT: vm.cond_br %[[C]], ^[[DONE:.*]](%[[N]] : i64), ^[[FAIL:.*]]
    vm.cond_br %c, ^done(%n : i64), ^fail
  // CHECK-NEXT: ^[[FAIL]]:
  ^fail:
    // CHECK-NEXT: vm.call.import @check.expect_eq_i64(%[[N]], %[[ONE]]) : (i64, i64) -> ()
    vm.call.import @check.expect_eq_i64(%n, %one) : (i64, i64) -> ()
    // CHECK-NEXT: vm.fail "unreachable"
    vm.fail "unreachable"
  // CHECK-NEXT: ^[[DONE]](%[[R:.*]]: i64):
  ^done(%r: i64):
    // CHECK-NEXT: vm.return %[[R]] : i64
    vm.return %r : i64
  }

  // CHECK: vm.export @scalars{{$}}
  vm.export @scalars
  // CHECK-NEXT: vm.export @refs as("references")
  vm.export @refs as("references")
}
