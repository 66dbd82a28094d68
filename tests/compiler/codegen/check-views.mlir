// strata-cpu-check-views checks, in the kernel, that a view taken at offsets,
// sizes or strides from push constants (or of a buffer of dynamic size) lies
// inside its buffer: the host program's own checks are not trusted.
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-check-views))" | FileCheck %s

// CHECK-LABEL: func.func @dynamic_offset
// CHECK-SAME: (%[[A:.*]]: memref<8xf32>, %[[OFF:.*]]: index,
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[DIM:.*]] = memref.dim %[[A]], %{{.*}}
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq, %[[C4]], %[[C0]]
// CHECK: %[[STARTS:.*]] = arith.cmpi ult, %[[OFF]], %[[DIM]]
// CHECK: %[[LAST:.*]] = arith.subi %[[DIM]], %[[C1]]
// CHECK: %[[ROOM:.*]] = arith.subi %[[LAST]], %[[OFF]]
// CHECK: %[[STEPS:.*]] = arith.divui %[[ROOM]], %{{.*}}
// CHECK: %[[SPAN:.*]] = arith.subi %[[C4]], %[[C1]]
// CHECK: %[[ENDS:.*]] = arith.cmpi ule, %[[SPAN]], %[[STEPS]]
// CHECK: cf.assert %{{.*}}, "a slice of a kernel buffer reaches outside it
// CHECK-NEXT: memref.subview %[[A]][%[[OFF]]] [4] [1]
func.func @dynamic_offset(%a: memref<8xf32>, %off: index, %out: memref<4xf32>) {
  %s = memref.subview %a[%off] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  memref.copy %s, %out : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32>
  return
}

// A view whose offsets, sizes and strides are static, of a buffer of static
// shape, is verified when compiled: no check.
// CHECK-LABEL: func.func @static_view
// CHECK-NOT: cf.assert
func.func @static_view(%a: memref<8xf32>, %out: memref<4xf32>) {
  %s = memref.subview %a[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  memref.copy %s, %out : memref<4xf32, strided<[1], offset: 2>> to memref<4xf32>
  return
}

// Static offsets into a buffer of dynamic size are checked against its size.
// CHECK-LABEL: func.func @dynamic_source
// CHECK: cf.assert
// CHECK: memref.subview
func.func @dynamic_source(%a: memref<?xf32>, %out: memref<4xf32>) {
  %s = memref.subview %a[2] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1], offset: 2>>
  memref.copy %s, %out : memref<4xf32, strided<[1], offset: 2>> to memref<4xf32>
  return
}

// Helpers (private functions) are not kernels: their callers' views are
// checked.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: cf.assert
func.func private @helper(%a: memref<8xf32>, %off: index) -> memref<4xf32, strided<[1], offset: ?>> {
  %s = memref.subview %a[%off] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  return %s : memref<4xf32, strided<[1], offset: ?>>
}
