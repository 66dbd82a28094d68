// A model with weights large enough to live outside the module description.
func.func @shift(%x: tensor<16xf32>) -> tensor<16xf32> {
  %w = arith.constant dense<[1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5]> : tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.add ins(%x, %w : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}
