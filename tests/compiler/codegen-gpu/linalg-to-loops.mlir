// strata-gpu-linalg-to-loops: each linalg op becomes an scf.parallel nest
// (reductions inside as scf.for), and sizes a linalg op relates are tied: the
// matmul's M is the same value in its input and its output.
// RUN: strata-opt %s --strata-gpu-linalg-to-loops --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[A:.*]]: memref<?x64xf32>, %{{.*}}: memref<64x32xf32>, %[[OUT:.*]]: memref<?x32xf32>)
// CHECK: %[[M:.*]] = memref.dim %[[A]], %c0
// CHECK-NOT: memref.dim
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%[[M]], %c32)
// CHECK: memref.store %cst, %[[OUT]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%[[M]], %c32)
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c64
// CHECK-NOT: linalg.
func.func @layer(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %out: memref<?x32xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%out : memref<?x32xf32>)
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%out : memref<?x32xf32>)
  return
}
