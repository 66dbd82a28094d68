// strata-gpu-matrix-tiles=kind=shared (the Vulkan and CUDA targets' choice):
// a matmul with its fill and elementwise epilogue becomes a grid-stride loop
// over tiles of C staged in workgroup memory (A's transposed; both in
// vectors of 4), 8x8 elements per invocation.
// e2e.ops.vulkan runs such kernels (linalg.matmul 200x40 * 40x128, ...) on
// lavapipe against NumPy.
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=shared | FileCheck %s
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=mma | FileCheck %s --check-prefix=MMA
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles="kind=mma mma-stages=1" | FileCheck %s --check-prefix=MMA1
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles="kind=shared fma-tiles-from=1" | FileCheck %s --check-prefix=SMALL

// A dynamic M: 128x128 tiles of 256 invocations, rows of A clamped, stores
// masked, and ceil(2 * M / 256) workgroups: M / 128 tiles of rows, one of
// columns.
// CHECK-LABEL: func.func @layer
// CHECK-SAME: strata.matrix_tiles = "shared"
// CHECK-SAME: strata.workgroup_count = {factor = 2 : i64, max = 65535 : i64, words = array<i32: 1>}
// CHECK-SAME: strata.workgroup_memory = 8192 : i64
// CHECK-SAME: strata.workgroup_size = array<i32: 256, 1, 1>
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<256xvector<4xf32>, #spirv.storage_class<Workgroup>>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<256xvector<4xf32>, #spirv.storage_class<Workgroup>>
// CHECK: %[[M:.*]] = memref.dim %arg3, %{{.*}} : memref<?x128xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: arith.minui
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: memref.load %arg0
// CHECK: vector.from_elements
// CHECK-COUNT-4: memref.load %arg1
// CHECK: vector.from_elements
// CHECK-COUNT-2: memref.load %[[A]]
// CHECK-COUNT-2: memref.load %[[B]]
// CHECK-COUNT-64: math.fma
// CHECK: scf.yield
// CHECK: arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK-NEXT: scf.if
// CHECK: memref.load %arg2
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %arg3
// CHECK-NOT: linalg.
func.func @layer(%arg0: memref<?x64xf32>, %arg1: memref<64x128xf32>, %arg2: memref<128xf32>, %arg3: memref<?x128xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg3 : memref<?x128xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<?x64xf32>, memref<64x128xf32>) outs(%arg3 : memref<?x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %arg2 : memref<?x128xf32>, memref<128xf32>) outs(%arg3 : memref<?x128xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %0 = arith.addf %in, %b : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// bf16 operands widened to f32 in workgroup memory, C rounded back at the
// store. A static 256x192 C gives 12 tiles of 128x64 (N is not a multiple
// of 128), too few, so rows halve too: 4 x 3 tiles of 64x64, 64 invocations.
// CHECK-LABEL: func.func @bf16
// CHECK-SAME: strata.workgroup_count = array<i32: 12, 1, 1>
// CHECK-SAME: strata.workgroup_memory = 4096 : i64
// CHECK-SAME: strata.workgroup_size = array<i32: 64, 1, 1>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: scf.if
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @bf16(%arg0: memref<256x32xbf16>, %arg1: memref<32x192xbf16>, %arg2: memref<256x192xbf16>) {
  %cst = arith.constant 0.000000e+00 : bf16
  linalg.fill ins(%cst : bf16) outs(%arg2 : memref<256x192xbf16>)
  linalg.matmul ins(%arg0, %arg1 : memref<256x32xbf16>, memref<32x192xbf16>) outs(%arg2 : memref<256x192xbf16>)
  return
}

// -----

// A static M from 17 to 31 and N under 64: left to the general
// distribution. N not a multiple of 64 (96): two tiles of 64 columns, the
// second's reads of B kept inside N (column 95 at most), its stores past N
// masked. K not a multiple of 8 (36): the K loop runs to 40, each load of A
// and B at k clamped to K - 1 and zero from K on. Both are 2 tiles, under
// fma-tiles-from (128) on the FMAs, so they take the tiles only with a
// lower threshold.
// CHECK-LABEL: func.func @short
// CHECK-NOT: strata.matrix_tiles
// CHECK: linalg.matmul
// CHECK-LABEL: func.func @thin
// CHECK-NOT: strata.matrix_tiles
// CHECK: linalg.matmul
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: strata.matrix_tiles
// CHECK: linalg.matmul
// CHECK-LABEL: func.func @odd_k
// CHECK-NOT: strata.matrix_tiles
// CHECK: linalg.matmul
// SMALL-LABEL: func.func @thin
// SMALL-NOT: strata.matrix_tiles
// SMALL-LABEL: func.func @narrow
// SMALL-SAME: strata.matrix_tiles = "shared"
// SMALL-SAME: strata.workgroup_count = array<i32: 2, 1, 1>
// SMALL: %[[COL:.*]] = arith.minui %{{.*}}, %c95 : index
// SMALL: memref.load %arg1[%{{.*}}, %[[COL]]] : memref<64x96xf32>
// SMALL: arith.cmpi ult, %{{.*}}, %c96 : index
// SMALL: scf.if
// SMALL: memref.store %{{.*}}, %arg2
// SMALL-LABEL: func.func @odd_k
// SMALL-SAME: strata.matrix_tiles = "shared"
// SMALL: %[[K:.*]] = arith.minui %[[KK:.*]], %c35 : index
// SMALL: %[[A:.*]] = memref.load %arg0[%{{.*}}, %[[K]]]
// SMALL: %[[IN:.*]] = arith.cmpi ult, %[[KK]], %c36 : index
// SMALL: arith.select %[[IN]], %[[A]], %{{.*}} : f32
// SMALL: scf.for %{{.*}} = %c0 to %c40 step %c8 iter_args(
// SMALL-NOT: linalg.
func.func @short(%arg0: memref<24x64xf32>, %arg1: memref<64x128xf32>, %arg2: memref<24x128xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<24x64xf32>, memref<64x128xf32>) outs(%arg2 : memref<24x128xf32>)
  return
}
func.func @thin(%arg0: memref<64x64xf32>, %arg1: memref<64x32xf32>, %arg2: memref<64x32xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<64x64xf32>, memref<64x32xf32>) outs(%arg2 : memref<64x32xf32>)
  return
}
func.func @narrow(%arg0: memref<64x64xf32>, %arg1: memref<64x96xf32>, %arg2: memref<64x96xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<64x64xf32>, memref<64x96xf32>) outs(%arg2 : memref<64x96xf32>)
  return
}
func.func @odd_k(%arg0: memref<64x36xf32>, %arg1: memref<36x128xf32>, %arg2: memref<64x128xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<64x36xf32>, memref<36x128xf32>) outs(%arg2 : memref<64x128xf32>)
  return
}

