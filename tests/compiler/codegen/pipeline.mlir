// The whole strata-cpu-codegen pipeline in strata-opt: a kernel on tensors
// becomes an LLVM dialect entry point (here for 256-bit vectors).
// RUN: strata-opt %s --strata-cpu-codegen="vector-bits=256" | FileCheck %s

// CHECK-NOT: func.func
// CHECK-LABEL: llvm.func @add_relu(
// CHECK-SAME: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.readonly}) -> i32
// CHECK-SAME: strata_cpu.entry_point = {binding_count = 3 : i64, binding_read_only = array<i1: true, true, false>, constant_count = 0 : i64, workgroup_count = array<i64: 1, 1, 1>, workgroup_size = array<i64: 1000, 1, 1>}
// CHECK: llvm.call @add_relu.body
// CHECK-LABEL: llvm.func internal @add_relu.body(
// CHECK: llvm.load {{.*}} -> vector<8xf32>
// CHECK: llvm.fadd {{.*}} : vector<8xf32>
// CHECK: llvm.intr.maximum({{.*}}) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.store {{.*}} : vector<8xf32>, !llvm.ptr
// CHECK-NOT: builtin.unrealized_conversion_cast
func.func @add_relu(%a: tensor<1000xf32>, %b: tensor<1000xf32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                                        affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%a, %b : tensor<1000xf32>, tensor<1000xf32>) outs(%e : tensor<1000xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1000xf32>
  return %r : tensor<1000xf32>
}
