// strata-gpu-distribute: loops over the same iterations fuse, and one
// parallel loop becomes a grid-stride loop over workgroups and invocations;
// the host learns the workgroup count (here 32 * push constant 0 rows / 64).
// A kernel whose loops cannot be fused runs as one workgroup: its invocations
// share each parallel loop, invocation 0 does the rest, and all wait for each
// other after each step.
// RUN: strata-opt %s --strata-gpu-linalg-to-loops --canonicalize --cse --strata-gpu-distribute | FileCheck %s

// CHECK-LABEL: func.func @layer(
// CHECK-SAME: strata.workgroup_count = {factor = 32 : i64, max = 65535 : i64, words = array<i32: 0>}
// CHECK-SAME: strata.workgroup_size = array<i32: 64, 1, 1>
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK: %[[THREAD:.*]] = gpu.thread_id x
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: %[[START:.*]] = arith.addi %{{.*}}, %[[THREAD]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GRID]], %c64
// CHECK: scf.for %{{.*}} = %[[START]] to %{{.*}} step %[[STRIDE]]
// CHECK: memref.store %cst
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK-NOT: scf.parallel
func.func @layer(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %bias: memref<32xf32>,
                 %out: memref<?x32xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%out : memref<?x32xf32>)
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%out : memref<?x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<32xf32>) outs(%out : memref<?x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    %r = arith.maximumf %s, %cst : f32
    linalg.yield %r : f32
  }
  return
}

// The second loop reads every element the first wrote: no fusion.
// CHECK-LABEL: func.func @normalize(
// CHECK-SAME: strata.workgroup_count = array<i32: 1, 1, 1>, strata.workgroup_memory = 2048 : i64
// CHECK-SAME: strata.workgroup_size = array<i32: 256, 1, 1>
// CHECK: memref.alloca() : memref<1xf32>
// CHECK: %[[THREAD:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[THREAD]]
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store
// CHECK: gpu.barrier
// The sum is shared: each invocation folds its terms into workgroup memory,
// then invocation 0 folds those into the result.
// CHECK: %[[PARTIALS:.*]] = memref.alloc() : memref<256xf32, #spirv.storage_class<Workgroup>>
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[PARTIALS]][%[[THREAD]]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %{{.*}} to %c256
// CHECK: memref.load %[[PARTIALS]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[THREAD]] to %c100 step %c256
// CHECK: arith.divf
// CHECK: gpu.barrier
// CHECK-NOT: scf.parallel
func.func @normalize(%x: memref<100xf32>, %sum: memref<f32>, %out: memref<100xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%sum : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<100xf32>) outs(%sum : memref<f32>) {
  ^bb0(%v: f32, %s: f32):
    %a = arith.addf %v, %s : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x, %sum : memref<100xf32>, memref<f32>) outs(%out : memref<100xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %d = arith.divf %v, %s : f32
    linalg.yield %d : f32
  }
  return
}
