// strata-cpu-distribute-to-workgroups tiles each op along its workgroup tile
// and hands tile t to workgroup t mod count.
// RUN: strata-opt %s --strata-cpu-distribute-to-workgroups --split-input-file --verify-diagnostics | FileCheck %s

// Both ops are split along the rows of C, 16 at a time: workgroup `id`
// starts at row 16 * id and strides 16 * count rows. Their loops run over
// the same tiles, so they are one loop: each 16 rows are filled, then
// multiplied into.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: %[[A:[^:]*]]: memref<64x64xf32>, %[[B:[^:]*]]: memref<64x64xf32>, %[[C:[^:]*]]: memref<64x64xf32>,
// CHECK-SAME: %[[ID:[^:]*]]: index {strata_cpu.workgroup_id}, %[[COUNT:[^:]*]]: index {strata_cpu.workgroup_count}
// CHECK-SAME: attributes {strata_cpu.distribution = {extent = 64 : i64, tile = 16 : i64}}
// CHECK: %[[START:.*]] = arith.muli %[[ID]], %[[C16:.*]] : index
// CHECK: %[[LB:.*]] = arith.addi %{{.*}}, %[[START]] : index
// CHECK: %[[STEP:.*]] = arith.muli %[[COUNT]], %[[C16]] : index
// CHECK: scf.for %[[ROW:.*]] = %[[LB]] to %{{.*}} step %[[STEP]] {
// CHECK:   %[[CROWS:.*]] = memref.subview %[[C]][%[[ROW]], 0] [16, 64] [1, 1]
// CHECK:   linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 16>, workgroup = array<i64: 0, 0>}} {{.*}} outs(%[[CROWS]]
// CHECK-NOT: scf.for
// CHECK-DAG: %[[AROWS:.*]] = memref.subview %[[A]][%[[ROW]], 0] [16, 64] [1, 1]
// CHECK-DAG: %[[CROWS2:.*]] = memref.subview %[[C]][%[[ROW]], 0] [16, 64] [1, 1]
// CHECK:   linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}} ins(%[[AROWS]], %{{.*}} : {{.*}}) outs(%[[CROWS2]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @matmul(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 16>, workgroup = array<i64: 16, 0>}}
      ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 16, 0, 0>}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// Tiles of rows and columns form a grid, here 2 x 4 tiles of 32 x 16,
// handed out rows outer: workgroup `id` takes tiles id, id + count, ...,
// tile t covering rows 32 * (t / 4) and columns 16 * (t mod 4). The count
// the host dispatches is the number of tiles.
// CHECK-LABEL: func.func @grid
// CHECK-SAME: %[[A:[^:]*]]: memref<64x128xf32>, %[[B:[^:]*]]: memref<128x64xf32>, %[[C:[^:]*]]: memref<64x64xf32>,
// CHECK-SAME: %[[ID:[^:]*]]: index {strata_cpu.workgroup_id}, %[[COUNT:[^:]*]]: index {strata_cpu.workgroup_count}
// CHECK-SAME: attributes {strata_cpu.distribution = {columns = 16 : i64, tile = 32 : i64, tiles = 8 : i64}}
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[C8]] step %{{.*}} {
// CHECK:   %[[ROWTILE:.*]] = arith.divui %[[T]], %[[C4:.*]] : index
// CHECK:   %[[ROWOFF:.*]] = arith.muli %[[ROWTILE]], %{{.*}} : index
// CHECK:   %[[ROW:.*]] = arith.addi %{{.*}}, %[[ROWOFF]] : index
// CHECK:   %[[COLTILE:.*]] = arith.remui %[[T]], %[[C4]] : index
// CHECK:   %[[COLOFF:.*]] = arith.muli %[[COLTILE]], %{{.*}} : index
// CHECK:   %[[COL:.*]] = arith.addi %{{.*}}, %[[COLOFF]] : index
// CHECK:   memref.subview %[[C]][%[[ROW]], %[[COL]]] [32, 16] [1, 1]
// CHECK:   linalg.fill
// CHECK-NOT: scf.for
// CHECK-DAG: %[[AROWS:.*]] = memref.subview %[[A]][%{{.*}}, 0] [32, 128] [1, 1]
// CHECK-DAG: %[[BCOLS:.*]] = memref.subview %[[B]][0, %{{.*}}] [128, 16] [1, 1]
// CHECK:   linalg.matmul {{.*}} ins(%[[AROWS]], %[[BCOLS]] :
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @grid(%a: memref<64x128xf32>, %b: memref<128x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 16>, workgroup = array<i64: 32, 16>}}
      ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 32, 16, 0>}}
      ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @grid_partial_tiles(%a: memref<64x128xf32>, %b: memref<128x60xf32>, %c: memref<64x60xf32>) {
  // expected-error @+1 {{'linalg.matmul' op cannot take workgroup tiles of 32 x 16: its extents along loops 0 and 1 must be static whole numbers of tiles}}
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 32, 16, 0>}}
      ins(%a, %b : memref<64x128xf32>, memref<128x60xf32>) outs(%c : memref<64x60xf32>)
  return
}

