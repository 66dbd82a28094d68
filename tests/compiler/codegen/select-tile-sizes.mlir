// strata-cpu-select-tile-sizes attaches workgroup and vector tile sizes to
// each linalg op (here for 256-bit vectors: 8 f32 lanes).
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-select-tile-sizes{vector-bits=256}))" | FileCheck %s
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-select-tile-sizes{vector-bits=512 workgroup-iterations=1024}))" | FileCheck %s --check-prefix=SMALL
// With AVX2's 16 vector registers (32 by default: AVX-512, NEON):
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-select-tile-sizes{vector-bits=256 vector-registers=16}))" | FileCheck %s --check-prefix=AVX2

// Elementwise: one register along the contiguous dimension. 13 x 1000
// iterations fit in one workgroup's share, so the tile is all 13 rows.
// CHECK-LABEL: func.func @add
// CHECK: linalg.add {strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 13, 0>}}
// With a smaller share: ceil(1024 / 1000) = 2 rows per workgroup.
// SMALL-LABEL: func.func @add
// SMALL: linalg.add {strata_cpu.tile_sizes = {vector = array<i64: 1, 16>, workgroup = array<i64: 2, 0>}}
func.func @add(%a: memref<13x1000xf32>, %b: memref<13x1000xf32>, %c: memref<13x1000xf32>) {
  linalg.add ins(%a, %b : memref<13x1000xf32>, memref<13x1000xf32>) outs(%c : memref<13x1000xf32>)
  return
}

// A contraction gets an 8 x (2 registers) x 1 register tile; the fill that
// zeroes its output is split along the same rows, by the same tile, a
// multiple of 8 rows.
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 16, 0>}}
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 16, 0, 0>}}
// SMALL-LABEL: func.func @matmul
// SMALL: linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 16>, workgroup = array<i64: 8, 0>}}
// SMALL: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 8, 0, 0>}}
// With 16 registers the tile has 6 rows: 12 accumulators, the 2 registers
// of a row of the right-hand side and a broadcast (8 rows would spill); the
// workgroup tile is a multiple of 6.
// AVX2-LABEL: func.func @matmul
// AVX2: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 18, 0, 0>}}
func.func @matmul(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// Loops shorter than the tile get static tiles, so no mask: 7 rows exactly,
// and the 13 columns one whole register (8 lanes) then a peeled tile of 5 -
// a vector of 13 lanes would compile to shuffles.
// CHECK-LABEL: func.func @small_matmul
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 7, 8, 1>, workgroup = array<i64: 7, 0, 0>}}
func.func @small_matmul(%a: memref<7x5xf32>, %b: memref<5x13xf32>, %c: memref<7x13xf32>) {
  linalg.matmul ins(%a, %b : memref<7x5xf32>, memref<5x13xf32>) outs(%c : memref<7x13xf32>)
  return
}

// Batch 1: the leading unit dimensions are skipped and the kernel is split
// along the first dimension with work: the output rows of an NHWC
// convolution (one row is 14 x 64 x 3 x 3 x 64 iterations, more than a
// workgroup's share, so 1 row per workgroup; two registers of channels; the
// 14 columns in two even tiles of 7 rather than 8 and 6) ...
// CHECK-LABEL: func.func @conv_batch_one
// CHECK: linalg.conv_2d_nhwc_hwcf {{{.*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 7, 16, 1, 0, 1>, workgroup = array<i64: 0, 1, 0, 0, 0, 0, 0>}
// With 16 registers, 16 / (2 + 1) = 5 output columns: besides its 2
// accumulators each column keeps its broadcast input value live across the
// filter's columns.
// AVX2-LABEL: func.func @conv_batch_one
// AVX2: linalg.conv_2d_nhwc_hwcf {{{.*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 5, 16, 1, 0, 1>
func.func @conv_batch_one(%x: memref<1x16x16x64xf32>, %w: memref<3x3x64x64xf32>, %y: memref<1x14x14x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<1x16x16x64xf32>, memref<3x3x64x64xf32>) outs(%y : memref<1x14x14x64xf32>)
  return
}

