// CUDA's tensor-core tiles with mma-wide-tiles: 128x256 tiles of C, eight
// warps (256 threads) of 64x64 each, where N is a multiple of 256; their
// three cp.async buffers (72 KiB) are dynamic shared memory. An N of 128
// keeps the 128x128 tiles of four warps. tests/codegen/matrix_tiles_sim.py
// runs the wide tiles lane by lane; gpu_bench.py times them on a GPU.
// RUN: rm -rf %t && compile-module %s --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=none --gpu-codegen-options=mma-wide-tiles=1 --dump-executables=%t -o %t.smod
// RUN: rm -rf %t.wg && compile-module %s --target=cuda --cuda-arch=sm_90,sm_90a --cuda-ptxas=none --gpu-codegen-options=mma-wide-tiles=1 --dump-executables=%t.wg -o %t.wg.smod
// RUN: FileCheck %s --input-file=%t/kernels.sm_90.ptx
// On sm_90a each of the two warpgroups takes 64 rows by 256 columns with
// wgmma m64n256k16 (the same entry points as the others' mma.sync).
// RUN: FileCheck %s --input-file=%t.wg/kernels.sm_90a.ptx --check-prefix=WGMMA
// RUN: not compile-module %s --target=cuda --cuda-arch=sm_86 --cuda-ptxas=none --gpu-codegen-options="mma-wide-tiles=1 mma-stages=5" -o %t.86.smod 2>&1 | FileCheck %s --check-prefix=TOO-MANY

// CHECK: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// CHECK-LABEL: .entry wide_dispatch_0(
// CHECK: .maxntid 256, 1, 1
// CHECK: cp.async.wait_group 1;
// CHECK-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: mma.sync
// CHECK: cp.async.wait_group 0;
// CHECK-LABEL: .entry narrow_dispatch_1(
// CHECK: .maxntid 128, 1, 1
// WGMMA-LABEL: .entry wide_dispatch_0(
// WGMMA: .maxntid 256, 1, 1
// WGMMA-COUNT-2: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// WGMMA-NOT: mma.sync
// WGMMA-LABEL: .entry narrow_dispatch_1(
// WGMMA: .maxntid 128, 1, 1
// WGMMA: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// TOO-MANY: error: strata-gpu-matrix-tiles: mma-stages=5 needs 122880 bytes of workgroup memory for 128x256 tiles, more than the 101376

func.func @wide(%a: tensor<?x64xbf16>, %b: tensor<64x256xbf16>) -> tensor<?x256xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x64xbf16>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x256xf32>) -> tensor<?x256xf32>
  %c = linalg.matmul ins(%a, %b : tensor<?x64xbf16>, tensor<64x256xbf16>) outs(%init : tensor<?x256xf32>) -> tensor<?x256xf32>
  return %c : tensor<?x256xf32>
}

func.func @narrow(%a: tensor<?x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x64xbf16>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x128xf32>) -> tensor<?x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<?x64xbf16>, tensor<64x128xbf16>) outs(%init : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %c : tensor<?x128xf32>
}
