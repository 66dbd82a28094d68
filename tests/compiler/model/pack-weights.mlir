// strata-pack-weights: a matmul whose weights are a constant (and a
// convolution whose constant filter is large) becomes a
// contraction over strips of n0 output columns with the weights stored
// strip by strip (packed by strata-const-eval at compile time), and the
// elementwise ops that read its result move to the expanded shape so that
// they stay in its kernel. Other matmuls are left alone.
// RUN: strata-opt %s --strata-pack-weights --strata-const-eval --canonicalize --split-input-file --mlir-print-elementsattrs-with-hex-if-larger=1000 | FileCheck %s

// B[k][n] = 32 k + n, 32 columns: two strips of 16, Bp[s][k][j] = 32 k + 16 s + j.
// CHECK-LABEL: func.func @linear
// CHECK-DAG: %[[BP:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, {{.*}}, 1.500000e+01], [3.200000e+01, {{.*}}[1.600000e+01, 1.700000e+01, {{.*}} : tensor<2x4x16xf32>
// The bias, in strips too.
// CHECK-DAG: %[[BIAS:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, {{.*}}]]> : tensor<2x16xf32>
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<2x2x16xf32>
// CHECK: %[[MM:.*]] = linalg.generic {{[{].*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %[[BP]] : tensor<2x4xf32>, tensor<2x4x16xf32>) outs(%[[INIT]] : tensor<2x2x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[ACT:.*]] = linalg.generic {{[{].*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[MM]], %[[BIAS]] : tensor<2x2x16xf32>, tensor<2x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[ACT]] {{\[}}[0], [1, 2]] : tensor<2x2x16xf32> into tensor<2x32xf32>
// CHECK: return %[[R]]
// CHECK-NOT: flow.packed
func.func @linear(%x: tensor<2x4xf32>) -> tensor<2x32xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0], [32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0], [64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0], [96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0]]> : tensor<4x32xf32>
  %b = arith.constant dense<[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 2.9, 3.0, 3.1]> : tensor<32xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x32xf32>) -> tensor<2x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x32xf32>) outs(%f : tensor<2x32xf32>) -> tensor<2x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<2x32xf32>, tensor<32xf32>) outs(%e : tensor<2x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %y = arith.maximumf %s, %z : f32
    linalg.yield %y : f32
  } -> tensor<2x32xf32>
  return %r : tensor<2x32xf32>
}

// -----

// Weights that are inputs, and 10 columns (no whole strips, and padded to
// one strip only), stay matmuls.
// CHECK-LABEL: func.func @unpacked
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<2x4xf32>, tensor<4x32xf32>)
// CHECK: linalg.matmul ins(%arg0, %{{.*}} : tensor<2x4xf32>, tensor<4x10xf32>)
func.func @unpacked(%x: tensor<2x4xf32>, %w: tensor<4x32xf32>) -> (tensor<2x32xf32>, tensor<2x10xf32>) {
  %w10 = arith.constant dense<1.0> : tensor<4x10xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x32xf32>) -> tensor<2x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x32xf32>) outs(%f : tensor<2x32xf32>) -> tensor<2x32xf32>
  %e10 = tensor.empty() : tensor<2x10xf32>
  %f10 = linalg.fill ins(%z : f32) outs(%e10 : tensor<2x10xf32>) -> tensor<2x10xf32>
  %m10 = linalg.matmul ins(%x, %w10 : tensor<2x4xf32>, tensor<4x10xf32>) outs(%f10 : tensor<2x10xf32>) -> tensor<2x10xf32>
  return %m, %m10 : tensor<2x32xf32>, tensor<2x10xf32>
}

// -----

// 124 columns are no whole strips: the weights are padded with zero columns
// to 128 (2 strips of 64 for one row; strata-const-eval pads them at
// compile time), the output started from a fill of the padded width, and
// the result sliced back to 124 columns before the bias.
// CHECK-LABEL: func.func @padded_columns
// CHECK-DAG: %[[BP:.*]] = arith.constant dense<{{\[\[\[}}0.000000e+00, {{.*}}, 6.300000e+01], [1.240000e+02, {{.*}}, 1.870000e+02]], {{\[\[}}6.400000e+01, {{.*}}, 1.230000e+02, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [1.880000e+02, {{.*}}, 2.470000e+02, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x2x64xf32>
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<1x2x64xf32>
// CHECK: %[[MM:.*]] = linalg.generic {{.*}} ins(%arg0, %[[BP]] : tensor<1x2xf32>, tensor<2x2x64xf32>) outs(%[[INIT]] : tensor<1x2x64xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[MM]] {{\[}}[0], [1, 2]] : tensor<1x2x64xf32> into tensor<1x128xf32>
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[FLAT]][0, 0] [1, 124] [1, 1] : tensor<1x128xf32> to tensor<1x124xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SLICE]], %{{.*}} : tensor<1x124xf32>, tensor<124xf32>)
func.func @padded_columns(%x: tensor<1x2xf32>) -> tensor<1x124xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0], [124.0, 125.0, 126.0, 127.0, 128.0, 129.0, 130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0, 138.0, 139.0, 140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0, 148.0, 149.0, 150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0, 158.0, 159.0, 160.0, 161.0, 162.0, 163.0, 164.0, 165.0, 166.0, 167.0, 168.0, 169.0, 170.0, 171.0, 172.0, 173.0, 174.0, 175.0, 176.0, 177.0, 178.0, 179.0, 180.0, 181.0, 182.0, 183.0, 184.0, 185.0, 186.0, 187.0, 188.0, 189.0, 190.0, 191.0, 192.0, 193.0, 194.0, 195.0, 196.0, 197.0, 198.0, 199.0, 200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0, 216.0, 217.0, 218.0, 219.0, 220.0, 221.0, 222.0, 223.0, 224.0, 225.0, 226.0, 227.0, 228.0, 229.0, 230.0, 231.0, 232.0, 233.0, 234.0, 235.0, 236.0, 237.0, 238.0, 239.0, 240.0, 241.0, 242.0, 243.0, 244.0, 245.0, 246.0, 247.0]]> : tensor<2x124xf32>
  %b = arith.constant dense<0.5> : tensor<124xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x124xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x124xf32>) -> tensor<1x124xf32>
  %m = linalg.matmul ins(%x, %w : tensor<1x2xf32>, tensor<2x124xf32>) outs(%f : tensor<1x124xf32>) -> tensor<1x124xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<1x124xf32>, tensor<124xf32>) outs(%e : tensor<1x124xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<1x124xf32>
  return %r : tensor<1x124xf32>
}

