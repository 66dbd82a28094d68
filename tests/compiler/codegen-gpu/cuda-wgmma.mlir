// f16 and bf16 matmuls on sm_90a's warpgroup tensor cores (strata-gpu-matrix-tiles
// kind=wgmma, the CUDA target's choice when every arch is sm_90a): the kernels of
// cuda-tensor-cores.mlir, whose tiles reach workgroup memory by cp.async into three
// buffers of unswizzled core matrices, fenced for the async proxy before the step's
// barrier; per step of 32 along K one wgmma.mma_async m64nNk16 per 16 of K and 64
// rows, reading both operands through descriptors (A: K-adjacent core matrices 128
// bytes apart, M-adjacent 512: 0x2000080000 ORed into the address; B of 128 columns:
// K-adjacent 2048, N-adjacent 128: 0x800800000), committed as one group; the wait for
// the step before's group (one stays in flight) frees its buffer for the next copies.
// tests/codegen/matrix_tiles_sim.py runs these kernels lane by lane.
// RUN: rm -rf %t && compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_90a --cuda-ptxas=none --dump-executables=%t -o %t.smod
// RUN: FileCheck %s --input-file=%t/kernels.sm_90a.ptx
// RUN: dump-module %t.smod --no-disassembly | FileCheck %s --check-prefix=DUMP
// Beside other archs, sm_90a's kernels are lowered apart (wgmma), the others' once for
// all of them (mma.sync), with the same entry points; the images in the order named.
// RUN: rm -rf %t.mixed && compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_90a,sm_80,sm_90 --cuda-ptxas=none --dump-executables=%t.mixed -o %t.mixed.smod
// RUN: FileCheck %s --input-file=%t.mixed/kernels.sm_90a.ptx
// RUN: FileCheck %s --input-file=%t.mixed/kernels.sm_80.ptx --check-prefix=MIXED
// RUN: FileCheck %s --input-file=%t.mixed/kernels.sm_90.ptx --check-prefix=MIXED
// RUN: dump-module %t.mixed.smod --no-disassembly | FileCheck %s --check-prefix=DUMP-MIXED
// Before sm_80 nothing takes the tensor cores, sm_90a's kernels included.
// RUN: rm -rf %t.75 && compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_75,sm_90a --cuda-ptxas=none --dump-executables=%t.75 -o %t.75.smod
// RUN: FileCheck %s --input-file=%t.75/kernels.sm_90a.ptx --check-prefix=SM75
// RUN: not compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_80a --cuda-ptxas=none -o %t.bad.smod 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: .target sm_90a
// CHECK-LABEL: .entry bf16_layer_dispatch_0(
// CHECK: .maxntid 128, 1, 1
// CHECK-DAG: or.b64 {{.*}}, 137439477760;
// CHECK-DAG: or.b64 {{.*}}, 34368126976;
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
// CHECK: cp.async.commit_group;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT: cp.async.wait_group 0;
// CHECK-NEXT: bar.sync 0;
// CHECK-NOT: mma.sync
// CHECK-LABEL: .entry f16_small_dispatch_1(
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK-NOT: mma.sync
// CHECK-LABEL: .entry f32_layer_dispatch_2(
// CHECK-NOT: wgmma

// DUMP: PTX 8.0 images: ptx sm_90a

// DUMP-MIXED: PTX 8.0 images: ptx sm_90a ({{[0-9]+}} bytes) ptx sm_80 ({{[0-9]+}} bytes) ptx sm_90 ({{[0-9]+}} bytes)
// DUMP-MIXED: entry#0 bf16_layer_dispatch_0: 4 bindings (0, 1, 2 read-only), 3 push constants, workgroup size 128x1x1

// MIXED: .target sm_{{80|90}}
// MIXED-NOT: wgmma
// MIXED: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// MIXED-NOT: wgmma

// SM75: .target sm_90a
// SM75-NOT: wgmma
// SM75-NOT: mma.sync

// BAD: unknown CUDA arch 'sm_80a'; expected sm_<major><minor> from sm_50 to sm_121, such as sm_80 or sm_90, or an arch-specific one from sm_90a on
