// strata-fuse-elementwise: chains of elementwise linalg ops fuse into one
// generic, a producer with a second use is not duplicated, and a reshape next
// to a contraction stays in place so the matmul keeps its named form.
// RUN: strata-opt %s --strata-fuse-elementwise | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %add = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%add : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %relu : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @shared_producer
// CHECK: %[[EXP:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[EXP]]
// CHECK: return
func.func @shared_producer(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %exp, %twice : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @head_split
// CHECK: %[[MM:.+]] = linalg.matmul
// CHECK: %[[BIAS:.+]] = linalg.generic
// CHECK-SAME: ins(%[[MM]]
// CHECK: tensor.expand_shape %[[BIAS]] {{\[\[}}0], [1, 2]] output_shape [16, 2, 4]
// CHECK: linalg.transpose
func.func @head_split(%x: tensor<16x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<2x16x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x8xf32>) outs(%f : tensor<16x8xf32>) -> tensor<16x8xf32>
  %bias = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<16x8xf32>, tensor<8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  %heads = tensor.expand_shape %bias [[0], [1, 2]] output_shape [16, 2, 4] : tensor<16x8xf32> into tensor<16x2x4xf32>
  %te = tensor.empty() : tensor<2x16x4xf32>
  %t = linalg.transpose ins(%heads : tensor<16x2x4xf32>) outs(%te : tensor<2x16x4xf32>) permutation = [1, 0, 2]
  return %t : tensor<2x16x4xf32>
}

// A look-up whose result nobody uses goes, checks and all.
// CHECK-LABEL: func.func @unused_lookup(
// CHECK-NOT: linalg.generic
// CHECK-NOT: cf.assert
// CHECK: return %arg0
func.func @unused_lookup(%ids: tensor<4xi64>, %table: tensor<10xf32>) -> tensor<4xi64> {
  %c10 = arith.constant 10 : index
  %e = tensor.empty() : tensor<4xf32>
  %unused = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                            iterator_types = ["parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%id: i64, %o: f32):
    %i = arith.index_cast %id : i64 to index
    %ok = arith.cmpi slt, %i, %c10 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %table[%i] : tensor<10xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %ids : tensor<4xi64>
}
