// run-module: results in the input syntax, and a clear message with a
// non-zero exit for each kind of bad invocation.
// RUN: compile-module %s -o %t.smod
// RUN: run-module --module=%t.smod --function=scale --input=i64=21 --input=f32=0.5 | FileCheck %s
// CHECK: i64=42
// CHECK-NEXT: f32=10.5
// RUN: run-module --module=%t.smod --list-functions | FileCheck --check-prefix=LIST %s
// LIST: scale(i64, f32) -> (i64, f32)
// LIST-NEXT: spin(i64) -> (i64)
// RUN: not run-module --module=%t.smod --function=scale --input=i64=1 2>&1 | FileCheck --check-prefix=COUNT %s
// COUNT: run-module: INVALID_ARGUMENT: function scale(i64, f32) -> (i64, f32) expects 2 inputs, got 1
// RUN: not run-module --module=%t.smod --function=scale --input=f32=1 --input=f32=2 2>&1 | FileCheck --check-prefix=TYPE %s
// TYPE: input 0: expected i64, got f32
// RUN: not run-module --module=%t.smod --function=scal --input=i64=1 2>&1 | FileCheck --check-prefix=MISSING %s
// MISSING: NOT_FOUND: function 'scal' not found in module 'tools'; available: scale(i64, f32) -> (i64, f32), spin(i64) -> (i64)
// RUN: not run-module --module=%t.smod --function=scale --input=i64=abc --input=f32=1 2>&1 | FileCheck --check-prefix=LITERAL %s
// LITERAL: input 0: cannot parse 'abc' as i64
// RUN: not run-module --module=%t.smod --function=scale --input=i32=99999999999 --input=f32=1 2>&1 | FileCheck --check-prefix=RANGE %s
// RANGE: cannot parse '99999999999' as i32 (out of range for i32)
// RUN: not run-module --module=%t.smod --function=scale --input=i7=1 --input=f32=1 2>&1 | FileCheck --check-prefix=TYPENAME %s
// TYPENAME: unknown element type 'i7' (expected one of f16, bf16, f32, f64, i1, i8,
// RUN: not run-module --module=%t.missing --function=scale 2>&1 | FileCheck --check-prefix=FILE %s
// FILE: NOT_FOUND: cannot open module file '{{.*}}.missing': No such file or directory
// RUN: not run-module --module=%s --function=scale 2>&1 | FileCheck --check-prefix=FOREIGN %s
// FOREIGN: not a Strata module: file identifier is
// RUN: not run-module --module=%t.smod --function=spin --input=i64=0 --max-steps=1000 2>&1 | FileCheck --check-prefix=BUDGET %s
// BUDGET: RESOURCE_EXHAUSTED: step budget of 1000 branches and calls exhausted
// BUDGET-NEXT: at tools.spin@{{[0-9]+}} ({{.*}}run-module.mlir:[[@LINE+19]]:
// RUN: not run-module --module=%t.smod 2>&1 | FileCheck --check-prefix=NOFN %s
// NOFN: missing --function=NAME
// RUN: not run-module --modul=%t.smod 2>&1 | FileCheck --check-prefix=FLAG %s
// FLAG: unknown argument '--modul={{.*}}'

vm.module @tools {
  vm.func @scale(%x: i64, %y: f32) -> (i64, f32) {
    %two = vm.const.i64 2
    %d = vm.mul.i64 %x, %two
    %f = vm.cast.si64.f32 %x
    %p = vm.mul.f32 %f, %y
    vm.return %d, %p : i64, f32
  }
  // Never ends for x >= 0: the step budget stops it.
  vm.func @spin(%x: i64) -> i64 {
    %zero = vm.const.i64 0
    vm.br ^loop(%x : i64)
  ^loop(%i: i64):
    vm.cmp_br.le.i64.s %zero, %i, ^loop(%i : i64), ^done(%i : i64)
  ^done(%r: i64):
    vm.return %r : i64
  }
  vm.export @scale
  vm.export @spin
}
