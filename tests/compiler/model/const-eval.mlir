// strata-const-eval: transposes, reshapes and pads of constants are computed
// by the compiler, dense_resource weights stay resources, and a reshape of a
// constant with another use stays a (free) view.
// RUN: strata-opt %s --strata-const-eval | FileCheck %s

// CHECK-LABEL: func.func @transpose_dense
// CHECK-NOT: linalg.transpose
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
func.func @transpose_dense() -> tensor<3x2xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%c : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}

// A 3-d permutation of int16 elements held in a resource blob: the blob
// 0..11 as 2x3x2, permutation [2, 0, 1] gives out[k, i, j] = in[i, j, k].
// CHECK-LABEL: func.func @transpose_resource
// CHECK-NOT: linalg.transpose
// CHECK: %[[C:.*]] = arith.constant dense_resource<[[TBLOB:strata_const_eval[_0-9]*]]> : tensor<2x2x3xi16>
// CHECK: return %[[C]]
func.func @transpose_resource() -> tensor<2x2x3xi16> {
  %c = arith.constant dense_resource<blob16> : tensor<2x3x2xi16>
  %e = tensor.empty() : tensor<2x2x3xi16>
  %t = linalg.transpose ins(%c : tensor<2x3x2xi16>) outs(%e : tensor<2x2x3xi16>) permutation = [2, 0, 1]
  return %t : tensor<2x2x3xi16>
}

// A generic that only moves elements folds like a transpose; a splat stays
// a splat.
// CHECK-LABEL: func.func @copy_generic
// CHECK-NOT: linalg.generic
// CHECK: arith.constant dense<[1, 3, 2, 4]> : tensor<4xi32>
// CHECK: arith.constant dense<7.000000e+00> : tensor<3x2xf32>
#ij = affine_map<(i, j) -> (i, j)>
#ji = affine_map<(i, j) -> (j, i)>
func.func @copy_generic() -> (tensor<4xi32>, tensor<3x2xf32>) {
  %c = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %e = tensor.empty() : tensor<2x2xi32>
  %g = linalg.generic {indexing_maps = [#ji, #ij], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<2x2xi32>) outs(%e : tensor<2x2xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<2x2xi32>
  %flat = tensor.collapse_shape %g [[0, 1]] : tensor<2x2xi32> into tensor<4xi32>
  %s = arith.constant dense<7.0> : tensor<2x3xf32>
  %es = tensor.empty() : tensor<3x2xf32>
  %ts = linalg.transpose ins(%s : tensor<2x3xf32>) outs(%es : tensor<3x2xf32>) permutation = [1, 0]
  return %flat, %ts : tensor<4xi32>, tensor<3x2xf32>
}

// A pad by a constant value, low and high: the padded constant. A splat
// padded with another value becomes dense; padded with its own, a splat.
// A pad of a value that is not a constant stays.
// CHECK-LABEL: func.func @pad
// CHECK-DAG: arith.constant dense<{{\[}}[9.000000e+00, 9.000000e+00, 9.000000e+00], [1.000000e+00, 2.000000e+00, 9.000000e+00], [3.000000e+00, 4.000000e+00, 9.000000e+00]]> : tensor<3x3xf32>
// CHECK-DAG: arith.constant dense<[5, 5, 0]> : tensor<3xi8>
// CHECK-DAG: arith.constant dense<5> : tensor<4xi8>
// CHECK: tensor.pad %arg0 low[0] high[1]
// CHECK-NOT: tensor.pad
// CHECK: return
func.func @pad(%x: tensor<2xf32>) -> (tensor<3x3xf32>, tensor<3xi8>, tensor<4xi8>, tensor<3xf32>) {
  %c = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %nine = arith.constant 9.0 : f32
  %p = tensor.pad %c low[1, 0] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %nine : f32
  } : tensor<2x2xf32> to tensor<3x3xf32>
  %s = arith.constant dense<5> : tensor<2xi8>
  %zero = arith.constant 0 : i8
  %five = arith.constant 5 : i8
  %q = tensor.pad %s low[0] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : i8
  } : tensor<2xi8> to tensor<3xi8>
  %r = tensor.pad %s low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %five : i8
  } : tensor<2xi8> to tensor<4xi8>
  %y = tensor.pad %x low[0] high[1] {
  ^bb0(%i: index):
    tensor.yield %nine : f32
  } : tensor<2xf32> to tensor<3xf32>
  return %p, %q, %r, %y : tensor<3x3xf32>, tensor<3xi8>, tensor<4xi8>, tensor<3xf32>
}

// CHECK-LABEL: func.func @shared_reshape
// CHECK: tensor.expand_shape
func.func @shared_reshape() -> (tensor<4xf32>, tensor<2x2xf32>) {
  %c = arith.constant dense_resource<blob32> : tensor<4xf32>
  %r = tensor.expand_shape %c [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %c, %r : tensor<4xf32>, tensor<2x2xf32>
}

// The same resource padded the same way in two functions is stored once.
// CHECK-LABEL: func.func @pad_shared_a
// CHECK: arith.constant dense_resource<[[BLOB:strata_const_eval[_0-9]*]]> : tensor<6xf32>
func.func @pad_shared_a() -> tensor<6xf32> {
  %c = arith.constant dense_resource<blob32> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %c low[0] high[2] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}
// CHECK-LABEL: func.func @pad_shared_b
// CHECK: arith.constant dense_resource<[[BLOB]]> : tensor<6xf32>
func.func @pad_shared_b() -> tensor<6xf32> {
  %c = arith.constant dense_resource<blob32> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %c low[0] high[2] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}

// The transposed resource's bytes (after the blob's alignment, 8): out[k] is
// in[:, :, k].
// CHECK-DAG: [[TBLOB]]: "0x08000000000002000400060008000A00010003000500070009000B00"
// The padded one's: 1, 2, 3, 4 and two zeros.
// CHECK-DAG: [[BLOB]]: "0x080000000000803F0000004000004040000080400000000000000000"
{-#
  dialect_resources: {
    builtin: {
      blob16: "0x0200000000000100020003000400050006000700080009000A000B00",
      blob32: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
