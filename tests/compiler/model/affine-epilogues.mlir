// strata-affine-epilogues: an elementwise chain that carries one input
// through constants becomes one math.fma with two constant tensors, computed
// by the compiler; other chains are left alone.
// RUN: strata-opt %s --split-input-file --strata-affine-epilogues | FileCheck %s

// A batch norm as PyTorch's inference exports it, then a ReLU6, over NCHW
// with per-channel constants: a = gamma * rsqrt(var + eps), b = beta - mean *
// a. Channel 0: a = 2 * rsqrt(3 + 1) = 1, b = 0.5 - 1 * 1 = -0.5; channel 1:
// a = 3 * rsqrt(15 + 1) = 0.75, b = -1 - (-2) * 0.75 = 0.5.
// CHECK-LABEL: func.func @batch_norm
// CHECK-DAG: %[[A:.*]] = arith.constant dense<[1.000000e+00, 7.500000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[-5.000000e-01, 5.000000e-01]> : tensor<2xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %[[A]], %[[B]] : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[IA:.*]]: f32, %[[IB:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[F:.*]] = math.fma %[[X]], %[[IA]], %[[IB]] : f32
// CHECK-NEXT: arith.maximumf %[[F]]
// CHECK-NEXT: arith.minimumf
// CHECK-NEXT: linalg.yield
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#channel = affine_map<(n, c, h, w) -> (c)>
func.func @batch_norm(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %mean = arith.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %var = arith.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %gamma = arith.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %beta = arith.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %eps = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %r = linalg.generic {indexing_maps = [#nchw, #channel, #channel, #channel, #channel, #nchw],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %mean, %var, %gamma, %beta : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %m: f32, %v: f32, %g: f32, %b: f32, %out: f32):
    %0 = arith.truncf %eps : f64 to f32
    %1 = arith.addf %v, %0 : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.subf %in, %m : f32
    %4 = arith.mulf %3, %2 : f32
    %5 = arith.mulf %4, %g : f32
    %6 = arith.addf %5, %b : f32
    %7 = arith.maximumf %6, %zero : f32
    %8 = arith.minimumf %7, %six : f32
    linalg.yield %8 : f32
  } -> tensor<1x2x4x4xf32>
  return %r : tensor<1x2x4x4xf32>
}

// -----

// The constants on either side, a division and a negation, and a 0-d
// constant tensor beside the per-row ones: (c - x) / d * s, then an add of
// a second variable input, which ends the chain. Row 0: (4 - x) / 2 * 3 =
// -1.5 x + 6; row 1: (1 - x) / 4 * 3 = -0.75 x + 0.75.
// CHECK-LABEL: func.func @sides
// CHECK-DAG: %[[A:.*]] = arith.constant dense<[-1.500000e+00, -7.500000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[6.000000e+00, 7.500000e-01]> : tensor<2xf32>
// CHECK: ins(%arg0, %arg1, %[[A]], %[[B]] :
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[IA:.*]]: f32, %[[IB:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[F:.*]] = math.fma %[[X]], %[[IA]], %[[IB]] : f32
// CHECK-NEXT: arith.addf %[[F]], %[[Y]]
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#scalar = affine_map<(i, j) -> ()>
func.func @sides(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %d = arith.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %s = arith.constant dense<3.0> : tensor<f32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #row, #row, #scalar, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y, %c, %d, %s : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>)
      outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %iny: f32, %ic: f32, %id: f32, %is: f32, %out: f32):
    %0 = arith.subf %ic, %in : f32
    %1 = arith.divf %0, %id : f32
    %2 = arith.mulf %is, %1 : f32
    %3 = arith.addf %2, %iny : f32
    linalg.yield %3 : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Left alone: one multiply and one add (nothing to gain), a chain through
// two variable inputs, constants of two shapes, and a division by a zero
// constant (a and b would not be finite).
// CHECK-LABEL: func.func @short
// CHECK-NOT: math.fma
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-LABEL: func.func @two_inputs
// CHECK-NOT: math.fma
// CHECK: arith.subf
// CHECK-LABEL: func.func @two_shapes
// CHECK-NOT: math.fma
// CHECK: math.rsqrt
// CHECK-LABEL: func.func @by_zero
// CHECK-NOT: math.fma
// CHECK: arith.divf
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
func.func @short(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %d = arith.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c, %d : tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %ic: f32, %id: f32, %out: f32):
    %0 = arith.mulf %in, %ic : f32
    %1 = arith.addf %0, %id : f32
    linalg.yield %1 : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
func.func @two_inputs(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %iny: f32, %ic: f32, %out: f32):
    %0 = arith.subf %in, %iny : f32
    %1 = arith.mulf %0, %ic : f32
    %2 = arith.divf %1, %ic : f32
    linalg.yield %2 : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
func.func @two_shapes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %d = arith.constant dense<[2.0, 4.0, 8.0]> : tensor<3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c, %d : tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %ic: f32, %id: f32, %out: f32):
    %0 = math.rsqrt %id : f32
    %1 = arith.subf %in, %ic : f32
    %2 = arith.mulf %1, %0 : f32
    linalg.yield %2 : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
func.func @by_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %d = arith.constant dense<[2.0, 0.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c, %d : tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%in: f32, %ic: f32, %id: f32, %out: f32):
    %0 = arith.subf %in, %ic : f32
    %1 = arith.divf %0, %id : f32
    linalg.yield %1 : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
