// strata-cpu-results-to-bindings turns tensor results into output memref
// arguments; with empty-tensor elimination and one-shot bufferization the
// result is then computed in place in the output binding.
// RUN: strata-opt %s --strata-cpu-results-to-bindings | FileCheck %s
// RUN: strata-opt %s --strata-cpu-results-to-bindings --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize | FileCheck %s --check-prefix=BUFFERS

// CHECK-LABEL: func.func @relu(
// CHECK-SAME: %[[X:.*]]: tensor<?x4xf32> {bufferization.writable = false},
// CHECK-SAME: %[[OUT:.*]]: memref<?x4xf32>) {
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: bufferization.materialize_in_destination %[[R]] in restrict writable %[[OUT]] : (tensor<?x4xf32>, memref<?x4xf32>) -> ()
// CHECK-NEXT: return{{$}}
// BUFFERS-LABEL: func.func @relu(
// BUFFERS-SAME: %[[X:.*]]: memref<?x4xf32>, %[[OUT:.*]]: memref<?x4xf32>) {
// BUFFERS-NOT: memref.alloc
// BUFFERS-NOT: memref.copy
// BUFFERS: linalg.generic {{.*}} ins(%[[X]] : memref<?x4xf32>) outs(%[[OUT]] : memref<?x4xf32>)
func.func @relu(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// Two results, two outputs, in order; memref kernels are left alone.
// CHECK-LABEL: func.func @pair(
// CHECK-SAME: %{{.*}}: tensor<2xf32> {bufferization.writable = false}, %[[FIRST:.*]]: memref<3xi32>, %[[SECOND:.*]]: memref<2xf32>)
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[FIRST]]
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %[[SECOND]]
// CHECK-LABEL: func.func @buffers(%{{.*}}: memref<4xf32>) {
func.func @pair(%a: tensor<2xf32>) -> (tensor<3xi32>, tensor<2xf32>) {
  %c = arith.constant dense<[1, 2, 3]> : tensor<3xi32>
  return %c, %a : tensor<3xi32>, tensor<2xf32>
}
func.func @buffers(%a: memref<4xf32>) {
  return
}
