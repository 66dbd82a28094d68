// strata-gpu-pads-to-grids: a tensor.pad becomes one linalg.generic over its
// result, the source read at the clamped index i - low and the padding value
// selected outside it, so that the kernel is one loop for the distributor
// (a fill and a copy into the interior ran as one workgroup).
// pad-kernel.mlir checks the grid a model's pad kernel gets;
// e2e.ops.vulkan runs pads (constant and index-dependent padding) and padded
// convolutions on lavapipe against NumPy.
// RUN: strata-opt %s --split-input-file --strata-gpu-pads-to-grids | FileCheck %s

// CHECK-LABEL: func.func @image
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<1x58x58x64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<1x58x58x64xf32>)
// CHECK: %[[N:.*]] = linalg.index 0
// CHECK: %[[H:.*]] = linalg.index 1
// CHECK: %[[HS:.*]] = arith.subi %[[H]], %c1
// CHECK: %[[HIN:.*]] = arith.cmpi ult, %[[HS]], %c56
// CHECK: %[[HC:.*]] = arith.minui %[[HS]], %c55
// CHECK: %[[W:.*]] = linalg.index 2
// CHECK: %[[WS:.*]] = arith.subi %[[W]], %c1
// CHECK: %[[WIN:.*]] = arith.cmpi ult, %[[WS]], %c56
// CHECK: %[[IN:.*]] = arith.andi %[[HIN]], %[[WIN]]
// CHECK: %[[WC:.*]] = arith.minui %[[WS]], %c55
// CHECK: %[[C:.*]] = linalg.index 3
// CHECK: %[[X:.*]] = tensor.extract %{{.*}}[%[[N]], %[[HC]], %[[WC]], %[[C]]]
// CHECK: %[[R:.*]] = arith.select %[[IN]], %[[X]], %cst
// CHECK: linalg.yield %[[R]]
// CHECK-NOT: tensor.pad
func.func @image(%x: memref<1x56x56x64xf32>, %out: memref<1x58x58x64xf32>) {
  %t = bufferization.to_tensor %x restrict : memref<1x56x56x64xf32> to tensor<1x56x56x64xf32>
  %p = arith.constant 0.0 : f32
  %r = tensor.pad %t low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %p : f32
  } : tensor<1x56x56x64xf32> to tensor<1x58x58x64xf32>
  bufferization.materialize_in_destination %r in restrict writable %out : (tensor<1x58x58x64xf32>, memref<1x58x58x64xf32>) -> ()
  return
}

// -----

// A dynamic dimension that is not padded; the padding value computed from
// the indices, which are the generic's.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0 : tensor<?x7xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[D]]) : tensor<?x10xf32>
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<?x10xf32>)
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[JS:.*]] = arith.subi %[[J]], %c3
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[JS]], %c7
// CHECK: %[[JC:.*]] = arith.minui %[[JS]], %c6
// CHECK: %[[X:.*]] = tensor.extract %arg0[%[[I]], %[[JC]]]
// CHECK: %[[V:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK: %[[P:.*]] = arith.sitofp %[[V]]
// CHECK: arith.select %[[IN]], %[[X]], %[[P]]
func.func @dynamic_batch(%x: tensor<?x7xf32>) -> tensor<?x10xf32> {
  %r = tensor.pad %x low[0, 3] high[0, 0] {
  ^bb0(%i: index, %j: index):
    %v = arith.index_cast %j : index to i32
    %f = arith.sitofp %v : i32 to f32
    tensor.yield %f : f32
  } : tensor<?x7xf32> to tensor<?x10xf32>
  return %r : tensor<?x10xf32>
}

// -----

// A padded dimension of dynamic extent has no last index to clamp to: the
// pad stays (a fill and a copy).
// CHECK-LABEL: func.func @dynamic_padded
// CHECK: tensor.pad
// CHECK-NOT: linalg.generic
func.func @dynamic_padded(%x: tensor<?x7xf32>) -> tensor<?x7xf32> {
  %p = arith.constant 0.0 : f32
  %r = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %p : f32
  } : tensor<?x7xf32> to tensor<?x7xf32>
  return %r : tensor<?x7xf32>
}