// A stride-2 convolution keeps its two registers of filter beside the
// columns: (16 - 2) / 3 = 4 columns with AVX2 (28 as 7 tiles of 4; 5
// columns spilled an accumulator); with 32 registers still 8 (28 as 4 x 7).
// CHECK-LABEL: func.func @conv_stride_two
// CHECK: linalg.conv_2d_nhwc_hwcf {{{.*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 7, 16, 1, 0, 1>
// AVX2-LABEL: func.func @conv_stride_two
// AVX2: linalg.conv_2d_nhwc_hwcf {{{.*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 4, 16, 1, 0, 1>
func.func @conv_stride_two(%x: memref<1x57x57x64xf32>, %w: memref<3x3x64x64xf32>, %y: memref<1x28x28x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : memref<1x57x57x64xf32>, memref<3x3x64x64xf32>) outs(%y : memref<1x28x28x64xf32>)
  return
}

// A convolution with a filter over 1 MiB (3 x 3 x 256 x 512 f32: 4.5 MiB)
// splits along its output channels instead, so each workgroup reads its own
// slice of the filter once rather than all of it for each row.
// CHECK-LABEL: func.func @conv_large_filter
// CHECK-SAME: strata_cpu.split_columns
// CHECK: linalg.conv_2d_nhwc_hwcf {{{.*}}workgroup = array<i64: 0, 0, 0, 16, 0, 0, 0>}
func.func @conv_large_filter(%x: memref<1x9x9x256xf32>, %w: memref<3x3x256x512xf32>, %y: memref<1x7x7x512xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<1x9x9x256xf32>, memref<3x3x256x512xf32>) outs(%y : memref<1x7x7x512xf32>)
  return
}

// ... and the columns of a 1 x N matrix-vector product: 65536 / 512 = 128
// columns per workgroup, a whole number of its 4-register tiles.
// CHECK-LABEL: func.func @matvec
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 1, 32, 1>, workgroup = array<i64: 0, 128, 0>}}
func.func @matvec(%a: memref<1x512xf32>, %b: memref<512x256xf32>, %c: memref<1x256xf32>) {
  linalg.matmul ins(%a, %b : memref<1x512xf32>, memref<512x256xf32>) outs(%c : memref<1x256xf32>)
  return
}

// A matmul with few rows (16) and many columns, with its bias add, is split
// along the columns: the kernel is marked, and both ops take the same
// column tile, a whole number of the matmul's 2-register tiles
// (65536 / (16 x 384) iterations -> 11 columns -> 16).
// CHECK-LABEL: func.func @few_rows
// CHECK-SAME: strata_cpu.split_columns
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 0, 16, 0>}}
// CHECK: workgroup = array<i64: 0, 16>
func.func @few_rows(%a: memref<16x384xf32>, %b: memref<384x1536xf32>, %bias: memref<1536xf32>, %c: memref<16x1536xf32>) {
  linalg.matmul ins(%a, %b : memref<16x384xf32>, memref<384x1536xf32>) outs(%c : memref<16x1536xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<1536xf32>) outs(%c : memref<16x1536xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A few rows more than a tile (up to 4 tiles) are cut into as few row tiles
// as the 32 registers hold (14 rows of 2 registers beside the 2 of the
// right-hand side and a broadcast), of about equal heights: 17 rows in 9 + 8
// rather than 8 + 8 + 1, 32 in 11 + 11 + 10 rather than 4 x 8; 16 stay 8 + 8
// (@few_rows). With 16 registers a tile holds at most 6 rows, the tile
// already taken: 17 rows stay 6 + 6 + 5.
// CHECK-LABEL: func.func @rows_17
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 9, 16, 1>
// AVX2-LABEL: func.func @rows_17
// AVX2: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>
func.func @rows_17(%a: memref<17x128xf32>, %b: memref<128x384xf32>, %c: memref<17x384xf32>) {
  linalg.matmul ins(%a, %b : memref<17x128xf32>, memref<128x384xf32>) outs(%c : memref<17x384xf32>)
  return
}
// CHECK-LABEL: func.func @rows_32
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 11, 16, 1>
func.func @rows_32(%a: memref<32x784xf32>, %b: memref<784x512xf32>, %c: memref<32x512xf32>) {
  linalg.matmul ins(%a, %b : memref<32x784xf32>, memref<784x512xf32>) outs(%c : memref<32x512xf32>)
  return
}
// More rows than 4 tiles keep tiles of 8 (a workgroup's share of rows is
// not known here).
// CHECK-LABEL: func.func @rows_33
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>
func.func @rows_33(%a: memref<33x784xf32>, %b: memref<784x512xf32>, %c: memref<33x512xf32>) {
  linalg.matmul ins(%a, %b : memref<33x784xf32>, memref<784x512xf32>) outs(%c : memref<33x512xf32>)
  return
}

// A matmul with no more rows than a cache-blocked workgroup takes (128) and
// enough work per row to be blocked splits by columns too: by rows it would
// be one workgroup (an encoder layer's 128 x 256 x 1024 feed-forward matmul).
// 65536 / (128 x 256) iterations -> 2 columns -> 16, a whole register tile.
// CHECK-LABEL: func.func @blocked_rows
// CHECK-SAME: strata_cpu.split_columns
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 0, 16, 0>}}
func.func @blocked_rows(%a: memref<128x256xf32>, %b: memref<256x1024xf32>, %c: memref<128x1024xf32>) {
  linalg.matmul ins(%a, %b : memref<128x256xf32>, memref<256x1024xf32>) outs(%c : memref<128x1024xf32>)
  return
}

