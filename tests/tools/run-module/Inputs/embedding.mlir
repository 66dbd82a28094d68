// An embedding look-up as torch-mlir exports it: the token ids index a table
// inside a linalg.generic, guarded by cf.assert bounds checks.
#ids = affine_map<(d0, d1, d2) -> (d0, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @embed(%ids: tensor<1x4xi64>) -> tensor<1x4x3xf32> {
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0 : i64
  %table = arith.constant dense<[[0.0, 0.1, 0.2], [1.0, 1.1, 1.2], [2.0, 2.1, 2.2],
                                 [3.0, 3.1, 3.2], [4.0, 4.1, 4.2]]> : tensor<5x3xf32>
  %empty = tensor.empty() : tensor<1x4x3xf32>
  %result = linalg.generic {indexing_maps = [#ids, #out],
                            iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<1x4xi64>) outs(%empty : tensor<1x4x3xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %column = linalg.index 2 : index
    %below = arith.cmpi slt, %row, %c5 : index
    cf.assert %below, "index must be smaller than dim size"
    %nonneg = arith.cmpi sge, %id, %zero : i64
    cf.assert %nonneg, "index must be larger or equal to 0"
    %v = tensor.extract %table[%row, %column] : tensor<5x3xf32>
    linalg.yield %v : f32
  } -> tensor<1x4x3xf32>
  return %result : tensor<1x4x3xf32>
}
