// f16 and bf16 matmuls on NVIDIA's tensor cores (strata-gpu-matrix-tiles
// kind=mma, the CUDA target's choice when every arch is sm_80 or later):
// four warps per workgroup, fragments loaded from workgroup memory with
// ldmatrix.x4 and multiplied with mma.sync m16n8k16 into f32 accumulators,
// the epilogue (bias, ReLU; a truncation to f16) applied before the store.
// The tiles reach workgroup memory by cp.async into three buffers
// (mma-stages=3, the default), or with mma-stages=1 through registers into
// one; tests/codegen/matrix_tiles_sim.py runs both lane by lane.
// f32 matmuls stay on the shared-memory FMA kernel (256 invocations), and a
// module with an arch before sm_80 keeps every matmul there.
// tests/benchmarks/gpu_bench.py checks the results on a GPU against exact
// products (random small integers), and the op suite's linalg.matmul_f16.
// RUN: rm -rf %t && compile-module %s --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=none --dump-executables=%t -o %t.smod
// RUN: FileCheck %s --input-file=%t/kernels.sm_80.ptx --check-prefix=PTX
// RUN: FileCheck %s --input-file=%t/kernels.sm_90.ptx --check-prefix=ASYNC
// RUN: rm -rf %t.1 && compile-module %s --target=cuda --cuda-arch=sm_90 --cuda-ptxas=none --gpu-codegen-options=mma-stages=1 --dump-executables=%t.1 -o %t.1.smod
// RUN: FileCheck %s --input-file=%t.1/kernels.sm_90.ptx --check-prefix=LDM
// RUN: rm -rf %t.4 && compile-module %s --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=none --gpu-codegen-options=mma-stages=4 --dump-executables=%t.4 -o %t.4.smod
// RUN: FileCheck %s --input-file=%t.4/kernels.sm_90.ptx --check-prefix=DYNAMIC
// RUN: not compile-module %s --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=none --gpu-codegen-options=mma-stages=11 -o %t.11.smod 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// RUN: not compile-module %s --target=cuda --cuda-arch=sm_86 --cuda-ptxas=none --gpu-codegen-options=mma-stages=7 -o %t.86.smod 2>&1 | FileCheck %s --check-prefix=TOO-MANY-86
// RUN: not compile-module %s --target=cuda --cuda-arch=sm_90 --cuda-ptxas=none --gpu-codegen-options="mma-stages=4 mma-workgroup-memory=49152" -o %t.static.smod 2>&1 | FileCheck %s --check-prefix=STATIC-ONLY
// RUN: dump-module %t.smod --no-disassembly | FileCheck %s --check-prefix=DUMP
// RUN: rm -rf %t.75 && compile-module %s --target=cuda --cuda-arch=sm_75,sm_90 --cuda-ptxas=none --dump-executables=%t.75 -o %t.75.smod
// RUN: FileCheck %s --input-file=%t.75/kernels.sm_90.ptx --check-prefix=SM75

// A dynamic M: 128x128 tiles, each warp 64x64 (4 x 8 fragments of 16x8),
// two steps of 16 along each step of 32: 64 mma.sync and 16 ldmatrix.x4.
// PTX-LABEL: .entry bf16_layer_dispatch_0(
// PTX: .maxntid 128, 1, 1
// PTX-COUNT-64: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-NOT: mma.sync
// 64x64 tiles for a 64x64 result, each warp 32x32: 16 mma.sync, 8 ldmatrix.x4.
// PTX-LABEL: .entry f16_small_dispatch_1(
// PTX: .maxntid 128, 1, 1
// PTX-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-NOT: mma.sync
// PTX-LABEL: .entry f32_layer_dispatch_2(
// PTX: .maxntid 256, 1, 1
// PTX-NOT: mma.sync
// PTX-NOT: ldmatrix

