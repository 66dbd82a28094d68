// 2-D NHWC convolutions and poolings are tiled to one output row, one filter
// row and (for convolutions) one input channel at a time; each tile becomes
// the 1-D op on rank-reduced views, which linalg's vectorizer turns into
// vector FMAs of a whole register of output channels, accumulated in
// registers across the filter rows and input channels.
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-select-tile-sizes{vector-bits=512},strata-cpu-tile-and-vectorize))" | FileCheck %s
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-select-tile-sizes{vector-bits=512}))" | FileCheck %s --check-prefix=TILES

// The 10 columns in two even tiles of 5 (up to 8 fit the registers, but a
// last tile of 2 would have too few accumulators to hide the FMA latency).
// TILES-LABEL: func.func @conv
// TILES: linalg.conv_2d_nhwc_hwcf {{.*}}vector = array<i64: 1, 1, 5, 16, 1, 0, 1>
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv
// Kh and c loops carrying a 5 x 16 accumulator; no partial tile.
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<5x16xf32>)
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<5x16xf32>)
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector<{{[0-9]+}}x16xf32>)
// CHECK-NOT: linalg.conv
// CHECK: return
func.func @conv(%in: memref<1x10x12x8xf32>, %f: memref<3x3x8x16xf32>, %out: memref<1x8x10x16xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : memref<1x10x12x8xf32>, memref<3x3x8x16xf32>) outs(%out : memref<1x8x10x16xf32>)
  return
}

// 64 output channels on a wide image: two registers of channels per tile
// (8 x 32 accumulators), so that each broadcast input value feeds two FMAs.
// TILES-LABEL: func.func @conv_wide
// TILES: linalg.conv_2d_nhwc_hwcf {{.*}}vector = array<i64: 1, 1, 8, 32, 1, 0, 1>
// CHECK-LABEL: func.func @conv_wide
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: return
func.func @conv_wide(%in: memref<1x18x34x8xf32>, %f: memref<3x3x8x64xf32>, %out: memref<1x16x32x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : memref<1x18x34x8xf32>, memref<3x3x8x64xf32>) outs(%out : memref<1x16x32x64xf32>)
  return
}

// Strides and dilations carry over to the 1-D op (W's); the 6 output columns
// are one tile.
// TILES-LABEL: func.func @pool
// TILES: linalg.pooling_nhwc_max {{.*}}vector = array<i64: 1, 1, 6, 16, 1, 0>
// CHECK-LABEL: func.func @pool
// CHECK-NOT: linalg.pooling
// CHECK: arith.maximumf {{.*}} : vector<{{.*}}16xf32>
// CHECK: return
func.func @pool(%in: memref<1x12x12x16xf32>, %w: memref<2x2xf32>, %out: memref<1x6x6x16xf32>) {
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%in, %w : memref<1x12x12x16xf32>, memref<2x2xf32>) outs(%out : memref<1x6x6x16xf32>)
  return
}

// A dynamic batch: each tile is one image, statically shaped all the same.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: linalg.conv
// CHECK: vector.fma
// A dynamic width: the last, partial column tile has no static shape and
// stays a linalg op (lowered to loops later); the full tiles are vectors.
// CHECK-LABEL: func.func @dynamic_width
// CHECK: vector.fma
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: return
func.func @dynamic(%in: memref<?x10x12x8xf32>, %f: memref<3x3x8x16xf32>, %out: memref<?x8x10x16xf32>) {
  linalg.conv_2d_nhwc_hwcf ins(%in, %f : memref<?x10x12x8xf32>, memref<3x3x8x16xf32>)
      outs(%out : memref<?x8x10x16xf32>)
  return
}

func.func @dynamic_width(%in: memref<1x10x?x8xf32>, %f: memref<3x3x8x16xf32>, %out: memref<1x8x?x16xf32>) {
  linalg.conv_2d_nhwc_hwcf ins(%in, %f : memref<1x10x?x8xf32>, memref<3x3x8x16xf32>)
      outs(%out : memref<1x8x?x16xf32>)
  return
}

// A convolution with a packed filter (strata-pack-weights: Wp[F1][KH][KW][C]
// [32], output N x OH x OW x F1 x 32, stride 2 here): one row, one filter
// row, one strip and one input channel at a time, two registers of the
// strip's channels for a 7-wide image, each tile the 1-D op (with the W
// stride) and then FMAs of 7 x 32 lanes (two registers each).
// TILES-LABEL: func.func @packed
// TILES: linalg.generic {{.*}}vector = array<i64: 1, 1, 7, 1, 32, 1, 0, 1>
// CHECK-LABEL: func.func @packed
// CHECK-NOT: linalg.generic
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<7x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @packed(%in: memref<1x15x15x8xf32>, %f: memref<2x3x3x8x32xf32>, %out: memref<1x7x7x2x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, oh, ow, f1, f0, kh, kw, c) -> (n, oh * 2 + kh, ow * 2 + kw, c)>,
                                   affine_map<(n, oh, ow, f1, f0, kh, kw, c) -> (f1, kh, kw, c, f0)>,
                                   affine_map<(n, oh, ow, f1, f0, kh, kw, c) -> (n, oh, ow, f1, f0)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%in, %f : memref<1x15x15x8xf32>, memref<2x3x3x8x32xf32>) outs(%out : memref<1x7x7x2x32xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
