// The ROCm code objects run matmuls on the matrix cores: MFMA on gfx90a and
// gfx942 (f32 16x16x4 and f16 16x16x16), WMMA on gfx1100 for f16 (RDNA3 has
// no f32 WMMA: the f32 kernel takes FMAs there), with one entry-point list
// for all three code objects (strata-gpu-matrix-tiles gives every kind the
// same grid). No AMD GPU has run these kernels; tests/codegen's
// matrix_tiles_sim.py checks their lane arithmetic against the documented
// layouts.
// RUN: rm -rf %t && compile-module %s --target=rocm --rocm-arch=gfx90a,gfx942,gfx1100 --dump-executables=%t -o %t.smod
// RUN: llvm-objdump -d %t/kernels.gfx90a.hsaco | FileCheck %s --check-prefix=GFX90A
// RUN: llvm-objdump -d %t/kernels.gfx942.hsaco | FileCheck %s --check-prefix=GFX942
// RUN: llvm-objdump -d %t/kernels.gfx1100.hsaco | FileCheck %s --check-prefix=GFX1100
// RUN: llvm-readobj --notes %t/kernels.gfx1100.hsaco | FileCheck %s --check-prefix=WAVE32
// RUN: dump-module %t.smod --no-disassembly | FileCheck %s --check-prefix=DUMP

// GFX90A-LABEL: <layer_dispatch_0>:
// GFX90A: v_mfma_f32_16x16x4f32
// GFX90A-LABEL: <half_dispatch_1>:
// GFX90A: v_mfma_f32_16x16x16f16
// GFX942-LABEL: <layer_dispatch_0>:
// GFX942: v_mfma_f32_16x16x4_f32
// GFX942-LABEL: <half_dispatch_1>:
// GFX942: v_mfma_f32_16x16x16_f16
// GFX1100-LABEL: <layer_dispatch_0>:
// GFX1100-NOT: v_wmma
// GFX1100: s_endpgm
// GFX1100-LABEL: <half_dispatch_1>:
// GFX1100: v_wmma_f32_16x16x16_f16
// WAVE32: .wavefront_size: 32
// DUMP: kernels [rocm-hsaco]
// DUMP-NEXT: code objects: gfx90a v4 ({{[0-9]+}} bytes) gfx942 v5 ({{[0-9]+}} bytes) gfx1100 v5 ({{[0-9]+}} bytes)
// DUMP-NEXT: entry#0 half_dispatch_1: 3 bindings (0, 1 read-only), 0 push constants, workgroup size 64x1x1
// DUMP-NEXT: entry#1 layer_dispatch_0: 4 bindings (0, 1, 2 read-only), 3 push constants, workgroup size 64x1x1

func.func @layer(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<?x32xf32>, tensor<32xf32>) outs(%e : tensor<?x32xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %p = arith.maximumf %s, %zero : f32
    linalg.yield %p : f32
  } -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}
func.func @half(%x: tensor<64x128xf16>, %w: tensor<128x64xf16>) -> tensor<64x64xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<64x64xf16>
  %f = linalg.fill ins(%zero : f16) outs(%e : tensor<64x64xf16>) -> tensor<64x64xf16>
  %m = linalg.matmul ins(%x, %w : tensor<64x128xf16>, tensor<128x64xf16>) outs(%f : tensor<64x64xf16>) -> tensor<64x64xf16>
  return %m : tensor<64x64xf16>
}
