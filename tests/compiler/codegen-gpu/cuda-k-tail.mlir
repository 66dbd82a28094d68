// A K that is not a multiple of the tensor-core tiles' step of 32 (here 40,
// a multiple of 8): where cp.async copies the tiles, the last step's chunks
// past K read nothing (src-size 0, their source clamped inside the operand)
// and are zero-filled, so the matmul stays on the tensor cores (mma.sync,
// and wgmma on sm_90a); with one buffer filled through registers it is left
// to the general distribution. tests/codegen/matrix_tiles_sim.py runs such
// kernels lane by lane (half_ktail, conv_ktail).
// RUN: rm -rf %t && compile-module %s --target=cuda --cuda-arch=sm_80,sm_90a --cuda-ptxas=none --dump-executables=%t -o %t.smod
// RUN: FileCheck %s --input-file=%t/kernels.sm_80.ptx
// RUN: FileCheck %s --input-file=%t/kernels.sm_90a.ptx --check-prefix=WGMMA
// RUN: rm -rf %t.1 && compile-module %s --target=cuda --cuda-arch=sm_80 --cuda-ptxas=none --gpu-codegen-options=mma-stages=1 --dump-executables=%t.1 -o %t.1.smod
// RUN: FileCheck %s --input-file=%t.1/kernels.sm_80.ptx --check-prefix=ONE

// CHECK-LABEL: .entry k40_dispatch_0(
// CHECK: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// WGMMA-LABEL: .entry k40_dispatch_0(
// WGMMA: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16

// ONE-LABEL: .entry k40_dispatch_0(
// ONE-NOT: mma.sync
// ONE-NOT: cp.async

func.func @k40(%a: tensor<?x40xf16>, %b: tensor<40x64xf16>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x40xf16>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<?x40xf16>, tensor<40x64xf16>) outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}