// A matmul blocked for the caches takes 128 rows per workgroup, and 256 when
// it has at least 4 x 256 rows: each workgroup packs the blocks of the
// right-hand side it reads, so more rows per workgroup mean fewer copies.
// CHECK-LABEL: func.func @blocked_workgroup_rows
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 128, 0, 0>}}
func.func @blocked_workgroup_rows(%a: memref<1000x512xf32>, %b: memref<512x512xf32>, %c: memref<1000x512xf32>) {
  linalg.matmul ins(%a, %b : memref<1000x512xf32>, memref<512x512xf32>) outs(%c : memref<1000x512xf32>)
  return
}
// CHECK-LABEL: func.func @large_blocked_workgroup_rows
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 256, 0, 0>}}
func.func @large_blocked_workgroup_rows(%a: memref<1024x512xf32>, %b: memref<512x512xf32>, %c: memref<1024x512xf32>) {
  linalg.matmul ins(%a, %b : memref<1024x512xf32>, memref<512x512xf32>) outs(%c : memref<1024x512xf32>)
  return
}
// And 512 rows from 4 x 512 rows on.
// CHECK-LABEL: func.func @huge_blocked_workgroup_rows
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 512, 0, 0>}}
func.func @huge_blocked_workgroup_rows(%a: memref<2048x512xf32>, %b: memref<512x512xf32>, %c: memref<2048x512xf32>) {
  linalg.matmul ins(%a, %b : memref<2048x512xf32>, memref<512x512xf32>) outs(%c : memref<2048x512xf32>)
  return
}

// From 1024 columns as well, the workgroups take tiles of all the rows and a
// quarter of the columns (the 4 row tiles of 256 they would have taken), as
// many of them: each packs the blocks of the right-hand side for its columns
// once, where each row tile packed all of them (DistributeToWorkgroups hands
// out the 1 x 4 grid).
// CHECK-LABEL: func.func @grid_blocked_workgroups
// CHECK: linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 1024, 256>}}
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 1024, 256, 0>}}
func.func @grid_blocked_workgroups(%a: memref<1024x1024xf32>, %b: memref<1024x1024xf32>, %c: memref<1024x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<1024x1024xf32>)
  linalg.matmul ins(%a, %b : memref<1024x1024xf32>, memref<1024x1024xf32>) outs(%c : memref<1024x1024xf32>)
  return
}
// Where the columns do not split into as many blocks of 256 as there are row
// tiles (8 of 512 rows, 1024 columns), tiles of twice the rows and half the
// columns.
// CHECK-LABEL: func.func @grid_two_by_two
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 1024, 512, 0>}}
func.func @grid_two_by_two(%a: memref<4096x256xf32>, %b: memref<256x1024xf32>, %c: memref<4096x1024xf32>) {
  linalg.matmul ins(%a, %b : memref<4096x256xf32>, memref<256x1024xf32>) outs(%c : memref<4096x1024xf32>)
  return
}
// Nor with a left-hand side over 4 MiB (2048 x 2048 f32: 16 MiB), which each
// of a workgroup's blocks of columns would read all of: tiles of twice the
// rows and half the columns.
// CHECK-LABEL: func.func @grid_large_left_side
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 1024, 1024, 0>}}
func.func @grid_large_left_side(%a: memref<2048x2048xf32>, %b: memref<2048x2048xf32>, %c: memref<2048x2048xf32>) {
  linalg.matmul ins(%a, %b : memref<2048x2048xf32>, memref<2048x2048xf32>) outs(%c : memref<2048x2048xf32>)
  return
}
// Not when an op reduces across the columns (its tiles would need all of
// them), nor with fewer rows than 4 tiles of 256.
// CHECK-LABEL: func.func @grid_columns_reduced
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 256, 0, 0>}}
func.func @grid_columns_reduced(%a: memref<1024x1024xf32>, %b: memref<1024x1024xf32>, %sum: memref<1024x1xf32>) {
  %c = memref.alloca() : memref<1024x1024xf32>
  linalg.matmul ins(%a, %b : memref<1024x1024xf32>, memref<1024x1024xf32>) outs(%c : memref<1024x1024xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<1024x1024xf32>) outs(%sum : memref<1024x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
// CHECK-LABEL: func.func @grid_few_rows
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 128, 0, 0>}}
func.func @grid_few_rows(%a: memref<768x1024xf32>, %b: memref<1024x1024xf32>, %c: memref<768x1024xf32>) {
  linalg.matmul ins(%a, %b : memref<768x1024xf32>, memref<1024x1024xf32>) outs(%c : memref<768x1024xf32>)
  return
}

