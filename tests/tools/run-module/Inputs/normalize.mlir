// Each row divided by its sum: one kernel whose row sums are a temporary.
func.func @normalize(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%s0 : tensor<4xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  %out = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x8xf32>, tensor<4xf32>) outs(%out : tensor<4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %d = arith.divf %a, %b : f32
      linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
