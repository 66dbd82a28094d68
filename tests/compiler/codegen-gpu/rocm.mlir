// The GPU code generator and the ROCDL back end on the kernel of cuda.mlir,
// plus one that calls ROCm's device math library: an HSA code object for
// each arch asked for, linked by ld.lld, with the kernel ABI
// of schemas/rocm_executable.fbs (binding pointers, then the 32-bit
// constants: 44 bytes of explicit kernel arguments), the required workgroup
// size, and the code object version each arch gets (4 for gfx90a, 5 for the
// others; --rocm-code-object overrides it). Nothing is left undefined: the
// math functions come from ocml.bc.
// RUN: rm -rf %t && compile-module %s --target=rocm --rocm-arch=gfx90a,gfx942,gfx1100 --dump-executables=%t -o %t.smod
// RUN: llvm-readobj --file-headers --notes %t/kernels.gfx90a.hsaco | FileCheck %s --check-prefixes=CO,GFX90A
// RUN: llvm-readobj --file-headers --notes %t/kernels.gfx942.hsaco | FileCheck %s --check-prefixes=CO,GFX942
// RUN: llvm-readobj --file-headers --notes %t/kernels.gfx1100.hsaco | FileCheck %s --check-prefixes=CO,GFX1100
// RUN: llvm-readobj --dyn-symbols %t/kernels.gfx942.hsaco | FileCheck %s --check-prefix=SYMBOLS
// RUN: dump-module %t.smod --no-disassembly | FileCheck %s --check-prefix=DUMP
// RUN: rm -rf %t.v6 && compile-module %s --target=rocm --rocm-arch=gfx90a --rocm-code-object=6 --dump-executables=%t.v6 -o %t.v6.smod
// RUN: llvm-readobj --file-headers %t.v6/kernels.gfx90a.hsaco | FileCheck %s --check-prefix=V6
// RUN: not compile-module %s --target=rocm --rocm-arch=gfx9000 -o %t.bad 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not compile-module %s --target=rocm --rocm-arch=gfx90a,gfx90a -o %t.bad 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not compile-module %s --target=rocm --rocm-code-object=3 -o %t.bad 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: not compile-module %s --target=rocm --rocm-device-libs=%t -o %t.bad 2>&1 | FileCheck %s --check-prefix=LIBS
// RUN: not compile-module %s --rocm-arch=gfx90a -o %t.bad 2>&1 | FileCheck %s --check-prefix=NEEDS-TARGET

// The ELF header's ABI version is the code object version less 2.
// GFX90A: ABIVersion: 2
// GFX942: ABIVersion: 3
// GFX1100: ABIVersion: 3
// CO: amdhsa.kernels:
// GFX90A: .kernarg_segment_size: 44
// CO: .name: layer_dispatch_0
// CO: .reqd_workgroup_size:
// CO-NEXT: - 64
// CO: .name: soft_dispatch_1
// GFX90A: amdhsa.target: amdgcn-amd-amdhsa--gfx90a
// GFX90A: amdhsa.version:
// GFX90A-NEXT: - 1
// GFX90A-NEXT: - 1
// GFX942: amdhsa.target: amdgcn-amd-amdhsa--gfx942
// GFX942: amdhsa.version:
// GFX942-NEXT: - 1
// GFX942-NEXT: - 2
// GFX1100: amdhsa.target: amdgcn-amd-amdhsa--gfx1100
// V6: ABIVersion: 4

// DUMP: kernels [rocm-hsaco]:
// DUMP-NEXT: code objects: gfx90a v4 ({{[0-9]+}} bytes) gfx942 v5 ({{[0-9]+}} bytes) gfx1100 v5 ({{[0-9]+}} bytes)
// DUMP-NEXT: entry#0 layer_dispatch_0: 4 bindings (0, 1, 2 read-only), 3 push constants, workgroup size 64x1x1
// DUMP-NEXT: entry#1 soft_dispatch_1: 2 bindings (0 read-only), 3 push constants, workgroup size 64x1x1

// SYMBOLS-NOT: __ocml
// SYMBOLS: layer_dispatch_0
// SYMBOLS-NOT: __ocml

// ARCH: unknown ROCm arch 'gfx9000'; expected an AMD GPU architecture LLVM knows, such as gfx90a, gfx942 or gfx1100
// TWICE: ROCm arch 'gfx90a' is named twice
// VERSION: ROCm code object version 3 is not one of 4, 5 and 6
// LIBS: holds no ocml.bc
// NEEDS-TARGET: --rocm-arch, --rocm-code-object, --rocm-device-libs and --rocm-lld need --target to include rocm

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

func.func @soft(%x: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.erf %in : f32
    %b = math.exp %a : f32
    linalg.yield %b : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