// -----

// A batch-1 layer (M of 16 or fewer): 32 columns per workgroup of 8 warps,
// each warp summing a share of K (four rows of B at a time, 768 of 784, then
// the last 16 one at a time), the warps' sums added up in workgroup memory
// (256 words per row of C); columns past N (10) and rows past M (1) are
// never stored.
// CHECK-LABEL: func.func @few_rows
// CHECK-SAME: strata.matrix_tiles = "few-rows"
// CHECK-SAME: strata.workgroup_count = array<i32: 1, 1, 1>
// CHECK-SAME: strata.workgroup_memory = 1024 : i64
// CHECK-SAME: strata.workgroup_size = array<i32: 256, 1, 1>
// CHECK-DAG: %[[P:.*]] = memref.alloc() : memref<256xf32, #spirv.storage_class<Workgroup>>
// CHECK-DAG: %[[C768:.*]] = arith.constant 768 : index
// CHECK-DAG: %[[C784:.*]] = arith.constant 784 : index
// CHECK: %[[COL:.*]] = arith.minui %{{.*}}, %c9 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C768]] step %c32 iter_args(
// CHECK-COUNT-4: memref.load %arg1[%{{.*}}, %[[COL]]]
// CHECK: memref.load %arg0
// CHECK: math.fma
// CHECK: scf.yield
// CHECK: %[[REST:.*]] = arith.addi %{{.*}}, %[[C768]] : index
// CHECK: scf.for %{{.*}} = %[[REST]] to %[[C784]] step %c8 iter_args(
// CHECK: math.fma
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[P]]
// CHECK: arith.cmpi ult, %{{.*}}, %c1 : index
// CHECK: arith.cmpi ult, %{{.*}}, %c10 : index
// CHECK: arith.andi
// CHECK: scf.if
// CHECK: memref.load %arg2
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %arg3
// CHECK-NOT: linalg.
func.func @few_rows(%arg0: memref<1x784xf32>, %arg1: memref<784x10xf32>, %arg2: memref<10xf32>, %arg3: memref<1x10xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg3 : memref<1x10xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<1x784xf32>, memref<784x10xf32>) outs(%arg3 : memref<1x10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %arg2 : memref<1x10xf32>, memref<10xf32>) outs(%arg3 : memref<1x10xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// 16 rows, K a multiple of 32, N of 32s: every invocation adds up two rows
// of one column, and none is masked.
// CHECK-LABEL: func.func @few_rows_16
// CHECK-SAME: strata.matrix_tiles = "few-rows"
// CHECK-SAME: strata.workgroup_count = array<i32: 4, 1, 1>
// CHECK-SAME: strata.workgroup_memory = 16384 : i64
// CHECK-NOT: scf.if
// CHECK-COUNT-16: memref.load %{{.*}} : memref<4096xf32, #spirv.storage_class<Workgroup>>
// CHECK-NOT: memref.load %{{.*}} : memref<4096xf32, #spirv.storage_class<Workgroup>>
// CHECK-COUNT-2: memref.store %{{.*}}, %arg2
// CHECK-NOT: memref.store
func.func @few_rows_16(%arg0: memref<16x64xf32>, %arg1: memref<64x128xf32>, %arg2: memref<16x128xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<16x64xf32>, memref<64x128xf32>) outs(%arg2 : memref<16x128xf32>)
  return
}

