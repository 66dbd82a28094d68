// A depthwise convolution reads its padded input in place: after
// vectorization, strata-cpu-tile-and-vectorize turns each vector read of the
// placeholder into a read of the input when the box it reads lies inside the
// input, and otherwise into one read per row of channels, at indices clamped
// into the input, replaced by the padding value where they were outside it.
// RUN: strata-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(strata-cpu-window-padded-inputs,strata-cpu-select-tile-sizes{workgroup-iterations=2000}),strata-cpu-distribute-to-workgroups,func.func(strata-cpu-materialize-padded-windows{vector-bits=512},strata-cpu-tile-and-vectorize{reduction-unroll=1}),canonicalize,cse)" | FileCheck %s
// Without peeling, a partial tile stays scalar, so an op with one keeps its
// window; one whose tiles divide it still reads in place.
// RUN: strata-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(strata-cpu-window-padded-inputs,strata-cpu-select-tile-sizes{workgroup-iterations=2000}),strata-cpu-distribute-to-workgroups,func.func(strata-cpu-materialize-padded-windows{vector-bits=512 peel=false},strata-cpu-tile-and-vectorize{peel=false reduction-unroll=1}),canonicalize,cse)" | FileCheck %s --check-prefix=NOPEEL

// Stride 2, padding 1: a register tile of 8 output columns reads 17 input
// columns from 2 ow - 1 and, per filter row kh, input row 2 oh + kh - 1.
// NOPEEL-LABEL: func.func @depthwise
// NOPEEL-NOT: memref.alloca
// NOPEEL: scf.if
// CHECK-LABEL: func.func @depthwise
// CHECK-SAME: (%[[X:[^:]*]]: memref<1x16x48x32xf32>
// CHECK-NOT: memref.reinterpret_cast
// CHECK-NOT: memref.alloca
// CHECK: scf.for %[[OH:.*]] = %{{.*}} to %c8 step
// CHECK: scf.for %[[OW:.*]] = %c0 to %c24 step %c8
// CHECK: %[[W2:.*]] = affine.apply #{{.*}}(%[[OW]])
// CHECK: %[[W:.*]] = arith.subi %[[W2]], %c1 : index
// CHECK: %[[WLO:.*]] = arith.cmpi sge, %[[W]], %c0 : index
// CHECK: %[[WHI:.*]] = arith.cmpi sle, %[[W]], %c31 : index
// CHECK: %[[WIN:.*]] = arith.andi %[[WLO]], %[[WHI]] : i1
// CHECK: scf.for %[[C:.*]] = %c0 to %c32 step %c16
// CHECK: scf.for %[[KH:.*]] = %c0 to %c3 step %c1 iter_args
// CHECK: %[[H1:.*]] = affine.apply #{{.*}}(%[[OH]])[%[[KH]]]
// CHECK: %[[H:.*]] = arith.subi %[[H1]], %c1 : index
// CHECK: %[[HLO:.*]] = arith.cmpi sge, %[[H]], %c0 : index
// CHECK: %[[HHI:.*]] = arith.cmpi sle, %[[H]], %c15 : index
// CHECK: %[[HIN:.*]] = arith.andi %[[HLO]], %[[HHI]] : i1
// CHECK: %[[IN:.*]] = arith.andi %[[HIN]], %[[WIN]] : i1
// CHECK: scf.if %[[IN]] -> (vector<1x17x16xf32>) {
// CHECK:   vector.transfer_read %[[X]][%c0, %[[H]], %[[W]], %[[C]]], %{{.*}} {in_bounds = [true, true]} : memref<1x16x48x32xf32>, vector<17x16xf32>
// CHECK: } else {
// CHECK:   %[[HC:.*]] = arith.maxsi %[[H]], %c0 : index
// CHECK:   %[[HCL:.*]] = arith.minsi %[[HC]], %c15 : index
// CHECK:   %[[W0:.*]] = arith.cmpi sle, %[[W]], %c47 : index
// CHECK:   %[[WV:.*]] = arith.andi %[[WLO]], %[[W0]] : i1
// CHECK:   %[[V0:.*]] = arith.andi %[[HIN]], %[[WV]] : i1
// CHECK:   %[[WC:.*]] = arith.maxsi %[[W]], %c0 : index
// CHECK:   %[[WCL:.*]] = arith.minsi %[[WC]], %c47 : index
// CHECK:   %[[ROW:.*]] = vector.load %[[X]][%c0, %[[HCL]], %[[WCL]], %[[C]]] : memref<1x16x48x32xf32>, vector<16xf32>
// CHECK:   arith.select %[[V0]], %[[ROW]], %{{.*}} : vector<16xf32>
// CHECK-COUNT-16: vector.load %[[X]]
// CHECK: scf.yield
// CHECK: vector.fma
func.func @depthwise(%x: memref<1x16x48x32xf32>, %f: memref<3x3x32xf32>, %out: memref<1x8x24x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x18x50x32xf32>
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 16, 48, 32] [1, 1, 1, 1] : memref<1x18x50x32xf32> to memref<1x16x48x32xf32, strided<[28800, 1600, 32, 1], offset: 1632>>
  linalg.copy ins(%x : memref<1x16x48x32xf32>) outs(%interior : memref<1x16x48x32xf32, strided<[28800, 1600, 32, 1], offset: 1632>>)
  %top = memref.subview %padded[0, 0, 0, 0] [1, 1, 50, 32] [1, 1, 1, 1] : memref<1x18x50x32xf32> to memref<1x1x50x32xf32, strided<[28800, 1600, 32, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x50x32xf32, strided<[28800, 1600, 32, 1]>>)
  %bottom = memref.subview %padded[0, 17, 0, 0] [1, 1, 50, 32] [1, 1, 1, 1] : memref<1x18x50x32xf32> to memref<1x1x50x32xf32, strided<[28800, 1600, 32, 1], offset: 27200>>
  linalg.fill ins(%zero : f32) outs(%bottom : memref<1x1x50x32xf32, strided<[28800, 1600, 32, 1], offset: 27200>>)
  %left = memref.subview %padded[0, 1, 0, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x50x32xf32> to memref<1x16x1x32xf32, strided<[28800, 1600, 32, 1], offset: 1600>>
  linalg.fill ins(%zero : f32) outs(%left : memref<1x16x1x32xf32, strided<[28800, 1600, 32, 1], offset: 1600>>)
  %right = memref.subview %padded[0, 1, 49, 0] [1, 16, 1, 32] [1, 1, 1, 1] : memref<1x18x50x32xf32> to memref<1x16x1x32xf32, strided<[28800, 1600, 32, 1], offset: 3168>>
  linalg.fill ins(%zero : f32) outs(%right : memref<1x16x1x32xf32, strided<[28800, 1600, 32, 1], offset: 3168>>)
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x24x32xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%padded, %f : memref<1x18x50x32xf32>, memref<3x3x32xf32>) outs(%out : memref<1x8x24x32xf32>)
  return
}

