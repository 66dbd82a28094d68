// strata-channels-last: NCHW convolutions and poolings become NHWC ones
// with HWCF filters, and the activation transposes move through elementwise
// ops, pads and fills until they cancel: a conv -> bias+relu -> pad -> conv
// -> residual add -> max pool chain keeps one transpose at each edge; the
// input's pad comes after its transpose.
// RUN: strata-opt %s --strata-channels-last --strata-const-eval --canonicalize | FileCheck %s

#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#bias = affine_map<(n, c, h, w) -> (c)>

// CHECK-LABEL: func.func @resnet_block
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>)
// The image goes to NHWC once, and is padded there, right before the
// convolution (a pad before the transpose would cancel nothing).
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<1x4x8x8xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK: %[[IN:.*]] = tensor.pad %[[T]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[IN]], {{.*}} tensor<3x3x4x4xf32>) outs({{.*}} : tensor<1x8x8x4xf32>)
// The bias is read along the channels, now the last loop.
// CHECK: linalg.generic {indexing_maps = [#[[ID:.*]], #[[LAST:.*]], #[[ID]]]
// CHECK-SAME: ins({{.*}} : tensor<1x8x8x4xf32>, tensor<4xf32>)
// CHECK: tensor.pad {{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.conv_2d_nhwc_hwcf
// The residual add reads both operands in NHWC.
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]]
// CHECK-SAME: tensor<1x8x8x4xf32>, tensor<1x8x8x4xf32>
// CHECK: linalg.pooling_nhwc_max {{.*}} outs({{.*}} : tensor<1x4x4x4xf32>)
// And back to NCHW once, at the end.
// CHECK: %[[OUT:.*]] = linalg.transpose ins({{.*}} : tensor<1x4x4x4xf32>) {{.*}} permutation = [0, 3, 1, 2]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[OUT]]
func.func @resnet_block(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %w1 = arith.constant dense<0.5> : tensor<4x4x3x3xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x4x3x3xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %p0 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p0, %w1 : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r1 = linalg.generic {indexing_maps = [#nchw, #bias, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1, %b : tensor<1x4x8x8xf32>, tensor<4xf32>) outs(%e : tensor<1x4x8x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x8x8xf32>
  %p1 = tensor.pad %r1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p1, %w2 : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %sum = linalg.generic {indexing_maps = [#nchw, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %r1 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) outs(%e : tensor<1x4x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8x8xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<1x4x4x4xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%sum, %window : tensor<1x4x8x8xf32>, tensor<2x2xf32>) outs(%pf : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %pool : tensor<1x4x4x4xf32>
}

// TOSA's FHWC filter becomes HWCF: the transpose of the constant is computed
// by strata-const-eval, so no transpose remains.
// CHECK-LABEL: func.func @fhwc
// CHECK-NOT: linalg.transpose
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins({{.*}} : tensor<1x5x5x2xf32>, tensor<3x3x2x8xf32>)
func.func @fhwc(%x: tensor<1x5x5x2xf32>) -> tensor<1x3x3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense_resource<filter> : tensor<8x3x3x2xf32>
  %e = tensor.empty() : tensor<1x3x3x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x5x2xf32>, tensor<8x3x3x2xf32>) outs(%f : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  return %c : tensor<1x3x3x8xf32>
}

// A reduction over a transposed tensor reads its source through the folded
// map instead of transposing it first.
// CHECK-LABEL: func.func @reduce_transposed
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[SWAP:.*]], #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%arg0 : tensor<6x3xf32>)
func.func @reduce_transposed(%x: tensor<6x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x6xf32>
  %t = linalg.transpose ins(%x : tensor<6x3xf32>) outs(%e : tensor<3x6xf32>) permutation = [1, 0]
  %re = tensor.empty() : tensor<3xf32>
  %rf = linalg.fill ins(%zero : f32) outs(%re : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<3x6xf32>) outs(%rf : tensor<3xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// A MobileNet block: the depthwise convolution runs NHWC with an HWC filter,
// the 1x1 convolution is a matmul of the 64 pixels by the filter, and the
// batch norm after it (parameters tensor<8x1x1>, read without their unit
// dimensions) runs on the matmul's rows too, so that the reshape back to
// NHWC comes last.
// CHECK-LABEL: func.func @mobilenet_block
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} tensor<3x3x4xf32>) outs({{.*}} : tensor<1x8x8x4xf32>)
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape {{.*}} {{\[}}[0, 1, 2], [3]] : tensor<1x8x8x4xf32> into tensor<64x4xf32>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[ROWS]], {{.*}} : tensor<64x4xf32>, tensor<4x8xf32>) outs({{.*}} : tensor<64x8xf32>)
// CHECK: %[[BN:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<64x8xf32>, tensor<8xf32>)
// CHECK: tensor.expand_shape %[[BN]] {{.*}} : tensor<64x8xf32> into tensor<1x8x8x8xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
func.func @mobilenet_block(%x: tensor<1x4x10x10xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %dw = arith.constant dense<0.5> : tensor<4x3x3xf32>
  %pw = arith.constant dense<0.25> : tensor<8x4x1x1xf32>
  %scale = arith.constant dense<2.0> : tensor<8x1x1xf32>
  %e4 = tensor.empty() : tensor<1x4x8x8xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %d = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %dw : tensor<1x4x10x10xf32>, tensor<4x3x3xf32>) outs(%f4 : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %e8 = tensor.empty() : tensor<1x8x8x8xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %p = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%d, %pw : tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) outs(%f8 : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %bn = linalg.generic {indexing_maps = [#nchw, affine_map<(n, c, h, w) -> (c, 0, 0)>, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %scale : tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) outs(%e8 : tensor<1x8x8x8xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %m = arith.mulf %v, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x8xf32>
  return %bn : tensor<1x8x8x8xf32>
}

{-#
  dialect_resources: {
    builtin: {
      filter: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F84100000042000004420000084200000C4200001042000014420000184200001C4200002042000024420000284200002C4200003042000034420000384200003C4200004042000044420000484200004C4200005042000054420000584200005C4200006042000064420000684200006C4200007042000074420000784200007C42000080420000824200008442000086420000884200008A4200008C4200008E42000090420000924200009442000096420000984200009A4200009C4200009E420000A0420000A2420000A4420000A6420000A8420000AA420000AC420000AE420000B0420000B2420000B4420000B6420000B8420000BA420000BC420000BE420000C0420000C2420000C4420000C6420000C8420000CA420000CC420000CE420000D0420000D2420000D4420000D6420000D8420000DA420000DC420000DE420000E0420000E2420000E4420000E6420000E8420000EA420000EC420000EE420000F0420000F2420000F4420000F6420000F8420000FA420000FC420000FE420000004300000143000002430000034300000443000005430000064300000743000008430000094300000A4300000B4300000C4300000D4300000E4300000F43"
    }
  }
#-}
