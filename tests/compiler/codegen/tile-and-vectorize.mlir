// strata-cpu-tile-and-vectorize cuts linalg ops into register tiles and
// turns each tile into vector ops.
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-tile-and-vectorize))" | FileCheck %s
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-tile-and-vectorize{peel=false}))" | FileCheck %s --check-prefix=NOPEEL

// An 8 x 32 accumulator tile is read once, updated in registers across the
// whole k loop (an iter_arg), and written once.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<16x64xf32>, %[[B:.*]]: memref<64x64xf32>, %[[C:.*]]: memref<16x64xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c8 {
// CHECK:   scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c32 {
// CHECK:     %[[INIT:.*]] = vector.transfer_read %[[C]][%[[I]], %[[J]]]{{.*}} : memref<16x64xf32>, vector<8x32xf32>
// CHECK:     %[[SUM:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<8x32xf32>) {
// CHECK-DAG:   %[[AK:.*]] = vector.transfer_read %[[A]][%[[I]], %[[K]]]{{.*}} : memref<16x64xf32>, vector<8x32x1xf32>
// CHECK-DAG:   %[[BK:.*]] = vector.transfer_read %[[B]][%[[K]], %[[J]]]{{.*}} : memref<64x64xf32>, vector<8x32x1xf32>
// CHECK:       %[[PRODUCT:.*]] = arith.mulf %[[AK]], %[[BK]] : vector<8x32x1xf32>
// CHECK:       %[[FLAT:.*]] = vector.shape_cast %[[PRODUCT]]
// CHECK:       %[[NEXT:.*]] = arith.addf %[[ACC]], %[[FLAT]] : vector<8x32xf32>
// CHECK:       scf.yield %[[NEXT]]
// CHECK:     vector.transfer_write %[[SUM]], %[[C]][%[[I]], %[[J]]]
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<16x64xf32>, %b: memref<64x64xf32>, %c: memref<16x64xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<16x64xf32>, memref<64x64xf32>) outs(%c : memref<16x64xf32>)
  return
}

// 100 = 6 full tiles of 16 and a static remainder of 4: no mask at all.
// CHECK-LABEL: func.func @add
// CHECK: scf.for %[[I:.*]] = %c0 to %c96 step %c16 {
// CHECK:   vector.transfer_read %arg0[%[[I]]]{{.*}} : memref<100xf32>, vector<16xf32>
// CHECK:   arith.addf {{.*}} : vector<16xf32>
// CHECK: }
// CHECK: vector.transfer_read %arg0[%c96]{{.*}} : memref<100xf32>, vector<4xf32>
// CHECK: arith.addf {{.*}} : vector<4xf32>
// CHECK-NOT: create_mask
func.func @add(%a: memref<100xf32>, %b: memref<100xf32>, %c: memref<100xf32>) {
  linalg.add {strata_cpu.tile_sizes = {vector = array<i64: 16>, workgroup = array<i64: 0>}}
      ins(%a, %b : memref<100xf32>, memref<100xf32>) outs(%c : memref<100xf32>)
  return
}

// A dynamic size: full tiles without a mask, then one masked partial tile.
// Without peeling every tile is masked.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = memref.dim %arg0
// CHECK: %[[FULL:.*]] = affine.apply #{{.*}}()[%[[N]]]
// CHECK: scf.for %[[I:.*]] = %c0 to %[[FULL]] step %c16 {
// CHECK:   %[[V:.*]] = vector.transfer_read %arg0[%[[I]]], %{{[^,]*}} {in_bounds = [true]}
// CHECK:   vector.transfer_write %[[V]], %arg1[%[[I]]] {in_bounds = [true]}
// CHECK: scf.for %[[R:.*]] = %[[FULL]] to %[[N]] step %c16 {
// CHECK:   %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<16xi1>
// CHECK:   vector.transfer_read %arg0[%[[R]]], %{{.*}}, %[[MASK]]
// NOPEEL-LABEL: func.func @dynamic
// NOPEEL: scf.for
// NOPEEL:   vector.create_mask
// NOPEEL-NOT: scf.for
func.func @dynamic(%a: memref<?xf32>, %b: memref<?xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 16>, workgroup = array<i64: 0>}}
      ins(%a : memref<?xf32>) outs(%b : memref<?xf32>)
  return
}

// Ops without tile sizes are left alone.
// CHECK-LABEL: func.func @untiled
// NOPEEL-LABEL: func.func @untiled
// CHECK-NEXT: linalg.copy
func.func @untiled(%a: memref<64xf32>, %b: memref<64xf32>) {
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  return
}

// A large matmul is first blocked for the caches: blocks of 256 columns
// (outermost) and 256 steps of k, each reused by all the rows of the
// workgroup from L2, then the 8 x 32 register tiles inside a block.
// CHECK-LABEL: func.func @blocked
// CHECK: scf.for %[[N0:.*]] = %c0 to %c512 step %c256 {
// CHECK:   scf.for %[[K0:.*]] = %c0 to %c1024 step %c256 {
// CHECK:     scf.for %{{.*}} = %c0 to %c64 step %c8 {
// CHECK:       scf.for %{{.*}} = %c0 to %c256 step %c32 {
// CHECK:         vector.transfer_read {{.*}} vector<8x32xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args
// CHECK:           arith.addf {{.*}} : vector<8x32xf32>
func.func @blocked(%a: memref<64x1024xf32>, %b: memref<1024x512xf32>, %c: memref<64x512xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<64x1024xf32>, memref<1024x512xf32>) outs(%c : memref<64x512xf32>)
  return
}
