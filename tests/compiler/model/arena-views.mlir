// A dispatch result read by a later dispatch through a reshape (a view of
// the same buffer on the host) is still a transient: it lives in the
// block's arena until the view's last reader, and only the arena and the
// function's result are allocated per call (torch exports put reshapes
// between most kernels of a transformer).
// RUN: compile-module %s --compile-to=vm | FileCheck %s

// CHECK: vm.func @views({{.*}} strata.transient_bytes = 256 : i64
// CHECK: %[[ARENA:.*]] = vm.const.i64 256
// CHECK-COUNT-1: vm.call.import @hal.allocator.allocate(%{{.*}}, %{{.*}}, %{{.*}}, %[[ARENA]])
// The result: device-local, mappable where that memory is host-visible.
// CHECK-COUNT-1: vm.call.import @hal.allocator.allocate_preferring(
// CHECK-NOT: vm.call.import @hal.allocator.allocate{{(_preferring)?}}(
// CHECK: vm.return
func.func @views(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %flat = tensor.collapse_shape %a [[0, 1]] : tensor<4x16xf32> into tensor<64xf32>
  %o = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%flat : tensor<64xf32>) outs(%o : tensor<64xf32>) {
  ^bb0(%v: f32, %out: f32):
    %m = arith.maximumf %v, %z : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
