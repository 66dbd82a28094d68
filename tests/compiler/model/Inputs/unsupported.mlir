// An op outside the dialects a model may use.
func.func @f() -> index {
  %0 = gpu.thread_id x
  return %0 : index
}
