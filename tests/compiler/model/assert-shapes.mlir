// strata-assert-shapes: the relations between dynamic dimensions that an op
// relies on become host checks before it; relations that hold by
// construction (an output sized from an input) fold away.
// RUN: strata-opt %s --strata-assert-shapes --split-input-file | FileCheck %s

#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @add
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[M:.*]] = tensor.dim %arg1, %c0
// CHECK: flow.check_equal %[[N]], %[[M]], "'add': linalg.generic at {{.*}}assert-shapes.mlir:[[@LINE+7]]:8 needs dimension 0 of argument 0 and dimension 0 of argument 1 to be equal"
// CHECK-NOT: flow.check_equal
// CHECK: linalg.generic
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// K of a matmul against a static weight: the dynamic side is compared with
// the constant. The chained matmul reads the first one's result, whose
// dimensions are those of its output.
// CHECK-LABEL: func.func @chain
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[K:.*]] = tensor.dim %arg0, %c1
// CHECK: flow.check_equal %[[C8]], %[[K]], "'chain': linalg.matmul at {{.*}} needs dimension 0 of the constant at {{.*}}assert-shapes.mlir:41:8 and dimension 1 of argument 0 to be equal"
// CHECK: linalg.matmul
// CHECK: flow.check_equal %c4, %{{.*}}, "'chain': linalg.matmul at {{.*}} needs dimension 1 of the result of linalg.matmul at {{.*}} and dimension 0 of argument 1 to be equal"
// CHECK: linalg.matmul
func.func @chain(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w = arith.constant dense<1.0> : tensor<8x4xf32>
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%m) : tensor<?x4xf32>
  %r1 = linalg.matmul ins(%a, %w : tensor<?x?xf32>, tensor<8x4xf32>) outs(%e1 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e2 = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r2 = linalg.matmul ins(%r1, %b : tensor<?x4xf32>, tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r2 : tensor<?x?xf32>
}

// -----

// Static shapes need no check.
// CHECK-LABEL: func.func @static
// CHECK-NOT: flow.check_equal
func.func @static(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The sizes of an expand_shape group multiply to the source dimension.
// CHECK-LABEL: func.func @split
// CHECK: %[[P:.*]] = arith.muli %arg1, %c4
// CHECK: %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK: flow.check_equal %[[P]], %[[D]], "'split': tensor.expand_shape at {{.*}} needs the sizes of result dimensions 0, 1 to multiply to dimension 0 of argument 0"
func.func @split(%a: tensor<?xf32>, %rows: index) -> tensor<?x4xf32> {
  %r = tensor.expand_shape %a [[0, 1]] output_shape [%rows, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// A look-up inside a linalg body is checked against the table's size.
// CHECK-LABEL: func.func @gather
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: linalg.generic
// CHECK: %[[OK:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK-NEXT: cf.assert %[[OK]], "'gather': tensor.extract reads an index out of range of dimension 0 of argument 0"
// CHECK-NEXT: tensor.extract
func.func @gather(%table: tensor<?xf32>, %idx: tensor<4xi64>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%idx : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %ii = arith.index_cast %i : i64 to index
    %v = tensor.extract %table[%ii] : tensor<?xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