// -----

func.func @grid_unlike(%a: memref<64x128xf32>, %b: memref<128x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 16>, workgroup = array<i64: 32, 16>}}
      ins(%zero : f32) outs(%c : memref<64x64xf32>)
  // expected-error @+1 {{'linalg.matmul' op has workgroup tiles unlike the first op's: every op of a kernel tiled in two dimensions needs the same 2 x 4 grid of 32 x 16 tiles}}
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 16, 1>, workgroup = array<i64: 32, 32, 0>}}
      ins(%a, %b : memref<64x128xf32>, memref<128x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A dynamic extent is recorded as the kernel argument dimension it comes
// from; the last tile is partial.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: attributes {strata_cpu.distribution = {extent_arg = 0 : i64, extent_dim = 0 : i64, tile = 64 : i64}}
// CHECK: %[[N:.*]] = memref.dim %arg0, %{{.*}} : memref<?x4xf32>
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK:   %[[ROWS:.*]] = affine.min #{{.*}}(%[[ROW]])[%[[N]]]
// CHECK:   memref.subview %arg1[%[[ROW]], 0] [%[[ROWS]], 4] [1, 1]
func.func @dynamic(%a: memref<?x4xf32>, %b: memref<?x4xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 1, 4>, workgroup = array<i64: 64, 0>}}
      ins(%a : memref<?x4xf32>) outs(%b : memref<?x4xf32>)
  return
}

// -----

// Without workgroup tiles a kernel is left alone: it runs on one workgroup.
// CHECK-LABEL: func.func @whole(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) {
// CHECK-NEXT: linalg.copy
func.func @whole(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 4>, workgroup = array<i64: 0>}}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

func.func @different_tiles(%a: memref<64xf32>, %b: memref<64xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 4>, workgroup = array<i64: 16>}}
      ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  // expected-error @+1 {{'linalg.copy' op has workgroup tile 32, expected 16 like the other ops of the kernel}}
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 4>, workgroup = array<i64: 32>}}
      ins(%b : memref<64xf32>) outs(%a : memref<64xf32>)
  return
}

// -----

func.func @partly_split(%a: memref<64xf32>, %b: memref<64xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 4>, workgroup = array<i64: 16>}}
      ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  // expected-error @+1 {{'linalg.copy' op has no workgroup tile while other ops of the kernel do}}
  linalg.copy ins(%b : memref<64xf32>) outs(%a : memref<64xf32>)
  return
}

// -----

// Rows of %t written by one workgroup would be read by others.
func.func @across_rows(%a: memref<8x8xf32>, %t: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 2, 0>}}
      ins(%a : memref<8x8xf32>) outs(%t : memref<8x8xf32>)
  // expected-error @+1 {{'linalg.generic' op cannot be split across workgroups: operand 0 is written in the kernel and not indexed by the distributed loop in dimension 0}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"],
                  strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 2, 0>}}
      ins(%t : memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

func.func @malformed(%a: memref<8xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'linalg.copy' op expects 1 tile sizes (one per loop), got 2}}
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 2, 0>}}
      ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// Ops over different extents keep a loop each (64 rows, then 32).
// CHECK-LABEL: func.func @two_extents
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64 step
// CHECK:   linalg.copy
// CHECK: }
// CHECK: scf.for %{{.*}} = %{{.*}} to %c32 step
// CHECK:   linalg.copy
func.func @two_extents(%a: memref<64x4xf32>, %b: memref<64x4xf32>, %c: memref<32x4xf32>, %d: memref<32x4xf32>) {
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 1, 4>, workgroup = array<i64: 16, 0>}}
      ins(%a : memref<64x4xf32>) outs(%b : memref<64x4xf32>)
  linalg.copy {strata_cpu.tile_sizes = {vector = array<i64: 1, 4>, workgroup = array<i64: 16, 0>}}
      ins(%c : memref<32x4xf32>) outs(%d : memref<32x4xf32>)
  return
}
