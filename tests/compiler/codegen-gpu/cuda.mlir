// The GPU code generator and the NVVM back end on the kernel of spirv.mlir:
// PTX for each arch asked for, written in process, with the CUDA kernel ABI
// of schemas/cuda_executable.fbs (binding pointers, then the 32-bit
// constants) and .maxntid from the workgroup size; ptxas, where found,
// accepts each image and its cubin travels beside it.
// RUN: rm -rf %t && compile-module %s --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=none --dump-executables=%t -o %t.smod
// RUN: FileCheck %s --input-file=%t/kernels.sm_80.ptx --check-prefixes=PTX,SM80
// RUN: FileCheck %s --input-file=%t/kernels.sm_90.ptx --check-prefixes=PTX,SM90
// RUN: not ls %t/kernels.sm_80.cubin
// RUN: dump-module %t.smod --no-disassembly | FileCheck %s --check-prefix=DUMP
// RUN: not compile-module %s --target=cuda --cuda-arch=sm_9 -o %t.bad 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not compile-module %s --cuda-arch=sm_80 -o %t.bad 2>&1 | FileCheck %s --check-prefix=NEEDS-TARGET

// PTX: .version 8.0
// SM80: .target sm_80
// SM90: .target sm_90
// PTX: .visible .entry layer_dispatch_0(
// PTX-NEXT: .param .u64 .ptr .global .align 16 layer_dispatch_0_param_0,
// PTX-NEXT: .param .u64 .ptr .global .align 16 layer_dispatch_0_param_1,
// PTX-NEXT: .param .u64 .ptr .global .align 16 layer_dispatch_0_param_2,
// PTX-NEXT: .param .u64 .ptr .global .align 16 layer_dispatch_0_param_3,
// PTX-NEXT: .param .u32 layer_dispatch_0_param_4,
// PTX-NEXT: .param .u32 layer_dispatch_0_param_5,
// PTX-NEXT: .param .u32 layer_dispatch_0_param_6
// PTX-NEXT: )
// PTX-NEXT: .maxntid 64, 1, 1
// PTX-NOT: .extern
// PTX: ld.global
// PTX: st.global

// DUMP: kernels [cuda-ptx]:
// DUMP-NEXT: PTX 8.0 images: ptx sm_80 ({{[0-9]+}} bytes) ptx sm_90 ({{[0-9]+}} bytes)
// DUMP-NEXT: entry#0 layer_dispatch_0: 4 bindings (0, 1, 2 read-only), 3 push constants, workgroup size 64x1x1

// ARCH: unknown CUDA arch 'sm_9'; expected sm_<major><minor> from sm_50 to sm_121
// NEEDS-TARGET: --cuda-arch and --cuda-ptxas need --target to include cuda

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
