// A model's pad kernel (a ResNet's padded activation) runs on a grid of
// 58 * 58 * 64 / 64 workgroups of 64 invocations for Vulkan and CUDA alike
// (strata-gpu-pads-to-grids); it was one workgroup of 256.
// RUN: compile-module %s --target=vulkan --compile-to=executables | FileCheck %s
// RUN: compile-module %s --target=cuda --cuda-arch=sm_80 --compile-to=executables | FileCheck %s

// CHECK: func.func @main_dispatch_0
// CHECK-SAME: workgroup_count = array<i32: 3364, 1, 1>, workgroup_size = array<i32: 64, 1, 1>
func.func @main(%x: tensor<1x56x56x64xf32>) -> tensor<1x58x58x64xf32> {
  %p = arith.constant 0.0 : f32
  %r = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %p : f32
  } : tensor<1x56x56x64xf32> to tensor<1x58x58x64xf32>
  return %r : tensor<1x58x58x64xf32>
}
