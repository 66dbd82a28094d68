// strata-cpu-copies-to-linalg rewrites memref.copy as linalg.copy, which is
// tiled and vectorized like other linalg ops (a strided memref.copy would
// otherwise become a call to MLIR's memrefCopy runtime function).
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-copies-to-linalg))" | FileCheck %s

// CHECK-LABEL: func.func @every_other
// CHECK: %[[S:.*]] = memref.subview
// CHECK: %[[T:.*]] = memref.subview
// CHECK: linalg.copy ins(%[[S]] : memref<4x8xf32, strided<[32, 2]>>) outs(%[[T]] : memref<4x8xf32, strided<[16, 1]>>)
// CHECK-NOT: memref.copy
func.func @every_other(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  %s = memref.subview %a[0, 0] [4, 8] [2, 2] : memref<8x16xf32> to memref<4x8xf32, strided<[32, 2]>>
  %t = memref.subview %b[0, 0] [4, 8] [1, 1] : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  memref.copy %s, %t : memref<4x8xf32, strided<[32, 2]>> to memref<4x8xf32, strided<[16, 1]>>
  return
}
