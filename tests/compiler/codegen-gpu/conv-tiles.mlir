// strata-gpu-matrix-tiles: a 2-D NHWC convolution with its fill (or the
// binding copied into its output) and elementwise epilogue is a matmul in
// workgroup-memory tiles that reads its input in place (implicit GEMM):
// row m of A is output pixel (n, oh, ow), column k filter tap (kh, kw, c);
// B is the HWCF filter and C the output viewed as matrices.
// e2e.ops.vulkan runs such kernels on lavapipe against NumPy
// (linalg.conv_2d_nhwc_hwcf_tiles, convolution epilogues), and
// models.resnet18.vulkan the real model's.
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=shared | FileCheck %s
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles="kind=shared fma-tiles-from=1" | FileCheck %s --check-prefix=SMALL
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles=kind=mma | FileCheck %s --check-prefix=MMA
// RUN: strata-opt %s --split-input-file --strata-gpu-matrix-tiles="kind=mma mma-stages=1" | FileCheck %s --check-prefix=MMA1

// A dynamic batch: 128x64 tiles of C (N * 16 * 16 rows, 64 columns), and
// ceil(256 * N / 128) workgroups (2 per image: 256 pixels per image, one
// tile of columns). Input element (n, oh * 2 + kh * 1, ow * 2 + kw, c) for
// pixel m = (n * 16 + oh) * 16 + ow and tap k = (kh * 3 + kw) * 16 + c; the
// epilogue's bias indexed by the output channel, its residual by the pixel.
// CHECK-LABEL: func.func @resnet_block
// CHECK-SAME: strata.matrix_tiles = "shared"
// CHECK-SAME: strata.workgroup_count = {factor = 256 : i64, max = 65535 : i64, words = array<i32: 2>}
// CHECK-SAME: strata.workgroup_size = array<i32: 128, 1, 1>
// CHECK-DAG: %[[B:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1, 2], [3]] : memref<3x3x16x64xf32> into memref<144x64xf32>
// CHECK-DAG: %[[C:.*]] = memref.collapse_shape %arg4 {{\[\[}}0, 1, 2], [3]] : memref<?x16x16x64xf32> into memref<?x64xf32>
// CHECK: %[[M:.*]] = memref.dim %[[C]], %c0
// CHECK: scf.for
// CHECK: %[[ROW:.*]] = arith.minui %{{.*}}, %{{.*}} : index
// CHECK: %[[PIX:.*]] = arith.divui %[[ROW]], %c16
// CHECK: %[[TAP:.*]] = arith.divui %[[K:.*]], %c16
// CHECK: %[[OH:.*]] = arith.remui %[[PIX]], %c16
// CHECK: %[[KH:.*]] = arith.divui %[[TAP]], %c3
// CHECK: %[[OH2:.*]] = arith.muli %[[OH]], %c2
// CHECK: %[[IH:.*]] = arith.addi %[[OH2]], %[[KH]]
// CHECK: %[[OW:.*]] = arith.remui %[[ROW]], %c16
// CHECK: %[[KW:.*]] = arith.remui %[[TAP]], %c3
// CHECK: %[[OW2:.*]] = arith.muli %[[OW]], %c2
// CHECK: %[[IW:.*]] = arith.addi %[[OW2]], %[[KW]]
// CHECK: %[[N:.*]] = arith.divui %[[PIX]], %c16
// CHECK: %[[CH:.*]] = arith.remui %[[K]], %c16
// CHECK: memref.load %arg0[%[[N]], %[[IH]], %[[IW]], %[[CH]]] : memref<?x34x34x16xf32>
// CHECK: memref.load %[[B]]
// CHECK: gpu.barrier
// CHECK: math.fma
// CHECK: scf.if
// CHECK: memref.load %arg2[%{{.*}}] : memref<64xf32>
// CHECK: memref.load %arg3[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<?x16x16x64xf32>
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK-NOT: linalg.
// f16 operands on the tensor cores: A's runs of 8 along K are 8 channels of
// one tap, one 16-byte copy (cp.async) from the input at the input's strides
// in bytes (18 * 18 * 32 * 2, 18 * 32 * 2, 32 * 2, 2), or with mma-stages=1
// one 16-byte load.
// MMA-LABEL: func.func @resnet_block
// MMA-SAME: strata.matrix_tiles = "shared"
// MMA-LABEL: func.func @half
// MMA-SAME: strata.matrix_tiles = "mma"
// MMA: %[[X:.*]] = memref.extract_aligned_pointer_as_index %arg0 : memref<?x18x18x32xf16> -> index
// MMA: arith.muli %{{.*}}, %c20736 : index
// MMA: arith.muli %{{.*}}, %c1152 : index
// MMA: arith.muli %{{.*}}, %c64 : index
// MMA: arith.muli %{{.*}}, %c2 : index
// MMA: nvvm.cp.async.shared.global
// MMA: nvvm.mma.sync
// MMA1-LABEL: func.func @half
// MMA1-SAME: strata.matrix_tiles = "mma"
// MMA1: vector.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<?x18x18x32xf16>, vector<8xf16>
// MMA1: nvvm.mma.sync
func.func @resnet_block(%x: memref<?x34x34x16xf32>, %w: memref<3x3x16x64xf32>, %bias: memref<64xf32>, %skip: memref<?x16x16x64xf32>, %out: memref<?x16x16x64xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%out : memref<?x16x16x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : memref<?x34x34x16xf32>, memref<3x3x16x64xf32>) outs(%out : memref<?x16x16x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%out, %bias, %skip : memref<?x16x16x64xf32>, memref<64xf32>, memref<?x16x16x64xf32>) outs(%out : memref<?x16x16x64xf32>) {
  ^bb0(%in: f32, %b: f32, %s: f32, %o: f32):
    %0 = arith.addf %in, %b : f32
    %1 = arith.addf %0, %s : f32
    %2 = arith.maximumf %1, %cst : f32
    linalg.yield %2 : f32
  }
  return
}
func.func @half(%x: memref<?x18x18x32xf16>, %w: memref<3x3x32x64xf16>, %out: memref<?x16x16x64xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%out : memref<?x16x16x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<?x18x18x32xf16>, memref<3x3x32x64xf16>) outs(%out : memref<?x16x16x64xf32>)
  return
}

