// strata-pack-weights: strips as wide as the register tile, so that a tile
// reads each row of its strip whole: 2 registers for more than 2 rows, 4
// for a matrix-vector product; with 256-bit vectors (AVX2) 16 and 32 f32
// columns, with 512-bit vectors (the default, WIDE) 32 and 64, or 16 where
// the tile's width would leave fewer than two strips.
// RUN: strata-opt %s --strata-pack-weights="vector-bits=256" | FileCheck %s
// RUN: strata-opt %s --strata-pack-weights | FileCheck %s --check-prefix=WIDE

// CHECK-LABEL: func.func @rows
// CHECK: linalg.transpose ins(%{{.*}} : tensor<8x4x16xf32>) outs(%{{.*}} : tensor<4x8x16xf32>)
// WIDE-LABEL: func.func @rows
// WIDE: linalg.transpose ins(%{{.*}} : tensor<8x2x32xf32>) outs(%{{.*}} : tensor<2x8x32xf32>)
func.func @rows(%x: tensor<16x8xf32>, %w: tensor<8x64xf32>) -> tensor<16x64xf32> {
  %c = arith.constant dense<1.0> : tensor<8x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%x, %c : tensor<16x8xf32>, tensor<8x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %m : tensor<16x64xf32>
}

// 128 columns of 16 rows: strips of 16 (AVX2) or 32 (AVX-512), not 64.
// CHECK-LABEL: func.func @wide
// CHECK: linalg.transpose ins(%{{.*}} : tensor<8x8x16xf32>) outs(%{{.*}} : tensor<8x8x16xf32>)
// WIDE-LABEL: func.func @wide
// WIDE: linalg.transpose ins(%{{.*}} : tensor<8x4x32xf32>) outs(%{{.*}} : tensor<4x8x32xf32>)
func.func @wide(%x: tensor<16x8xf32>) -> tensor<16x128xf32> {
  %c = arith.constant dense<1.0> : tensor<8x128xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x128xf32>) -> tensor<16x128xf32>
  %m = linalg.matmul ins(%x, %c : tensor<16x8xf32>, tensor<8x128xf32>) outs(%f : tensor<16x128xf32>) -> tensor<16x128xf32>
  return %m : tensor<16x128xf32>
}

// CHECK-LABEL: func.func @vector
// CHECK: linalg.transpose ins(%{{.*}} : tensor<8x4x32xf32>) outs(%{{.*}} : tensor<4x8x32xf32>)
// WIDE-LABEL: func.func @vector
// WIDE: linalg.transpose ins(%{{.*}} : tensor<8x2x64xf32>) outs(%{{.*}} : tensor<2x8x64xf32>)
func.func @vector(%x: tensor<1x8xf32>) -> tensor<1x128xf32> {
  %c = arith.constant dense<1.0> : tensor<8x128xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x128xf32>) -> tensor<1x128xf32>
  %m = linalg.matmul ins(%x, %c : tensor<1x8xf32>, tensor<8x128xf32>) outs(%f : tensor<1x128xf32>) -> tensor<1x128xf32>
  return %m : tensor<1x128xf32>
}

// Convolution filters: with 256-bit vectors in strips of 16 output channels
// (the tile's two registers) and from 256 KiB (3 x 3 x 128 x 128 f32: 576
// KiB); with 512-bit vectors in strips of 32 and only over 1 MiB. A
// 3 x 3 x 64 x 64 filter (144 KiB) stays as it is.
// CHECK-LABEL: func.func @conv
// CHECK: linalg.transpose ins(%{{.*}} : tensor<3x3x128x8x16xf32>) outs(%{{.*}} : tensor<8x3x3x128x16xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x7x7x8x16xf32>)
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} tensor<3x3x64x64xf32>
// WIDE-LABEL: func.func @conv
// WIDE: linalg.conv_2d_nhwc_hwcf {{.*}} tensor<3x3x128x128xf32>
// WIDE: linalg.conv_2d_nhwc_hwcf {{.*}} tensor<3x3x64x64xf32>
func.func @conv(%x: tensor<1x9x9x128xf32>, %y: tensor<1x9x9x64xf32>) -> (tensor<1x7x7x128xf32>, tensor<1x7x7x64xf32>) {
  %w = arith.constant dense<0.5> : tensor<3x3x128x128xf32>
  %ws = arith.constant dense<0.25> : tensor<3x3x64x64xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x128xf32>) -> tensor<1x7x7x128xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<1x9x9x128xf32>, tensor<3x3x128x128xf32>) outs(%f : tensor<1x7x7x128xf32>) -> tensor<1x7x7x128xf32>
  %es = tensor.empty() : tensor<1x7x7x64xf32>
  %fs = linalg.fill ins(%z : f32) outs(%es : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %cs = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%y, %ws : tensor<1x9x9x64xf32>, tensor<3x3x64x64xf32>) outs(%fs : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  return %c, %cs : tensor<1x7x7x128xf32>, tensor<1x7x7x64xf32>
}
