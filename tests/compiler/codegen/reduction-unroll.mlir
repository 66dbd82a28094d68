// strata-cpu-tile-and-vectorize unrolls the reduction loop of a register
// tile whole where it has at most `reduction-unroll` steps (4 by default),
// and a longer one by that many steps when the tile's accumulators and what
// one step reads fit the target's registers beside a broadcast and the loop
// is not inside another reduction loop.
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-tile-and-vectorize{vector-bits=256 vector-registers=16}))" | FileCheck %s
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-tile-and-vectorize{vector-bits=256 vector-registers=16 reduction-unroll=1}))" | FileCheck %s --check-prefix=ONE

// AVX2's 6 x 16 tile: 12 accumulators, 2 registers of the right-hand side
// and a broadcast. 64 steps of k run 4 to an iteration.
// CHECK-LABEL: func.func @k64
// CHECK: scf.for %[[K:.*]] = %c0 to %c64 step %c4 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<6x16xf32>)
// CHECK:   vector.transfer_read %arg1[%[[K]], %c0]
// CHECK:   %[[S0:.*]] = arith.addf %[[ACC]], %{{.*}} : vector<6x16xf32>
// CHECK:   %[[K1:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK:   vector.transfer_read %arg1[%[[K1]], %c0]
// CHECK:   %[[S1:.*]] = arith.addf %[[S0]], %{{.*}} : vector<6x16xf32>
// CHECK:   %[[S2:.*]] = arith.addf %[[S1]], %{{.*}} : vector<6x16xf32>
// CHECK:   %[[S3:.*]] = arith.addf %[[S2]], %{{.*}} : vector<6x16xf32>
// CHECK:   scf.yield %[[S3]]
// ONE-LABEL: func.func @k64
// ONE: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
func.func @k64(%a: memref<6x64xf32>, %b: memref<64x16xf32>, %c: memref<6x16xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<6x64xf32>, memref<64x16xf32>) outs(%c : memref<6x16xf32>)
  return
}

// 10 steps: two iterations of 4, then the last 2 one at a time.
// CHECK-LABEL: func.func @k10
// CHECK: %[[MAIN:.*]] = scf.for %{{.*}} = %c0 to %c8 step %c4 iter_args
// CHECK-COUNT-4: arith.mulf
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %c8 to %c10 step %c1 iter_args(%{{.*}} = %[[MAIN]])
// CHECK-COUNT-1: arith.mulf
// CHECK: scf.yield
func.func @k10(%a: memref<6x10xf32>, %b: memref<10x16xf32>, %c: memref<6x16xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<6x10xf32>, memref<10x16xf32>) outs(%c : memref<6x16xf32>)
  return
}

// A dynamic count (in a matmul blocked for the caches, the blocks of k after
// the first run min(256, K - k) steps): 4 steps to an iteration up to the
// largest multiple of 4, then the rest one at a time.
// CHECK-LABEL: func.func @dynamic_k
// CHECK: %[[MAIN:.*]] = scf.for %{{.*}} = %c0 to %[[END:.*]] step %{{.*}} iter_args
// CHECK-COUNT-4: arith.mulf
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %[[END]] to %{{.*}} step %c1 iter_args(%{{.*}} = %[[MAIN]])
// CHECK-COUNT-1: arith.mulf
// CHECK: scf.yield
func.func @dynamic_k(%a: memref<6x?xf32>, %b: memref<?x16xf32>, %c: memref<6x16xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<6x?xf32>, memref<?x16xf32>) outs(%c : memref<6x16xf32>)
  return
}

// 3 steps: no loop left.
// CHECK-LABEL: func.func @k3
// CHECK-NOT: scf.for
// CHECK-COUNT-3: arith.mulf {{.*}} : vector<6x16x1xf32>
// CHECK-NOT: scf.for
// CHECK: vector.transfer_write
func.func @k3(%a: memref<6x3xf32>, %b: memref<3x16xf32>, %c: memref<6x16xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<6x3xf32>, memref<3x16xf32>) outs(%c : memref<6x16xf32>)
  return
}

// An 8 x 32 tile takes 32 accumulators of 256 bits: more than the 16
// registers, so unrolling would only add spills. One step at a time.
// CHECK-LABEL: func.func @too_wide
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// CHECK-COUNT-1: arith.mulf
// CHECK: scf.yield
func.func @too_wide(%a: memref<8x64xf32>, %b: memref<64x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<8x64xf32>, memref<64x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// A loop of at most 4 steps is unrolled whole even so (a depthwise
// convolution's 3 filter rows gained).
// CHECK-LABEL: func.func @too_wide_short
// CHECK-NOT: scf.for
// CHECK-COUNT-3: arith.mulf {{.*}} : vector<8x32x1xf32>
// CHECK-NOT: scf.for
// CHECK: vector.transfer_write
func.func @too_wide_short(%a: memref<8x3xf32>, %b: memref<3x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<8x3xf32>, memref<3x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// A convolution tile of 4 columns and 3 taps: its input channels, a loop
// inside its filter rows' loop, run one at a time although the tile's 8
// accumulators, 6 registers of filter, one of input and a broadcast fit.
// CHECK-LABEL: func.func @conv
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args
// CHECK:   scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args
// CHECK:     vector.transfer_read {{.*}} : memref<3x3x8x16xf32>, vector<3x1x16xf32>
// CHECK-NOT: vector.transfer_read {{.*}} : memref<3x3x8x16xf32>
// CHECK:     scf.yield
// CHECK:   scf.yield
func.func @conv(%in: memref<1x3x6x8xf32>, %f: memref<3x3x8x16xf32>, %out: memref<1x1x4x16xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>,
      strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 4, 16, 1, 3, 1>, workgroup = array<i64: 0, 0, 0, 0, 0, 0, 0>}}
      ins(%in, %f : memref<1x3x6x8xf32>, memref<3x3x8x16xf32>) outs(%out : memref<1x1x4x16xf32>)
  return
}