// -----

// A convolution whose constant filter is over 1 MiB (3 x 3 x 256 x 512 f32)
// reads it in strips of 32 output channels: Wp[16][3][3][256][32], the
// convolution a generic over the output expanded to 1 x 7 x 7 x 16 x 32
// (stride 2 in the input map), its batch norm in strips too.
// CHECK-LABEL: func.func @conv_large
// CHECK-DAG: %[[WP:.*]] = arith.constant dense<5.000000e-01> : tensor<16x3x3x256x32xf32>
// CHECK: %[[CONV:.*]] = linalg.generic {{[{].*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %[[WP]] : tensor<1x15x15x256xf32>, tensor<16x3x3x256x32xf32>) outs(%{{.*}} : tensor<1x7x7x16x32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[CONV]], %{{.*}} : tensor<1x7x7x16x32xf32>, tensor<16x32xf32>)
// CHECK: tensor.collapse_shape {{.*}} : tensor<1x7x7x16x32xf32> into tensor<1x7x7x512xf32>
// A small filter (3 x 3 x 8 x 64: 18 KiB) stays as it is.
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} tensor<3x3x8x64xf32>
func.func @conv_large(%x: tensor<1x15x15x256xf32>, %y: tensor<1x9x9x8xf32>) -> (tensor<1x7x7x512xf32>, tensor<1x7x7x64xf32>) {
  %w = arith.constant dense<0.5> : tensor<3x3x256x512xf32>
  %scale = arith.constant dense<2.0> : tensor<512xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x512xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<1x15x15x256xf32>, tensor<3x3x256x512xf32>) outs(%f : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %scale : tensor<1x7x7x512xf32>, tensor<512xf32>) outs(%e : tensor<1x7x7x512xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x7x7x512xf32>
  %ws = arith.constant dense<0.25> : tensor<3x3x8x64xf32>
  %es = tensor.empty() : tensor<1x7x7x64xf32>
  %fs = linalg.fill ins(%z : f32) outs(%es : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %cs = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%y, %ws : tensor<1x9x9x8xf32>, tensor<3x3x8x64xf32>) outs(%fs : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  return %r, %cs : tensor<1x7x7x512xf32>, tensor<1x7x7x64xf32>
}

// -----

// One weight read by two functions (batch 1 and batch 4 entry points) is
// packed once: both read the same blob.
// CHECK-LABEL: func.func @batch1
// CHECK: arith.constant dense_resource<[[BLOB:.*]]> : tensor<2x4x16xf32>
// CHECK-LABEL: func.func @batch4
// CHECK: arith.constant dense_resource<[[BLOB]]> : tensor<2x4x16xf32>
func.func @batch1(%x: tensor<1x4xf32>) -> tensor<1x32xf32> {
  %w = arith.constant dense_resource<weights> : tensor<4x32xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x32xf32>) -> tensor<1x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<1x4xf32>, tensor<4x32xf32>) outs(%f : tensor<1x32xf32>) -> tensor<1x32xf32>
  return %m : tensor<1x32xf32>
}
func.func @batch4(%x: tensor<4x4xf32>) -> tensor<4x32xf32> {
  %w = arith.constant dense_resource<weights> : tensor<4x32xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m : tensor<4x32xf32>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42000080420000824200008442000086420000884200008A4200008C4200008E42000090420000924200009442000096420000984200009A4200009C4200009E420000A0420000A2420000A4420000A6420000A8420000AA420000AC420000AE420000B0420000B2420000B4420000B6420000B8420000BA420000BC420000BE420000C0420000C2420000C4420000C6420000C8420000CA420000CC420000CE420000D0420000D2420000D4420000D6420000D8420000DA420000DC420000DE420000E0420000E2420000E4420000E6420000E8420000EA420000EC420000EE420000F0420000F2420000F4420000F6420000F8420000FA420000FC420000FE42"
    }
  }
#-}
