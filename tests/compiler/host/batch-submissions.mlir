// strata-batch-submissions: a flow.submit where the host needs what the
// recorded dispatches did, and nowhere else.
// RUN: strata-opt --strata-batch-submissions %s | FileCheck %s

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}

// Reading an argument, a weight and scalars does not wait: the three
// dispatches are one batch. Reading %a through a view does, once.
// CHECK-LABEL: func.func @reads
// CHECK: flow.dispatch @k
// CHECK-NEXT: tensor.extract %arg0
// CHECK-NEXT: arith.constant dense
// CHECK-NEXT: tensor.extract
// CHECK-NEXT: arith.addf
// CHECK-NEXT: flow.dispatch @k
// CHECK-NEXT: tensor.expand_shape
// CHECK-NEXT: flow.submit
// CHECK-NEXT: tensor.extract
// CHECK-NEXT: flow.dispatch @k
// CHECK-NEXT: flow.submit
// CHECK-NEXT: return
func.func @reads(%x: tensor<16xf32>, %i: index) -> (f32, tensor<16xf32>) {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %e0 = tensor.extract %x[%i] : tensor<16xf32>
  %w = arith.constant dense<2.0> : tensor<4xf32>
  %e1 = tensor.extract %w[%i] : tensor<4xf32>
  %s = arith.addf %e0, %e1 : f32
  %b = flow.dispatch @k(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %v = tensor.expand_shape %a [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %e2 = tensor.extract %v[%i, %i] : tensor<4x4xf32>
  %c = flow.dispatch @k(%b) : (tensor<16xf32>) -> tensor<16xf32>
  return %e2, %c : f32, tensor<16xf32>
}

// Calls and branches wait for what was recorded before them; a block with
// no dispatch pending does not.
// CHECK-LABEL: func.func @control
// CHECK: flow.dispatch @k
// CHECK-NEXT: flow.submit
// CHECK-NEXT: call @reads
// CHECK-NEXT: flow.dispatch @k
// CHECK-NEXT: flow.submit
// CHECK-NEXT: cf.br ^bb1
// CHECK: ^bb1
// CHECK-NEXT: return
func.func @control(%x: tensor<16xf32>, %i: index) -> f32 {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %e, %t = call @reads(%a, %i) : (tensor<16xf32>, index) -> (f32, tensor<16xf32>)
  %b = flow.dispatch @k(%t) : (tensor<16xf32>) -> tensor<16xf32>
  cf.br ^next(%b : tensor<16xf32>)
^next(%c: tensor<16xf32>):
  return %e : f32
}
