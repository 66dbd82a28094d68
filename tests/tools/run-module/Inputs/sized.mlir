// A tensor whose size comes from an input: the host computes its bytes.
func.func @filled(%count: i64) -> tensor<?xf32> {
  %n = arith.index_cast %count : i64 to index
  %one = arith.constant 1.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %f : tensor<?xf32>
}
