// Transients of dynamic size: the three matmul results a, b and c of a
// chain over a batch of unknown size are slots of one allocation made at the
// first dispatch; a and c are never alive together and share a slot, sized
// at run time as the larger of the two (here equal), each slot rounded up to
// 64 bytes. The dynamic function computes what the static one does.
// RUN: compile-module %s --compile-to=vm | FileCheck %s
// RUN: compile-module %s -o %t.smod
// RUN: run-module --module=%t.smod --function=chain_static --input=3x16xf32=0.25 --output=@%t.npy
// RUN: run-module --module=%t.smod --function=chain --input=3x16xf32=0.25 --expected-output=@%t.npy --rtol=0 --atol=0 | FileCheck --check-prefix=RESULT %s

// (Its workgroup counts depend on the batch, so its command buffer is
// recorded on every call, after the allocations.)
// CHECK-LABEL: vm.func @chain(
// CHECK: %[[MAX:.*]] = vm.select.i64
// CHECK: vm.and.i64
// CHECK: vm.and.i64
// CHECK: %[[ARENA:.*]] = vm.call.import @hal.allocator.allocate(
// CHECK-NOT: vm.call.import @hal.allocator.allocate(
// CHECK: vm.call.import @hal.allocator.allocate_preferring(
// CHECK-NOT: vm.call.import @hal.allocator.allocate
// CHECK: vm.call.import @hal.command_buffer.create_streamed
// CHECK-COUNT-4: vm.call.import @hal.command_buffer.dispatch
// CHECK: vm.return
// RESULT: 3x16xf32=

#bcast = affine_map<(i, j) -> (j)>
#id = affine_map<(i, j) -> (i, j)>
func.func @chain(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %w = arith.constant dense<[0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0]> : tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %m = tensor.empty() : tensor<16x16xf32>
  %sq = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<16xf32>) outs(%m : tensor<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %a = linalg.matmul ins(%x, %sq : tensor<?x16xf32>, tensor<16x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  %b = linalg.matmul ins(%a, %sq : tensor<?x16xf32>, tensor<16x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  %c = linalg.matmul ins(%b, %sq : tensor<?x16xf32>, tensor<16x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  %d = linalg.matmul ins(%c, %sq : tensor<?x16xf32>, tensor<16x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %d : tensor<?x16xf32>
}

func.func @chain_static(%x: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %w = arith.constant dense<[0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0]> : tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x16xf32>
  %m = tensor.empty() : tensor<16x16xf32>
  %sq = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<16xf32>) outs(%m : tensor<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x16xf32>) -> tensor<3x16xf32>
  %a = linalg.matmul ins(%x, %sq : tensor<3x16xf32>, tensor<16x16xf32>) outs(%f : tensor<3x16xf32>) -> tensor<3x16xf32>
  %b = linalg.matmul ins(%a, %sq : tensor<3x16xf32>, tensor<16x16xf32>) outs(%f : tensor<3x16xf32>) -> tensor<3x16xf32>
  %c = linalg.matmul ins(%b, %sq : tensor<3x16xf32>, tensor<16x16xf32>) outs(%f : tensor<3x16xf32>) -> tensor<3x16xf32>
  %d = linalg.matmul ins(%c, %sq : tensor<3x16xf32>, tensor<16x16xf32>) outs(%f : tensor<3x16xf32>) -> tensor<3x16xf32>
  return %d : tensor<3x16xf32>
}
