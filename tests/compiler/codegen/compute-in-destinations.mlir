// strata-cpu-compute-in-destinations: a pad fills the border of its
// destination (two slabs per padded dimension, the later ones over the
// interior of the earlier dimensions, so nothing is written twice) and
// copies its source in; an init that is a (read-only) kernel argument is
// copied into a fresh tensor. After bufferization neither needs a temporary:
// the fills, the copies and the convolution write the output binding.
// RUN: strata-opt %s --strata-cpu-compute-in-destinations | FileCheck %s
// RUN: strata-opt %s --strata-cpu-compute-in-destinations --strata-cpu-results-to-bindings --eliminate-empty-tensors --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize | FileCheck %s --check-prefix=BUFFERS

// CHECK-LABEL: func.func @pad(
// CHECK-SAME: %[[SOURCE:.*]]: tensor<1x64x32x32xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x64x34x34xf32>
// CHECK: %[[INSIDE:.*]] = tensor.insert_slice %[[SOURCE]] into %[[EMPTY]][0, 0, 1, 1] [1, 64, 32, 32] [1, 1, 1, 1]
// CHECK: %[[TOP:.*]] = tensor.extract_slice %[[INSIDE]][0, 0, 0, 0] [1, 64, 1, 34]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[TOP]] : tensor<1x64x1x34xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 33, 0] [1, 64, 1, 34]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1, 0] [1, 64, 32, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1, 33] [1, 64, 32, 1]
// CHECK: %[[PADDED:.*]] = tensor.insert_slice %{{.*}}[0, 0, 1, 33] [1, 64, 32, 1]
// CHECK: return %[[PADDED]]
// BUFFERS-LABEL: func.func @pad(
// BUFFERS-SAME: %[[SOURCE:.*]]: memref<1x64x32x32xf32>, %[[OUT:.*]]: memref<1x64x34x34xf32>
// BUFFERS-NOT: memref.alloc
// BUFFERS: %[[INTERIOR:.*]] = memref.subview %[[OUT]][0, 0, 1, 1] [1, 64, 32, 32] [1, 1, 1, 1]
// BUFFERS: memref.copy %[[SOURCE]], %[[INTERIOR]]
// BUFFERS-COUNT-4: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<1x64x{{1x34|32x1}}xf32, strided<[73984, 1156, 34, 1]{{.*}}>>)
// BUFFERS-NOT: memref.alloc
// BUFFERS-NOT: memref.copy
func.func @pad(%source: tensor<1x64x32x32xf32>) -> tensor<1x64x34x34xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %source low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%n: index, %c: index, %h: index, %w: index):
    tensor.yield %ninf : f32
  } : tensor<1x64x32x32xf32> to tensor<1x64x34x34xf32>
  return %padded : tensor<1x64x34x34xf32>
}

// CHECK-LABEL: func.func @conv_from_bias(
// CHECK-SAME: %[[INPUT:.*]]: tensor<1x10x10x8xf32>, %[[FILTER:.*]]: tensor<16x3x3x8xf32>, %[[BIAS:.*]]: tensor<1x8x8x16xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x8x8x16xf32>
// CHECK: %[[INIT:.*]] = linalg.copy ins(%[[BIAS]] : tensor<1x8x8x16xf32>) outs(%[[EMPTY]] : tensor<1x8x8x16xf32>)
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} outs(%[[INIT]] : tensor<1x8x8x16xf32>)
// BUFFERS-LABEL: func.func @conv_from_bias(
// BUFFERS-SAME: %[[BIAS:[a-z0-9]*]]: memref<1x8x8x16xf32>, %[[OUT:[a-z0-9]*]]: memref<1x8x8x16xf32>
// BUFFERS-NOT: memref.alloc
// BUFFERS: linalg.copy ins(%[[BIAS]] : memref<1x8x8x16xf32>) outs(%[[OUT]] : memref<1x8x8x16xf32>)
// BUFFERS: linalg.conv_2d_nhwc_fhwc {{.*}} outs(%[[OUT]] : memref<1x8x8x16xf32>)
// BUFFERS-NOT: memref.copy
func.func @conv_from_bias(%input: tensor<1x10x10x8xf32>, %filter: tensor<16x3x3x8xf32>,
                          %bias: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %conv = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%input, %filter : tensor<1x10x10x8xf32>, tensor<16x3x3x8xf32>)
      outs(%bias : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %conv : tensor<1x8x8x16xf32>
}

// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[TOKEN:.*]]: tensor<?x1x64xf32>, %[[PATCHES:.*]]: tensor<?x16x64xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty(%{{.*}}) : tensor<?x17x64xf32>
// CHECK: %[[FIRST:.*]] = tensor.insert_slice %[[TOKEN]] into %[[EMPTY]][0, 0, 0]
// CHECK: tensor.insert_slice %[[PATCHES]] into %[[FIRST]][0, 1, 0]
// BUFFERS-LABEL: func.func @concat(
// BUFFERS-SAME: %[[TOKEN:[a-z0-9]*]]: memref<?x1x64xf32>, %[[PATCHES:[a-z0-9]*]]: memref<?x16x64xf32>, %[[OUT:[a-z0-9]*]]: memref<?x17x64xf32>
// BUFFERS-NOT: memref.alloc
// BUFFERS: memref.copy %[[TOKEN]]
// BUFFERS: memref.copy %[[PATCHES]]
// BUFFERS-NOT: memref.alloc
func.func @concat(%token: tensor<?x1x64xf32>, %patches: tensor<?x16x64xf32>) -> tensor<?x17x64xf32> {
  %joined = tensor.concat dim(1) %token, %patches : (tensor<?x1x64xf32>, tensor<?x16x64xf32>) -> tensor<?x17x64xf32>
  return %joined : tensor<?x17x64xf32>
}

// CHECK-LABEL: func.func @conv_from_zero(
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x8x8x16xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<1x8x8x16xf32>)
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} outs(%[[INIT]] : tensor<1x8x8x16xf32>)
// BUFFERS-LABEL: func.func @conv_from_zero(
// BUFFERS-SAME: %[[OUT:[a-z0-9]*]]: memref<1x8x8x16xf32>)
// BUFFERS-NOT: memref.alloc
// BUFFERS-NOT: memref.get_global
// BUFFERS: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<1x8x8x16xf32>)
// BUFFERS: linalg.conv_2d_nhwc_fhwc {{.*}} outs(%[[OUT]] : memref<1x8x8x16xf32>)
func.func @conv_from_zero(%input: tensor<1x10x10x8xf32>, %filter: tensor<16x3x3x8xf32>) -> tensor<1x8x8x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<1x8x8x16xf32>
  %conv = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%input, %filter : tensor<1x10x10x8xf32>, tensor<16x3x3x8xf32>)
      outs(%zero : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %conv : tensor<1x8x8x16xf32>
}