// -----

// 15 output columns of 20 channels: tiles of 8 x 16 leave partial ones.
// CHECK-LABEL: func.func @partial_tiles
// CHECK-NOT: memref.alloca
// CHECK: scf.if
// NOPEEL-LABEL: func.func @partial_tiles
// NOPEEL-SAME: memref<{{[0-9]+}}xi8> {strata_cpu.local_memory}
// NOPEEL-NOT: memref.reinterpret_cast
// NOPEEL: memref.view {{.*}} to memref<1x3x31x20xf32>
// NOPEEL-NOT: memref.reinterpret_cast
func.func @partial_tiles(%x: memref<1x16x30x20xf32>, %f: memref<3x3x20xf32>, %out: memref<1x8x15x20xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<1x18x32x20xf32>
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 16, 30, 20] [1, 1, 1, 1] : memref<1x18x32x20xf32> to memref<1x16x30x20xf32, strided<[11520, 640, 20, 1], offset: 660>>
  linalg.copy ins(%x : memref<1x16x30x20xf32>) outs(%interior : memref<1x16x30x20xf32, strided<[11520, 640, 20, 1], offset: 660>>)
  %top = memref.subview %padded[0, 0, 0, 0] [1, 1, 32, 20] [1, 1, 1, 1] : memref<1x18x32x20xf32> to memref<1x1x32x20xf32, strided<[11520, 640, 20, 1]>>
  linalg.fill ins(%zero : f32) outs(%top : memref<1x1x32x20xf32, strided<[11520, 640, 20, 1]>>)
  %bottom = memref.subview %padded[0, 17, 0, 0] [1, 1, 32, 20] [1, 1, 1, 1] : memref<1x18x32x20xf32> to memref<1x1x32x20xf32, strided<[11520, 640, 20, 1], offset: 10880>>
  linalg.fill ins(%zero : f32) outs(%bottom : memref<1x1x32x20xf32, strided<[11520, 640, 20, 1], offset: 10880>>)
  %left = memref.subview %padded[0, 1, 0, 0] [1, 16, 1, 20] [1, 1, 1, 1] : memref<1x18x32x20xf32> to memref<1x16x1x20xf32, strided<[11520, 640, 20, 1], offset: 640>>
  linalg.fill ins(%zero : f32) outs(%left : memref<1x16x1x20xf32, strided<[11520, 640, 20, 1], offset: 640>>)
  %right = memref.subview %padded[0, 1, 31, 0] [1, 16, 1, 20] [1, 1, 1, 1] : memref<1x18x32x20xf32> to memref<1x16x1x20xf32, strided<[11520, 640, 20, 1], offset: 1260>>
  linalg.fill ins(%zero : f32) outs(%right : memref<1x16x1x20xf32, strided<[11520, 640, 20, 1], offset: 1260>>)
  linalg.fill ins(%zero : f32) outs(%out : memref<1x8x15x20xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%padded, %f : memref<1x18x32x20xf32>, memref<3x3x20xf32>) outs(%out : memref<1x8x15x20xf32>)
  return
}
