// strata-codegen-cpu reports problems as diagnostics with a location and
// exits with status 1, leaving no output file behind.
// RUN: split-file %s %t
// RUN: not strata-codegen-cpu %t/alloc.mlir -o %t/alloc.so 2>&1 | FileCheck %s --check-prefix=ALLOC
// RUN: not ls %t/alloc.so
// RUN: not strata-codegen-cpu %t/divti.mlir -o %t/divti.so 2>&1 | FileCheck %s --check-prefix=DIVTI
// RUN: not strata-codegen-cpu %t/divti.mlir --triple=riscv64-linux-gnu -o %t/x.so 2>&1 | FileCheck %s --check-prefix=TRIPLE
// RUN: not strata-codegen-cpu %t/divti.mlir --triple=x86_64-linux-gnu --cpu=pentium9 -o %t/x.so 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not strata-codegen-cpu %t/empty.mlir -o %t/empty.so 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not strata-codegen-cpu %t/divti.mlir --codegen-options="peel=maybe" -o %t/x.so 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not strata-codegen-cpu %t/divti.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT

// ALLOC: alloc.mlir:3:8: error: 'memref.alloc' op allocates on the heap, which a CPU kernel cannot; use memref.alloca or a buffer argument
// DIVTI: error: the kernels need __divti3, which the runtime does not provide to CPU executables
// TRIPLE: error: unsupported CPU target triple 'riscv64-linux-gnu': expected x86_64-linux-gnu or aarch64-linux-gnu
// CPU: error: unknown CPU 'pentium9' for x86_64
// EMPTY: error: the module holds no kernel (a public func.func with a body)
// OPTIONS: invalid --codegen-options 'peel=maybe'
// OUTPUT: no output: give -o FILE or --dump-metadata

//--- alloc.mlir
func.func @k(%a: memref<4xf32>) {
  // A temporary the size of the input.
  %m = memref.alloc() : memref<4xf32>
  return
}

//--- divti.mlir
// 128-bit division is a call to compiler-rt's __divti3.
func.func @k(%a: memref<4xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = memref.load %a[%c0] : memref<4xi64>
  %y = memref.load %a[%c1] : memref<4xi64>
  %xe = arith.extsi %x : i64 to i128
  %ye = arith.extsi %y : i64 to i128
  %q = arith.divsi %xe, %ye : i128
  %r = arith.trunci %q : i128 to i64
  memref.store %r, %a[%c0] : memref<4xi64>
  return
}

//--- empty.mlir
func.func private @helper(%a: memref<4xf32>) {
  return
}
