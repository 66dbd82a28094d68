// strata-gpu-distribute takes its sizes from the target's resource limits: a
// device with 32 invocations per workgroup gets workgroups of 32, for grid and
// workgroup kernels alike, and a kernel whose temporaries need more workgroup
// memory than the device has is refused, naming both sizes.
// RUN: strata-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(strata-gpu-linalg-to-loops,strata-gpu-distribute{target-env="#spirv.target_env<#spirv.vce<v1.3, [Shader], []>, #spirv.resource_limits<max_compute_workgroup_invocations = 32, max_compute_workgroup_size = [32, 32, 1], max_compute_shared_memory_size = 512>>"}))' | FileCheck %s

// CHECK-LABEL: func.func @scale(
// CHECK-SAME: strata.workgroup_size = array<i32: 32, 1, 1>
func.func @scale(%x: memref<1000xf32>, %out: memref<1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<1000xf32>) outs(%out : memref<1000xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// 32 partial sums of 4 bytes and 32 flags of 4 bytes: 256 bytes, within 512.
// CHECK-LABEL: func.func @sum(
// CHECK-SAME: strata.workgroup_memory = 256 : i64
// CHECK-SAME: strata.workgroup_size = array<i32: 32, 1, 1>
func.func @sum(%x: memref<1000xf32>, %sum: memref<f32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%sum : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<1000xf32>) outs(%sum : memref<f32>) {
  ^bb0(%v: f32, %s: f32):
    %a = arith.addf %v, %s : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A temporary of 1000 floats shared by the invocations: 4000 bytes.
// expected-error @+1 {{needs 4000 bytes of workgroup memory for its temporaries; the target offers 512}}
func.func @twice(%x: memref<1000xf32>, %out: memref<1000xf32>) {
  %t = memref.alloca() : memref<1000xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<1000xf32>) outs(%t : memref<1000xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (1000 - 1 - i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%t : memref<1000xf32>) outs(%out : memref<1000xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}
