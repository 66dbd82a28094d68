// strata-gpu-matrix-tiles on bufferized kernels: a matmul with its fill and
// elementwise epilogue becomes a grid-stride loop over 32x32 tiles of C,
// 64 invocations per workgroup, on the instructions `kind` names; kernels
// it cannot tile are left alone. tests/codegen/matrix_tiles_sim.py runs the
// rewritten kernels lane by lane against a plain matmul.
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=mfma | FileCheck %s --check-prefix=MFMA
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=wmma32 | FileCheck %s --check-prefix=WMMA
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=scalar | FileCheck %s --check-prefix=SCALAR
// RUN: not strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=tensor 2>&1 | FileCheck %s --check-prefix=KIND

// A dynamic M: rows of A clamped, stores masked, the count from M's word.
// MFMA-LABEL: func.func @layer
// MFMA-SAME: strata.matrix_tiles = "mfma"
// MFMA-SAME: strata.workgroup_count = {factor = 2 : i64, max = 65535 : i64, words = array<i32: 1>}
// MFMA-SAME: strata.workgroup_size = array<i32: 64, 1, 1>
// MFMA: %[[M:.*]] = memref.dim %arg3, %{{.*}} : memref<?x32xf32>
// MFMA: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// MFMA: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// MFMA: arith.minui
// MFMA-COUNT-4: amdgpu.mfma 16x16x4 %{{.*}} * %{{.*}} + %{{.*}} blgp = none : f32, f32, vector<4xf32>
// MFMA: arith.cmpi ult, %{{.*}}, %[[M]] : index
// MFMA-NEXT: scf.if
// MFMA: memref.load %arg2
// MFMA: arith.maximumf
// MFMA: memref.store %{{.*}}, %arg3
// MFMA-NOT: linalg.
// WMMA-LABEL: func.func @layer
// WMMA-SAME: strata.matrix_tiles = "scalar"
// WMMA-NOT: amdgpu.wmma
// WMMA: return
// SCALAR-LABEL: func.func @layer
// SCALAR-SAME: strata.matrix_tiles = "scalar"
// SCALAR: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// SCALAR-NOT: amdgpu.
// SCALAR: return
func.func @layer(%arg0: memref<?x64xf32>, %arg1: memref<64x32xf32>, %arg2: memref<32xf32>, %arg3: memref<?x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg3 : memref<?x32xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<?x64xf32>, memref<64x32xf32>) outs(%arg3 : memref<?x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %arg2 : memref<?x32xf32>, memref<32xf32>) outs(%arg3 : memref<?x32xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %0 = arith.addf %in, %b : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// f16 operands, accumulated in f32 and rounded to C's f16 at the store; a
// static M that is a multiple of 32 needs no masks.
// MFMA-LABEL: func.func @half
// MFMA-SAME: strata.workgroup_count = array<i32: 4, 1, 1>
// MFMA: vector.from_elements {{.*}} : vector<4xf16>
// MFMA: amdgpu.mfma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} blgp = none : vector<4xf16>, vector<4xf16>, vector<4xf32>
// MFMA-NOT: scf.if
// MFMA: arith.truncf %{{.*}} : f32 to f16
// WMMA-LABEL: func.func @half
// WMMA-SAME: strata.matrix_tiles = "wmma32"
// WMMA: gpu.thread_id x
// WMMA: vector.from_elements {{.*}} : vector<16xf16>
// WMMA-COUNT-2: amdgpu.wmma 16x16x16 %{{.*}} * %{{.*}} + %{{.*}} : vector<16xf16>, vector<16xf16>, vector<8xf32>
// WMMA-NOT: scf.if
// WMMA: return
func.func @half(%arg0: memref<64x128xf16>, %arg1: memref<128x64xf16>, %arg2: memref<64x64xf16>) {
  %cst = arith.constant 0.000000e+00 : f16
  linalg.fill ins(%cst : f16) outs(%arg2 : memref<64x64xf16>)
  linalg.matmul ins(%arg0, %arg1 : memref<64x128xf16>, memref<128x64xf16>) outs(%arg2 : memref<64x64xf16>)
  return
}

// -----

// M is C's: a static A with a dynamic C sizes the grid from C's word.
// MFMA-LABEL: func.func @dynamic_c
// MFMA-SAME: words = array<i32: 0>
// MFMA: memref.dim %arg2
func.func @dynamic_c(%arg0: memref<40x64xf32>, %arg1: memref<64x32xf32>, %arg2: memref<?x32xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<40x64xf32>, memref<64x32xf32>) outs(%arg2 : memref<?x32xf32>)
  return
}

// -----

// N not a multiple of 32, a K that is not a multiple of the instruction's
// step, and a matmul with user-defined maps (a transposed B): left to the
// general distribution.
// MFMA-LABEL: func.func @narrow
// MFMA-NOT: strata.matrix_tiles
// MFMA: linalg.matmul
// MFMA-LABEL: func.func @odd_k
// MFMA-NOT: strata.matrix_tiles
// MFMA: linalg.matmul
// MFMA-LABEL: func.func @transposed
// MFMA-NOT: strata.matrix_tiles
// MFMA: linalg.matmul
func.func @narrow(%arg0: memref<64x64xf32>, %arg1: memref<64x30xf32>, %arg2: memref<64x30xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<64x64xf32>, memref<64x30xf32>) outs(%arg2 : memref<64x30xf32>)
  return
}
func.func @odd_k(%arg0: memref<64x30xf32>, %arg1: memref<30x32xf32>, %arg2: memref<64x32xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<64x30xf32>, memref<30x32xf32>) outs(%arg2 : memref<64x32xf32>)
  return
}
func.func @transposed(%arg0: memref<64x64xf32>, %arg1: memref<32x64xf32>, %arg2: memref<64x32xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%arg0, %arg1 : memref<64x64xf32>, memref<32x64xf32>) outs(%arg2 : memref<64x32xf32>)
  return
}

// KIND: kind 'tensor' is not one of mfma, wmma32, scalar, shared, mma and wgmma

// -----

// A static M of 16 or fewer takes the few-rows kernel whatever the kind
// (shared-tiles.mlir checks its body): K split over the warps, no matrix
// instructions.
// MFMA-LABEL: func.func @batch_one
// MFMA-SAME: strata.matrix_tiles = "few-rows"
// MFMA-NOT: amdgpu.mfma
// WMMA-LABEL: func.func @batch_one
// WMMA-SAME: strata.matrix_tiles = "few-rows"
// SCALAR-LABEL: func.func @batch_one
// SCALAR-SAME: strata.matrix_tiles = "few-rows"
func.func @batch_one(%arg0: memref<1x64xf16>, %arg1: memref<64x32xf16>, %arg2: memref<1x32xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<1x64xf16>, memref<64x32xf16>) outs(%arg2 : memref<1x32xf32>)
  return
}
