// strata-codegen-cpu reports problems as diagnostics with a location and
// exits with status 1, leaving no output file behind.
// RUN: split-file %s %t
// RUN: not strata-codegen-cpu %t/alloc.mlir -o %t/alloc.so 2>&1 | FileCheck %s --check-prefix=ALLOC
// RUN: not ls %t/alloc.so
// RUN: not strata-codegen-cpu %t/powi.mlir -o %t/powi.so 2>&1 | FileCheck %s --check-prefix=POWI
// RUN: not strata-codegen-cpu %t/powi.mlir --triple=riscv64-linux-gnu -o %t/x.so 2>&1 | FileCheck %s --check-prefix=TRIPLE
// RUN: not strata-codegen-cpu %t/powi.mlir --triple=x86_64-linux-gnu --cpu=pentium9 -o %t/x.so 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not strata-codegen-cpu %t/empty.mlir -o %t/empty.so 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not strata-codegen-cpu %t/powi.mlir --codegen-options="peel=maybe" -o %t/x.so 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not strata-codegen-cpu %t/powi.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT

// ALLOC: alloc.mlir:3:8: error: 'memref.alloc' op allocates on the heap, which a CPU kernel cannot; use memref.alloca or a buffer argument
// POWI: error: the kernels need __powisf2, which the runtime does not provide to CPU executables
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

//--- powi.mlir
func.func @k(%a: memref<4xf32>, %n: i32) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  %r = math.fpowi %x, %n : f32, i32
  memref.store %r, %a[%c0] : memref<4xf32>
  return
}

//--- empty.mlir
func.func private @helper(%a: memref<4xf32>) {
  return
}
