// torch.cumsum as torch-mlir exports it without decomposition.
func.func @main(%x: tensor<2x7xf32>) -> tensor<2x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x7xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x7xf32>) -> tensor<2x7xf32>
  %e1 = tensor.empty() : tensor<2xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
  %r:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<2x7xf32>) outs(%f0, %f1 : tensor<2x7xf32>, tensor<2xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<2x7xf32>, tensor<2xf32>
  return %r#0 : tensor<2x7xf32>
}
