// Ops on dynamic shapes whose operands must agree: the host checks each
// relation before any kernel runs (strata-assert-shapes).
#id = affine_map<(d0) -> (d0)>
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

func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @concat(%a: tensor<?x2xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = tensor.concat dim(0) %a, %b : (tensor<?x2xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @split(%a: tensor<?xf32>, %rows: index) -> tensor<?x4xf32> {
  %r = tensor.expand_shape %a [[0, 1]] output_shape [%rows, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

func.func @slice(%a: tensor<8xf32>, %off: index) -> tensor<4xf32> {
  %s = tensor.extract_slice %a[%off] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}

func.func @place(%d: tensor<8xf32>, %s: tensor<?xf32>, %off: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?xf32>
  %r = tensor.insert_slice %s into %d[%off] [%n] [1] : tensor<?xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @gather(%table: tensor<8xf32>, %idx: tensor<4xi64>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%idx : tensor<4xi64>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i64, %o: f32):
    %ii = arith.index_cast %i : i64 to index
    %v = tensor.extract %table[%ii] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
