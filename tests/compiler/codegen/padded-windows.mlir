// A pad that one convolution reads: strata-cpu-window-padded-inputs replaces
// the padded temporary (a copy into its interior, fills of its border) by a
// placeholder view of the input, and after distribution
// strata-cpu-materialize-padded-windows gives the convolution's workgroup
// tile the window of padded input it reads, in local memory.
// RUN: strata-opt %s --split-input-file --strata-cpu-window-padded-inputs | FileCheck %s
// RUN: strata-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(strata-cpu-window-padded-inputs,strata-cpu-select-tile-sizes{workgroup-iterations=2000}),strata-cpu-distribute-to-workgroups,func.func(strata-cpu-materialize-padded-windows{vector-bits=512}),canonicalize,cse)" | FileCheck %s --check-prefix=WINDOW

// CHECK-LABEL: func.func @depthwise
// CHECK-SAME: (%[[X:[^:]*]]: memref<1x16x16x32xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.copy
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [1, 18, 18, 32], strides: [10368, 576, 32, 1] {strata_cpu.padding = {low = array<i64: 0, 1, 1, 0>, value = 0.000000e+00 : f32}}
// CHECK: linalg.fill
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[V]], %{{.*}} : memref<1x18x18x32xf32>, memref<3x3x32xf32>)
// CHECK-NOT: linalg.fill

