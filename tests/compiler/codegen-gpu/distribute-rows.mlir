// strata-gpu-distribute on a kernel whose loops all run over the same rows
// and touch what the kernel writes only in their own row (a softmax, a
// layer norm): one workgroup per row at a time, a grid-stride loop over the
// rows, whose invocations share each loop of the row as a single workgroup
// does (tests/compiler/codegen-gpu/distribute.mlir). The host dispatches one
// workgroup per row.
// RUN: strata-opt %s --split-input-file --strata-gpu-linalg-to-loops --canonicalize --cse --strata-gpu-distribute | FileCheck %s

// Softmax's first half over 4 x 128 rows of 128: the row maximum in a
// temporary, then exp(x - max). 512 workgroups of 128 invocations.
// CHECK-LABEL: func.func @softmax_exp(
// CHECK-SAME: strata.workgroup_count = array<i32: 512, 1, 1>
// CHECK-SAME: strata.workgroup_size = array<i32: 128, 1, 1>
// CHECK: %[[TEMP:.*]] = memref.alloc() : memref<4x128xf32, #spirv.storage_class<Workgroup>>
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK: %[[GRID:.*]] = gpu.grid_dim x
// CHECK: scf.for %[[ROW:.*]] = %[[BLOCK]] to %c512 step %[[GRID]] {
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[TEMP]]
// CHECK: gpu.barrier
// CHECK: arith.maxnumf
// CHECK: gpu.barrier
// CHECK: math.exp
// CHECK: gpu.barrier
// CHECK-NOT: scf.parallel
func.func @softmax_exp(%x: memref<4x128x128xf32>, %out: memref<4x128x128xf32>) {
  %cst = arith.constant 0xFFC00000 : f32
  %t = memref.alloca() : memref<4x128xf32>
  linalg.fill ins(%cst : f32) outs(%t : memref<4x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<4x128x128xf32>) outs(%t : memref<4x128xf32>) {
  ^bb0(%v: f32, %m: f32):
    %r = arith.maxnumf %v, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i)>,
                                   affine_map<(b, i, j) -> (b, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %t : memref<4x128x128xf32>, memref<4x128xf32>) outs(%out : memref<4x128x128xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A layer norm's centring over a dynamic number of rows of 256: the row
// sums (a result too), then x - sum / 256. The host dispatches
// ceil(256 * rows / 256) workgroups, one per row.
// CHECK-LABEL: func.func @centre(
// CHECK-SAME: strata.workgroup_count = {factor = 256 : i64, max = 65535 : i64, words = array<i32: 0>}
// CHECK-SAME: strata.workgroup_size = array<i32: 256, 1, 1>
// CHECK: %[[ROWS:.*]] = memref.dim %arg0
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[ROWS]] step %{{.*}} {
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK-NOT: scf.parallel
func.func @centre(%x: memref<?x256xf32>, %sum: memref<?xf32>, %out: memref<?x256xf32>) {
  %cst = arith.constant 0.0 : f32
  linalg.fill ins(%cst : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x256xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%v: f32, %s: f32):
    %a = arith.addf %v, %s : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<?x256xf32>, memref<?xf32>) outs(%out : memref<?x256xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %k = arith.constant 3.906250e-03 : f32
    %m = arith.mulf %s, %k : f32
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// The second loop reads another row of what the first wrote (row 7 - i's
// maximum): one workgroup, as before.
// CHECK-LABEL: func.func @other_row(
// CHECK-SAME: strata.workgroup_count = array<i32: 1, 1, 1>
func.func @other_row(%x: memref<8x64xf32>, %out: memref<8x64xf32>) {
  %cst = arith.constant 0.0 : f32
  %t = memref.alloca() : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%t : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%v: f32, %m: f32):
    %r = arith.maxnumf %v, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (7 - i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8xf32>) outs(%out : memref<8x64xf32>) {
  ^bb0(%m: f32, %o: f32):
    linalg.yield %m : f32
  }
  return
}