// -----

// 32 rows: tiles of 64x64 in workgroup memory with the shared kind; CUDA's
// kind takes the few-rows kernel up to 32 rows, every invocation adding up
// four rows of one column (32 KiB of partial sums).
// CHECK-LABEL: func.func @few_rows_32
// CHECK-SAME: strata.matrix_tiles = "shared"
// MMA-LABEL: func.func @few_rows_32
// MMA-SAME: strata.matrix_tiles = "few-rows"
// MMA-SAME: strata.workgroup_count = array<i32: 4, 1, 1>
// MMA-SAME: strata.workgroup_memory = 32768 : i64
// MMA-COUNT-32: memref.load %{{.*}} : memref<8192xf32, #spirv.storage_class<Workgroup>>
// MMA-NOT: memref.load %{{.*}} : memref<8192xf32, #spirv.storage_class<Workgroup>>
// MMA-COUNT-4: memref.store %{{.*}}, %arg2
// MMA-NOT: memref.store
func.func @few_rows_32(%arg0: memref<32x64xf32>, %arg1: memref<64x128xf32>, %arg2: memref<32x128xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<32x64xf32>, memref<64x128xf32>) outs(%arg2 : memref<32x128xf32>)
  return
}

// -----

// On the tensor cores, 96 columns (a multiple of 8, not of 64): B read in
// runs of 8 columns from column 88 at most (by cp.async from the binding's
// address: row k at 192 bytes, column at 2), the stores past N masked.
// MMA-LABEL: func.func @narrow_f16
// MMA-SAME: strata.matrix_tiles = "mma"
// MMA-SAME: strata.workgroup_memory = 24576 : i64
// MMA: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg1 : memref<64x96xf16> -> index
// MMA: %[[COL:.*]] = arith.minui %{{.*}}, %c88 : index
// MMA: %[[ROW:.*]] = arith.muli %{{.*}}, %c192 : index
// MMA: %[[AT:.*]] = arith.addi %[[B]], %[[ROW]] : index
// MMA: %[[COLB:.*]] = arith.muli %[[COL]], %c2 : index
// MMA: arith.addi %[[AT]], %[[COLB]] : index
// MMA: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// MMA: nvvm.cp.async.commit.group
// MMA: nvvm.cp.async.wait.group 1
// MMA: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32
// MMA: nvvm.mma.sync
// MMA: nvvm.cp.async.wait.group 0
// MMA: arith.cmpi ult, %{{.*}}, %c96 : index
// MMA: scf.if
// MMA1-LABEL: func.func @narrow_f16
// MMA1-SAME: strata.matrix_tiles = "mma"
// MMA1: %[[COL:.*]] = arith.minui %{{.*}}, %c88 : index
// MMA1: vector.load %arg1[%{{.*}}, %[[COL]]] {alignment = 16 : i64} : memref<64x96xf16>, vector<8xf16>
// MMA1: nvvm.mma.sync
// MMA1: arith.cmpi ult, %{{.*}}, %c96 : index
// MMA1: scf.if
func.func @narrow_f16(%arg0: memref<256x64xf16>, %arg1: memref<64x96xf16>, %arg2: memref<256x96xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<256x96xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<256x64xf16>, memref<64x96xf16>) outs(%arg2 : memref<256x96xf32>)
  return
}
