// torch's view as torch-mlir exports it: tensor.reshape with its shape built
// by tensor.from_elements from host scalars; the result then feeds a kernel
// that also reads the i64 scalar (two push constants).
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @view(%x: tensor<?xf32>, %rows: i64) -> tensor<?x4xf32> {
  %c4 = arith.constant 4 : i64
  %shape = tensor.from_elements %rows, %c4 : tensor<2xi64>
  %v = tensor.reshape %x(%shape) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %v, %c0 : tensor<?x4xf32>
  %empty = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<?x4xf32>) outs(%empty : tensor<?x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %big = arith.constant 4294967296 : i64
    %offset = arith.subi %rows, %big : i64
    %f = arith.sitofp %offset : i64 to f32
    %scale = arith.constant 2.3283064e-10 : f32  // 2^-32
    %high = arith.mulf %f, %scale : f32
    %s = arith.addf %in, %high : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
