// The GPU code generator and the SPIR-V back end on a kernel on tensors:
// bindings in argument order in set 0 (the result last), one push-constant
// block for the dynamic sizes, the entry point's workgroup size, and a module
// that spirv-val accepts for Vulkan 1.3. The entry point asks for IEEE
// denormals, NaN, infinities and signed zeros in f32, the width it computes
// in (strata-spirv-float-controls; the driver drops what a device lacks).
// RUN: strata-opt %s --strata-gpu-codegen --strata-spirv-codegen | FileCheck %s
// RUN: compile-module %s --target=vulkan --dump-executables=%t -o %t.smod
// RUN: spirv-val --target-env vulkan1.3 %t/kernels.vulkan-spirv.spv
// RUN: dump-module %t.smod --no-disassembly | FileCheck %s --check-prefix=DUMP

// CHECK: spirv.module @__spv__kernels Logical GLSL450
// CHECK-SAME: DenormPreserve, SignedZeroInfNanPreserve
// CHECK-SAME: SPV_KHR_float_controls
// CHECK-DAG: spirv.GlobalVariable @layer_arg_0 bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @layer_arg_3 bind(0, 3) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @layer_arg_4 : !spirv.ptr<!spirv.struct<(!spirv.array<3 x i32, stride=4> [0])>, PushConstant>
// CHECK: spirv.func @layer()
// CHECK: spirv.Load "PushConstant"
// CHECK: spirv.EntryPoint "GLCompute" @layer
// CHECK-NEXT: spirv.ExecutionMode @layer "LocalSize", 64, 1, 1
// CHECK-NEXT: spirv.ExecutionMode @layer "DenormPreserve", 32
// CHECK-NEXT: spirv.ExecutionMode @layer "SignedZeroInfNanPreserve", 32
// CHECK-NOT: spirv.ExecutionMode

// DUMP: kernels [vulkan-spirv]
// DUMP-NEXT: requires SPIR-V 1.0
// DUMP-NEXT: entry#0 layer_dispatch_0: 4 bindings (0, 1, 2 read-only), 3 push constants, workgroup size 64x1x1
func.func @layer(%arg0: tensor<?x64xf32>, %arg1: tensor<64x32xf32>, %arg2: index, %arg3: tensor<32xf32>) -> tensor<?x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty(%arg2) : tensor<?x32xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<?x32xf32>) -> tensor<?x32xf32>
  %2 = linalg.matmul ins(%arg0, %arg1 : tensor<?x64xf32>, tensor<64x32xf32>) outs(%1 : tensor<?x32xf32>) -> tensor<?x32xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%2, %arg3 : tensor<?x32xf32>, tensor<32xf32>) outs(%2 : tensor<?x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %4 = arith.addf %in, %in_0 : f32
    %5 = arith.maximumf %4, %cst : f32
    linalg.yield %5 : f32
  } -> tensor<?x32xf32>
  return %3 : tensor<?x32xf32>
}