// A depthwise convolution reads its padded input in place (9 FMAs per
// element read: copying its rows into windows took longer than it): split
// by output rows, each workgroup's tile reads a view of the placeholder,
// whose reads strata-cpu-tile-and-vectorize guards (padded-reads.mlir).
// WINDOW-LABEL: func.func @depthwise
// WINDOW-SAME: (%[[X:[^:]*]]: memref<1x16x16x32xf32>
// WINDOW-SAME: strata_cpu.distribution = {extent = 8 : i64, tile = 1 : i64}
// WINDOW: %[[V:.*]] = memref.reinterpret_cast %[[X]] {{.*}} {strata_cpu.padding = {low = array<i64: 0, 1, 1, 0>, value = 0.000000e+00 : f32}}
// WINDOW-NOT: memref.alloca
// WINDOW-NOT: linalg.copy
// WINDOW: scf.for
// WINDOW: linalg.fill
// WINDOW: %[[TILE:.*]] = memref.subview %[[V]][0, %{{.*}}, 0, 0] [1, 3, 17, 32]
// WINDOW-NEXT: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[TILE]], %{{.*}} : memref<1x3x17x32xf32, strided<[10368, 576, 32, 1], offset: ?>>, memref<3x3x32xf32>)
func.func @depthwise(%x: memref<1x16x16x32xf32>, %f: memref<3x3x32xf32>, %out: memref<1x8x8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x18x18x32xf32>
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 16, 16, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x16x32xf32, strided<[10368, 576, 32, 1], offset: 608>>
  linalg.copy ins(%x : memref<1x16x16x32xf32>) outs(%interior : memref<1x16x16x32xf32, strided<[10368, 576, 32, 1], offset: 608>>)
  %top = memref.subview %padded[0, 0, 0, 0] [1, 1, 18, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x1x18x32xf32, strided<[10368, 576, 32, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x18x32xf32, strided<[10368, 576, 32, 1]>>)
  %bottom = memref.subview %padded[0, 17, 0, 0] [1, 1, 18, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x1x18x32xf32, strided<[10368, 576, 32, 1], offset: 9792>>
  linalg.fill ins(%zero : f32) outs(%bottom : memref<1x1x18x32xf32, strided<[10368, 576, 32, 1], offset: 9792>>)
  %left = memref.subview %padded[0, 1, 0, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 576>>
  linalg.fill ins(%zero : f32) outs(%left : memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 576>>)
  %right = memref.subview %padded[0, 1, 17, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 1120>>
  linalg.fill ins(%zero : f32) outs(%right : memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 1120>>)
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x8x32xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%padded, %f : memref<1x18x18x32xf32>, memref<3x3x32xf32>) outs(%out : memref<1x8x8x32xf32>)
  return
}

// -----

// Max pooling padded with -inf reads in place too (one compare per element
// read).
// CHECK-LABEL: func.func @max_pooling
// CHECK: memref.reinterpret_cast {{.*}} {strata_cpu.padding = {low = array<i64: 0, 1, 1, 0>, value = 0xFF800000 : f32}}
// WINDOW-LABEL: func.func @max_pooling
// WINDOW: %[[V:.*]] = memref.reinterpret_cast {{.*}} {strata_cpu.padding = {low = array<i64: 0, 1, 1, 0>, value = 0xFF800000 : f32}}
// WINDOW-NOT: memref.alloca
// WINDOW: %[[TILE:.*]] = memref.subview %[[V]][0, %{{.*}}, 0, 0] [1, 3, 17, 32]
// WINDOW-NEXT: linalg.pooling_nhwc_max {{.*}} ins(%[[TILE]], %{{.*}} : memref<1x3x17x32xf32, strided<[10368, 576, 32, 1], offset: ?>>, memref<3x3xf32>)
func.func @max_pooling(%x: memref<1x16x16x32xf32>, %k: memref<3x3xf32>, %out: memref<1x8x8x32xf32>) {
  %low = arith.constant 0xFF800000 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x18x18x32xf32>
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 16, 16, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x16x32xf32, strided<[10368, 576, 32, 1], offset: 608>>
  linalg.copy ins(%x : memref<1x16x16x32xf32>) outs(%interior : memref<1x16x16x32xf32, strided<[10368, 576, 32, 1], offset: 608>>)
  %top = memref.subview %padded[0, 0, 0, 0] [1, 1, 18, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x1x18x32xf32, strided<[10368, 576, 32, 1]>>
  linalg.fill ins(%low : f32) outs(%top : memref<1x1x18x32xf32, strided<[10368, 576, 32, 1]>>)
  %bottom = memref.subview %padded[0, 17, 0, 0] [1, 1, 18, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x1x18x32xf32, strided<[10368, 576, 32, 1], offset: 9792>>
  linalg.fill ins(%low : f32) outs(%bottom : memref<1x1x18x32xf32, strided<[10368, 576, 32, 1], offset: 9792>>)
  %left = memref.subview %padded[0, 1, 0, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 576>>
  linalg.fill ins(%low : f32) outs(%left : memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 576>>)
  %right = memref.subview %padded[0, 1, 17, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 1120>>
  linalg.fill ins(%low : f32) outs(%right : memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 1120>>)
  linalg.fill ins(%low : f32) outs(%out : memref<1x8x8x32xf32>)
  linalg.pooling_nhwc_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%padded, %k : memref<1x18x18x32xf32>, memref<3x3xf32>) outs(%out : memref<1x8x8x32xf32>)
  return
}

// -----

// A convolution (3 x 3 x 32 x 16, stride 2), split by output rows, one a
// workgroup: each reads 3 rows and 17 columns of the padded input through a
// window in local memory. The rows outside the input (the first
// workgroup's top row) and the left column are filled with the padding; the
// right one is not read; the rest is copied; the output's fill stays next
// to the convolution.
// CHECK-LABEL: func.func @convolution
// CHECK: memref.reinterpret_cast {{.*}} {strata_cpu.padding = {low = array<i64: 0, 1, 1, 0>, value = 0.000000e+00 : f32}}
// WINDOW-LABEL: func.func @convolution
// WINDOW-SAME: (%[[X:[^:]*]]: memref<1x16x16x32xf32>
// WINDOW-SAME: strata_cpu.distribution = {extent = 8 : i64, tile = 1 : i64}
// WINDOW: scf.for %[[ROW:.*]] =
// WINDOW: %[[WIN:.*]] = memref.alloca() {alignment = 64 : i64, strata_cpu.local_memory} : memref<1x3x17x32xf32>
// WINDOW: %[[TOP:.*]] = memref.subview %[[WIN]][0, 0, 0, 0] [1, %{{.*}}, 17, 32]
// WINDOW: linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 1, 16>, workgroup = array<i64: 0, 0, 0, 0>}} ins(%{{.*}} : f32) outs(%[[TOP]]
// WINDOW: linalg.fill
// WINDOW: %[[LEFT:.*]] = memref.subview %[[WIN]][0, 0, 0, 0] [1, 3, 1, 32]
// WINDOW: linalg.fill {{.*}} outs(%[[LEFT]]
// WINDOW: linalg.fill
// WINDOW: %[[FROM:.*]] = memref.subview %[[X]][0, %{{.*}}, 0, 0] [1, %{{.*}}, 16, 32]
// WINDOW: %[[TO:.*]] = memref.subview %[[WIN]][0, %{{.*}}, 1, 0] [1, %{{.*}}, 16, 32]
// WINDOW: linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 1, 16>, workgroup = array<i64: 0, 0, 0, 0>}} ins(%[[FROM]] {{.*}} outs(%[[TO]]
// WINDOW-NEXT: linalg.fill
// WINDOW-NEXT: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[WIN]], %{{.*}} : memref<1x3x17x32xf32>, memref<3x3x32x16xf32>)
// WINDOW-NOT: memref.reinterpret_cast
func.func @convolution(%x: memref<1x16x16x32xf32>, %f: memref<3x3x32x16xf32>, %out: memref<1x8x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x18x18x32xf32>
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 16, 16, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x16x32xf32, strided<[10368, 576, 32, 1], offset: 608>>
  linalg.copy ins(%x : memref<1x16x16x32xf32>) outs(%interior : memref<1x16x16x32xf32, strided<[10368, 576, 32, 1], offset: 608>>)
  %top = memref.subview %padded[0, 0, 0, 0] [1, 1, 18, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x1x18x32xf32, strided<[10368, 576, 32, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x18x32xf32, strided<[10368, 576, 32, 1]>>)
  %bottom = memref.subview %padded[0, 17, 0, 0] [1, 1, 18, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x1x18x32xf32, strided<[10368, 576, 32, 1], offset: 9792>>
  linalg.fill ins(%zero : f32) outs(%bottom : memref<1x1x18x32xf32, strided<[10368, 576, 32, 1], offset: 9792>>)
  %left = memref.subview %padded[0, 1, 0, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 576>>
  linalg.fill ins(%zero : f32) outs(%left : memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 576>>)
  %right = memref.subview %padded[0, 1, 17, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x18x32xf32> to memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 1120>>
  linalg.fill ins(%zero : f32) outs(%right : memref<1x16x1x32xf32, strided<[10368, 576, 32, 1], offset: 1120>>)
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x8x16xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%padded, %f : memref<1x18x18x32xf32>, memref<3x3x32x16xf32>) outs(%out : memref<1x8x8x16xf32>)
  return
}

// -----

// Left alone: a border not covered (the right column is never filled), and
// a temporary that two ops read.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: memref.reinterpret_cast
// CHECK: memref.alloc
// CHECK: memref.alloc
// CHECK-NOT: memref.reinterpret_cast
func.func @left_alone(%x: memref<1x4x4x16xf32>, %f: memref<3x3x16xf32>, %out: memref<1x4x4x16xf32>, %out2: memref<1x4x4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x6x6x16xf32>
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x4x4x16xf32, strided<[576, 96, 16, 1], offset: 112>>
  linalg.copy ins(%x : memref<1x4x4x16xf32>) outs(%interior : memref<1x4x4x16xf32, strided<[576, 96, 16, 1], offset: 112>>)
  %top = memref.subview %padded[0, 0, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x1x6x16xf32, strided<[576, 96, 16, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x6x16xf32, strided<[576, 96, 16, 1]>>)
  %bottom = memref.subview %padded[0, 5, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x1x6x16xf32, strided<[576, 96, 16, 1], offset: 480>>
  linalg.fill ins(%zero : f32) outs(%bottom : memref<1x1x6x16xf32, strided<[576, 96, 16, 1], offset: 480>>)
  %left = memref.subview %padded[0, 1, 0, 0] [1, 4, 1, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x4x1x16xf32, strided<[576, 96, 16, 1], offset: 96>>
  linalg.fill ins(%zero : f32) outs(%left : memref<1x4x1x16xf32, strided<[576, 96, 16, 1], offset: 96>>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %f : memref<1x6x6x16xf32>, memref<3x3x16xf32>) outs(%out : memref<1x4x4x16xf32>)

  %padded2 = memref.alloc() : memref<1x6x6x16xf32>
  %interior2 = memref.subview %padded2[0, 1, 1, 0] [1, 4, 4, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x4x4x16xf32, strided<[576, 96, 16, 1], offset: 112>>
  linalg.copy ins(%x : memref<1x4x4x16xf32>) outs(%interior2 : memref<1x4x4x16xf32, strided<[576, 96, 16, 1], offset: 112>>)
  %top2 = memref.subview %padded2[0, 0, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x1x6x16xf32, strided<[576, 96, 16, 1]>>
  linalg.fill ins(%zero : f32) outs(%top2 : memref<1x1x6x16xf32, strided<[576, 96, 16, 1]>>)
  %bottom2 = memref.subview %padded2[0, 5, 0, 0] [1, 1, 6, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x1x6x16xf32, strided<[576, 96, 16, 1], offset: 480>>
  linalg.fill ins(%zero : f32) outs(%bottom2 : memref<1x1x6x16xf32, strided<[576, 96, 16, 1], offset: 480>>)
  %left2 = memref.subview %padded2[0, 1, 0, 0] [1, 4, 1, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x4x1x16xf32, strided<[576, 96, 16, 1], offset: 96>>
  linalg.fill ins(%zero : f32) outs(%left2 : memref<1x4x1x16xf32, strided<[576, 96, 16, 1], offset: 96>>)
  %right2 = memref.subview %padded2[0, 1, 5, 0] [1, 4, 1, 16] [1, 1, 1, 1] : memref<1x6x6x16xf32> to memref<1x4x1x16xf32, strided<[576, 96, 16, 1], offset: 176>>
  linalg.fill ins(%zero : f32) outs(%right2 : memref<1x4x1x16xf32, strided<[576, 96, 16, 1], offset: 176>>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded2, %f : memref<1x6x6x16xf32>, memref<3x3x16xf32>) outs(%out : memref<1x4x4x16xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded2, %f : memref<1x6x6x16xf32>, memref<3x3x16xf32>) outs(%out2 : memref<1x4x4x16xf32>)
  return
}
