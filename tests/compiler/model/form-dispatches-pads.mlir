// With pads-into-windows (modules that only target CPUs), a pad whose only
// user is a 2-D NHWC convolution or pooling goes into that op's kernel, with
// the elementwise op after it; without, it is a kernel of its own. A pad with
// other users stays alone.
// RUN: strata-opt %s --strata-form-dispatches="pads-into-windows=true" | FileCheck %s
// RUN: strata-opt %s --strata-form-dispatches | FileCheck %s --check-prefix=ALONE

// CHECK: func.func @main_dispatch_0(%{{.*}}: tensor<1x8x8x16xf32>, %{{.*}}: tensor<3x3x16xf32>) -> tensor<1x8x8x16xf32> attributes {flow.kernel}
// CHECK: tensor.pad
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: linalg.generic
// CHECK: func.func @main_dispatch_1(%{{.*}}: tensor<1x8x8x16xf32>) -> tensor<1x10x10x16xf32> attributes {flow.kernel}
// CHECK: tensor.pad
// CHECK-NOT: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: func.func @main_dispatch_2(%{{.*}}: tensor<1x10x10x16xf32>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-LABEL: func.func @main(
// CHECK: %[[D0:.*]] = flow.dispatch @main_dispatch_0(%arg0, %arg1)
// CHECK: %[[D1:.*]] = flow.dispatch @main_dispatch_1(%[[D0]])
// CHECK: flow.dispatch @main_dispatch_2(%[[D1]], %arg1)

// ALONE-LABEL: func.func @main(
// ALONE-COUNT-4: flow.dispatch @
// ALONE-NOT: flow.dispatch @
func.func @main(%x: tensor<1x8x8x16xf32>, %f: tensor<3x3x16xf32>) -> (tensor<1x8x8x16xf32>, tensor<1x10x10x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x16xf32> to tensor<1x10x10x16xf32>
  %e = tensor.empty() : tensor<1x8x8x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %f : tensor<1x10x10x16xf32>, tensor<3x3x16xf32>) outs(%init : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<1x8x8x16xf32>) outs(%e : tensor<1x8x8x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x16xf32>
  // Padded again, and the padded tensor returned too: the pad stays a kernel.
  %padded2 = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x16xf32> to tensor<1x10x10x16xf32>
  %y2 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded2, %f : tensor<1x10x10x16xf32>, tensor<3x3x16xf32>) outs(%init : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %y2, %padded2 : tensor<1x8x8x16xf32>, tensor<1x10x10x16xf32>
}

// A padded tensor over the CPU's window limit (8 MiB: 1 x 1026 x 1026 x 4
// f32 is 16.8 MB) stays a kernel of its own.
// CHECK-LABEL: func.func @large(
// CHECK-COUNT-2: flow.dispatch @
// CHECK-NOT: flow.dispatch @
// ALONE-LABEL: func.func @large(
// ALONE-COUNT-2: flow.dispatch @
func.func @large(%x: tensor<1x1024x1024x4xf32>, %f: tensor<3x3x4xf32>) -> tensor<1x1024x1024x4xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x1024x1024x4xf32> to tensor<1x1026x1026x4xf32>
  %e = tensor.empty() : tensor<1x1024x1024x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1024x1024x4xf32>) -> tensor<1x1024x1024x4xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %f : tensor<1x1026x1026x4xf32>, tensor<3x3x4xf32>) outs(%init : tensor<1x1024x1024x4xf32>) -> tensor<1x1024x1024x4xf32>
  return %y : tensor<1x1024x1024x4xf32>
}