// Three buffers: the first two steps copied before the K loop, each 16
// bytes (4 chunks of A and 4 of B per invocation of a 128x128 tile), then
// per step a wait for the oldest group, one barrier and the copy of the
// step two ahead; B's fragments load transposed; after the loop nothing
// stays in flight.
// ASYNC-LABEL: .entry bf16_layer_dispatch_0(
// ASYNC-COUNT-8: cp.async.cg.shared.global [%rd{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
// ASYNC-NEXT: cp.async.commit_group;
// ASYNC-COUNT-8: cp.async.cg.shared.global
// ASYNC-NEXT: cp.async.commit_group;
// ASYNC: cp.async.wait_group 1;
// ASYNC-NEXT: bar.sync 0;
// ASYNC-COUNT-8: cp.async.cg.shared.global
// ASYNC-NEXT: cp.async.commit_group;
// ASYNC-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// ASYNC: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// ASYNC-COUNT-8: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// ASYNC: cp.async.wait_group 0;
// ASYNC-NEXT: bar.sync 0;
// ASYNC-NOT: cp.async
// ASYNC-LABEL: .entry f16_small_dispatch_1(

// Four buffers of a 128x128 tile (16 KiB each) pass the 48 KiB a kernel may
// declare: its workgroup memory is dynamic, the PTX's `.extern .shared`
// array, which the driver sizes at each launch. Past what every arch offers
// a kernel that opts in (163 KiB on sm_80, 99 KiB on sm_86), refused.
// DYNAMIC: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// DYNAMIC-NOT: .shared .align
// DYNAMIC-LABEL: .entry bf16_layer_dispatch_0(
// DYNAMIC: cp.async.wait_group 2;
// TOO-MANY: error: strata-gpu-matrix-tiles: mma-stages=11 needs 180224 bytes of workgroup memory for 128x128 tiles, more than the 166912 a kernel may have on every target arch
// STATIC-ONLY: error: strata-gpu-matrix-tiles: mma-stages=4 needs 65536 bytes of workgroup memory for 128x128 tiles, more than the 49152 a kernel may have
// TOO-MANY-86: error: strata-gpu-matrix-tiles: mma-stages=7 needs 114688 bytes of workgroup memory for 128x128 tiles, more than the 101376 a kernel may have

// With mma-stages=1, 16 and 8 ldmatrix.x4 of the padded rows:
// LDM-LABEL: .entry bf16_layer_dispatch_0(
// LDM-COUNT-16: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// LDM-NOT: ldmatrix
// LDM-LABEL: .entry f16_small_dispatch_1(
// LDM-COUNT-8: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// LDM-NOT: ldmatrix
// LDM-LABEL: .entry f32_layer_dispatch_2(

// DUMP: entry#0 bf16_layer_dispatch_0: 4 bindings (0, 1, 2 read-only), 3 push constants, workgroup size 128x1x1
// DUMP-NEXT: entry#1 f16_small_dispatch_1: 3 bindings (0, 1 read-only), 0 push constants, workgroup size 128x1x1
// DUMP-NEXT: entry#2 f32_layer_dispatch_2: 3 bindings (0, 1 read-only), 3 push constants, workgroup size 256x1x1

// SM75-NOT: mma.sync
// SM75-NOT: ldmatrix
// SM75: .entry f32_layer_dispatch_2(

func.func @bf16_layer(%a: tensor<?x64xbf16>, %b: tensor<64x128xbf16>, %bias: tensor<128xf32>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x64xbf16>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x128xf32>) -> tensor<?x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<?x64xbf16>, tensor<64x128xbf16>) outs(%init : tensor<?x128xf32>) -> tensor<?x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %bias : tensor<?x128xf32>, tensor<128xf32>) outs(%c : tensor<?x128xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<?x128xf32>
  return %r : tensor<?x128xf32>
}

func.func @f16_small(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>) -> tensor<64x64xf16> {
  %zero = arith.constant 0.0 : f16
  %empty = tensor.empty() : tensor<64x64xf16>
  %init = linalg.fill ins(%zero : f16) outs(%empty : tensor<64x64xf16>) -> tensor<64x64xf16>
  %c = linalg.matmul ins(%a, %b : tensor<64x32xf16>, tensor<32x64xf16>) outs(%init : tensor<64x64xf16>) -> tensor<64x64xf16>
  return %c : tensor<64x64xf16>
}

func.func @f32_layer(%a: tensor<?x64xf32>, %b: tensor<64x128xf32>) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m) : tensor<?x128xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x128xf32>) -> tensor<?x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x128xf32>) outs(%init : tensor<?x128xf32>) -> tensor<?x128xf32>
  return %c : tensor<?x128xf32>
}