// With a row reduction after it (its 16 x 1 output has no columns to split),
// the same matmul is split by rows; large enough to be blocked for the caches,
// it takes up to 128 rows per workgroup, here all 16.
// CHECK-LABEL: func.func @few_rows_then_reduce
// CHECK-NOT: strata_cpu.split_columns
// CHECK: linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 16, 0, 0>}}
func.func @few_rows_then_reduce(%a: memref<16x384xf32>, %b: memref<384x1536xf32>, %sum: memref<16x1xf32>) {
  %c = memref.alloca() : memref<16x1536xf32>
  linalg.matmul ins(%a, %b : memref<16x384xf32>, memref<384x1536xf32>) outs(%c : memref<16x1536xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<16x1536xf32>) outs(%sum : memref<16x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A row reduction vectorizes along the reduced, contiguous dimension and is
// split along the rows.
// CHECK-LABEL: func.func @row_sum
// CHECK: strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 13, 0>}
func.func @row_sum(%in: memref<13x1000xf32>, %out: memref<13xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%in : memref<13x1000xf32>) outs(%out : memref<13xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// The second op reads the transposed buffer across rows another workgroup
// would write: the kernel is not split (no workgroup tiles).
// CHECK-LABEL: func.func @transpose_then_read
// CHECK: linalg.transpose
// CHECK-SAME: workgroup = array<i64: 0, 0>
// CHECK: linalg.generic
// CHECK-SAME: workgroup = array<i64: 0, 0>
func.func @transpose_then_read(%a: memref<8x8xf32>, %t: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.transpose ins(%a : memref<8x8xf32>) outs(%t : memref<8x8xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// A pad as CPUComputeInDestinations writes it: a copy into the interior and
// fills of the border, each through its own subview of the result, which no
// op reads. The pieces are disjoint, so each op is split along its own
// first dimension with work: 6 rows of the interior (a row's work is the
// copy's 112 x 96 iterations and the fills' 96 to 114 x 96 together: 6
// rows are about a workgroup's share), 6 columns of the top and bottom
// rows, 6 rows of the left and right columns.
// SMALL-LABEL: func.func @pad_pieces
// SMALL: linalg.copy {{.*}}workgroup = array<i64: 0, 1, 0, 0>
// CHECK-LABEL: func.func @pad_pieces
// CHECK: linalg.copy {{.*}}workgroup = array<i64: 0, 6, 0, 0>
// CHECK: linalg.fill {{.*}}workgroup = array<i64: 0, 0, 6, 0>
// CHECK: linalg.fill {{.*}}workgroup = array<i64: 0, 0, 6, 0>
// CHECK: linalg.fill {{.*}}workgroup = array<i64: 0, 6, 0, 0>
// CHECK: linalg.fill {{.*}}workgroup = array<i64: 0, 6, 0, 0>
func.func @pad_pieces(%in: memref<1x112x112x96xf32>, %out: memref<1x114x114x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %interior = memref.subview %out[0, 1, 1, 0] [1, 112, 112, 96] [1, 1, 1, 1] : memref<1x114x114x96xf32> to memref<1x112x112x96xf32, strided<[1247616, 10944, 96, 1], offset: 11040>>
  linalg.copy ins(%in : memref<1x112x112x96xf32>) outs(%interior : memref<1x112x112x96xf32, strided<[1247616, 10944, 96, 1], offset: 11040>>)
  %top = memref.subview %out[0, 0, 0, 0] [1, 1, 114, 96] [1, 1, 1, 1] : memref<1x114x114x96xf32> to memref<1x1x114x96xf32, strided<[1247616, 10944, 96, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x114x96xf32, strided<[1247616, 10944, 96, 1]>>)
  %bottom = memref.subview %out[0, 113, 0, 0] [1, 1, 114, 96] [1, 1, 1, 1] : memref<1x114x114x96xf32> to memref<1x1x114x96xf32, strided<[1247616, 10944, 96, 1], offset: 1236672>>
  linalg.fill ins(%zero : f32) outs(%bottom : memref<1x1x114x96xf32, strided<[1247616, 10944, 96, 1], offset: 1236672>>)
  %left = memref.subview %out[0, 1, 0, 0] [1, 112, 1, 96] [1, 1, 1, 1] : memref<1x114x114x96xf32> to memref<1x112x1x96xf32, strided<[1247616, 10944, 96, 1], offset: 10944>>
  linalg.fill ins(%zero : f32) outs(%left : memref<1x112x1x96xf32, strided<[1247616, 10944, 96, 1], offset: 10944>>)
  %right = memref.subview %out[0, 1, 113, 0] [1, 112, 1, 96] [1, 1, 1, 1] : memref<1x114x114x96xf32> to memref<1x112x1x96xf32, strided<[1247616, 10944, 96, 1], offset: 21792>>
  linalg.fill ins(%zero : f32) outs(%right : memref<1x112x1x96xf32, strided<[1247616, 10944, 96, 1], offset: 21792>>)
  return
}

// Pieces that overlap (a fill of the whole result, then a copy into its
// interior, as upstream's pad lowering writes it) must run in order: not
// split.
// CHECK-LABEL: func.func @overlapping_pieces
// CHECK: linalg.fill {{.*}}workgroup = array<i64: 0, 0, 0>
// CHECK: linalg.copy {{.*}}workgroup = array<i64: 0, 0, 0>
func.func @overlapping_pieces(%in: memref<30x30x96xf32>, %out: memref<32x32x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %all = memref.subview %out[0, 0, 0] [32, 32, 96] [1, 1, 1] : memref<32x32x96xf32> to memref<32x32x96xf32, strided<[3072, 96, 1]>>
  linalg.fill ins(%zero : f32) outs(%all : memref<32x32x96xf32, strided<[3072, 96, 1]>>)
  %interior = memref.subview %out[1, 1, 0] [30, 30, 96] [1, 1, 1] : memref<32x32x96xf32> to memref<30x30x96xf32, strided<[3072, 96, 1], offset: 3168>>
  linalg.copy ins(%in : memref<30x30x96xf32>) outs(%interior : memref<30x30x96xf32, strided<[3072, 96, 1], offset: 3168>>)
  return
}

// A piece that another op then reads is not written only: not split.
// CHECK-LABEL: func.func @piece_read_back
// CHECK: linalg.copy {{.*}}workgroup = array<i64: 0, 0>
// CHECK: linalg.generic {{.*}}workgroup = array<i64: 0, 0>
func.func @piece_read_back(%in: memref<8x64xf32>, %out: memref<10x64xf32>, %sum: memref<64x8xf32>) {
  %rows = memref.subview %out[1, 0] [8, 64] [1, 1] : memref<10x64xf32> to memref<8x64xf32, strided<[64, 1], offset: 64>>
  linalg.copy ins(%in : memref<8x64xf32>) outs(%rows : memref<8x64xf32, strided<[64, 1], offset: 64>>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%rows : memref<8x64xf32, strided<[64, 1], offset: 64>>) outs(%sum : memref<64x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// A full reduction has no parallel loop to split.
// CHECK-LABEL: func.func @total
// CHECK: strata_cpu.tile_sizes = {vector = array<i64: 8>, workgroup = array<i64: 0>}
func.func @total(%in: memref<1000xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%in : memref<1000xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// Sizes given in the input are kept.
// CHECK-LABEL: func.func @user
// CHECK: linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 4, 8>, workgroup = array<i64: 32, 0>}}
func.func @user(%a: memref<256x256xf32>, %b: memref<256x256xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {workgroup = array<i64: 32, 0>, vector = array<i64: 4, 8>}}
      ins(%a : memref<256x256xf32>) outs(%b : memref<256x256xf32>)
  return
}

// Helpers are not dispatched: vector tiles only.
// CHECK-LABEL: func.func private @helper
// CHECK: workgroup = array<i64: 0>
func.func private @helper(%a: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<64xf32>)
  return
}

// A matmul with packed weights (strata-pack-weights: 16 x 24 x 64 output,
// weights in 24 strips of 64 columns) and its bias add split along the
// strips: split_columns = 2 (the second dimension from the end), the same
// tile of strips for both ops (one: a strip is 16 x 384 x 64 iterations,
// more than a workgroup's share), and the contraction's register tile along
// the columns of a strip.
// CHECK-LABEL: func.func @packed_few_rows
// CHECK-SAME: strata_cpu.split_columns = 2
// CHECK: linalg.generic {{[{].*}}strata_cpu.tile_sizes = {vector = array<i64: 8, 1, 16, 1>, workgroup = array<i64: 0, 1, 0, 0>}
// CHECK: linalg.generic {{[{].*}}workgroup = array<i64: 0, 1, 0>}
func.func @packed_few_rows(%a: memref<16x384xf32>, %b: memref<24x384x64xf32>, %bias: memref<24x64xf32>, %c: memref<16x24x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n1, n0, k) -> (m, k)>, affine_map<(m, n1, n0, k) -> (n1, k, n0)>, affine_map<(m, n1, n0, k) -> (m, n1, n0)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x384xf32>, memref<24x384x64xf32>) outs(%c : memref<16x24x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n1, n0) -> (n1, n0)>, affine_map<(m, n1, n0) -> (m, n1, n0)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bias : memref<24x64xf32>) outs(%c : memref<16x24x64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A convolution with a packed filter over 1 MiB (16 strips of 3 x 3 x 512 x
// 32) splits along its strips, one per workgroup here.
// CHECK-LABEL: func.func @packed_conv
// CHECK-SAME: strata_cpu.split_columns = 2
// CHECK: linalg.generic {{[{].*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 7, 1, 16, 1, 0, 1>, workgroup = array<i64: 0, 0, 0, 1, 0, 0, 0, 0>}
func.func @packed_conv(%in: memref<1x9x9x512xf32>, %f: memref<16x3x3x512x32xf32>, %out: memref<1x7x7x16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, oh, ow, f1, f0, kh, kw, c) -> (n, oh + kh, ow + kw, c)>,
                                   affine_map<(n, oh, ow, f1, f0, kh, kw, c) -> (f1, kh, kw, c, f0)>,
                                   affine_map<(n, oh, ow, f1, f0, kh, kw, c) -> (n, oh, ow, f1, f0)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%in, %f : memref<1x9x9x512xf32>, memref<16x3x3x512x32xf32>) outs(%out : memref<1x7x7x16x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// An op with two outputs counts each iteration twice: 2 x 1000 iterations a
// row, so ceil(1024 / 2000) = 1 row per workgroup with the smaller share.
// SMALL-LABEL: func.func @two_outputs
// SMALL: linalg.generic {{.*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 16>, workgroup = array<i64: 1, 0>}
func.func @two_outputs(%a: memref<13x1000xf32>, %o1: memref<13x1000xf32>, %o2: memref<13x1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<13x1000xf32>) outs(%o1, %o2 : memref<13x1000xf32>, memref<13x1000xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %n = arith.negf %x : f32
    linalg.yield %x, %n : f32, f32
  }
  return
}

// An exponential costs kExpensiveOpCost (8) iterations more: a softmax's
// 4 x 128 x 128 exponentials are 4 workgroups of one head (9 x 16384
// iterations each), not one of all four (4 x 16384 iterations).
// CHECK-LABEL: func.func @exponentials
// CHECK: linalg.generic {{.*}}workgroup = array<i64: 1, 0, 0>
func.func @exponentials(%a: memref<4x128x128xf32>, %o: memref<4x128x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<4x128x128xf32>) outs(%o : memref<4x128x128xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// An image from NCHW to NHWC: one register along the input's rows (w) and
// the 3 channels whole, so that a tile reads 3 rows and writes them
// interleaved (TileAndVectorize's transpose in registers); a permutation
// whose output's innermost dimension is longer keeps one register.
// CHECK-LABEL: func.func @channels_last_image
// CHECK: linalg.transpose {{.*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 8, 3>
// CHECK: linalg.transpose {{.*}}strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 8, 1>
func.func @channels_last_image(%a: memref<1x3x224x224xf32>, %o: memref<1x224x224x3xf32>,
                               %b: memref<1x8x224x224xf32>, %p: memref<1x224x224x8xf32>) {
  linalg.transpose ins(%a : memref<1x3x224x224xf32>) outs(%o : memref<1x224x224x3xf32>) permutation = [0, 2, 3, 1]
  linalg.transpose ins(%b : memref<1x8x224x224xf32>) outs(%p : memref<1x224x224x8xf32>) permutation = [0, 2, 3, 1]
  return
}