// -----

// A static batch 1 of 56 x 56 pixels by 64 channels: 49 tiles of 64x64,
// too few for a large GPU below fma-tiles-from (128), so one output element
// per invocation; with fma-tiles-from=1 the tiles, C's sums starting from
// the binding copied into it (the copy goes).
// CHECK-LABEL: func.func @batch_one
// CHECK-NOT: strata.matrix_tiles
// CHECK: linalg.conv_2d_nhwc_hwcf
// SMALL-LABEL: func.func @batch_one
// SMALL-SAME: strata.matrix_tiles = "shared"
// SMALL-SAME: strata.workgroup_count = array<i32: 49, 1, 1>
// SMALL-DAG: %[[INIT:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1, 2], [3]] : memref<1x56x56x64xf32> into memref<3136x64xf32>
// SMALL-DAG: %[[C:.*]] = memref.collapse_shape %arg3 {{\[\[}}0, 1, 2], [3]] : memref<1x56x56x64xf32> into memref<3136x64xf32>
// SMALL-NOT: linalg.copy
// SMALL: memref.load %[[INIT]]
// SMALL: memref.store %{{.*}}, %[[C]]
// SMALL-NOT: linalg.
func.func @batch_one(%x: memref<1x58x58x64xf32>, %w: memref<3x3x64x64xf32>, %init: memref<1x56x56x64xf32>, %out: memref<1x56x56x64xf32>) {
  linalg.copy ins(%init : memref<1x56x56x64xf32>) outs(%out : memref<1x56x56x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x58x58x64xf32>, memref<3x3x64x64xf32>) outs(%out : memref<1x56x56x64xf32>)
  return
}

// -----

// Left to the general distribution: 36 output channels (under 64). A
// ResNet's first layer, 3 input channels (K = 7 * 7 * 3 = 147, not
// a multiple of 8): 196 tiles, its K loop to 152, the taps past 147 read as
// zeros.
// SMALL-LABEL: func.func @narrow
// SMALL-NOT: strata.matrix_tiles
// SMALL-LABEL: func.func @odd_k
// SMALL-SAME: strata.matrix_tiles = "shared"
// SMALL-SAME: strata.workgroup_count = array<i32: 196, 1, 1>
// SMALL: arith.minui %{{.*}}, %c146 : index
// SMALL: arith.cmpi ult, %{{.*}}, %c147 : index
// SMALL: scf.for %{{.*}} = %c0 to %c152 step %c8 iter_args(
// CHECK-LABEL: func.func @odd_k
// CHECK-SAME: strata.matrix_tiles = "shared"
func.func @narrow(%x: memref<1x58x58x64xf32>, %w: memref<3x3x64x36xf32>, %out: memref<1x56x56x36xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : memref<1x58x58x64xf32>, memref<3x3x64x36xf32>) outs(%out : memref<1x56x56x36xf32>)
  return
}
func.func @odd_k(%x: memref<1x229x229x3xf32>, %w: memref<7x7x3x64xf32>, %out: memref<1x112x112x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : memref<1x229x229x3xf32>, memref<7x7x3x64xf32>) outs(%out : memref<1x112x112x64xf32>)
  return
}
