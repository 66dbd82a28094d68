// strata-cpu-tile-and-vectorize cuts linalg ops into register tiles and
// turns each tile into vector ops.
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-tile-and-vectorize{reduction-unroll=1}))" | FileCheck %s
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-tile-and-vectorize{peel=false reduction-unroll=1}))" | FileCheck %s --check-prefix=NOPEEL

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
// workgroup from L2. Each block of the right-hand side is copied into the
// runtime's local memory (a new last argument) in strips of 32 columns, so
// that a register tile reads one contiguous row of its strip per step of k;
// then the 8 x 32 register tiles inside a block, over the strips. Each step
// of k prefetches both cache lines of the row 1 KiB further on in the block,
// whose bytes have 1 KiB to spare after the strips (256 KiB + 1 KiB).
// CHECK-LABEL: func.func @blocked
// CHECK-SAME: (%[[A:.*]]: memref<64x1024xf32>, %[[B:.*]]: memref<1024x512xf32>, %[[C:.*]]: memref<64x512xf32>, %[[LOCAL:.*]]: memref<263168xi8> {strata_cpu.local_memory})
// CHECK-NOT: strata_cpu.ascending_workgroups
// CHECK: %[[BYTES:.*]] = memref.view %[[LOCAL]][%{{.*}}][] : memref<263168xi8> to memref<263168xi8>
// CHECK: %[[PACKED:.*]] = memref.view %[[BYTES]][%{{.*}}][] : memref<263168xi8> to memref<8x256x32xf32>
// CHECK: scf.for %[[N0:.*]] = %c0 to %c512 step %c256 {
// CHECK:   scf.for %[[K0:.*]] = %c0 to %c1024 step %c256 {
// CHECK:     scf.for %[[K:.*]] = %c0 to %c256 step %c1 {
// CHECK:       scf.for %[[STRIP:.*]] = %c0 to %c8 step %c1 {
// CHECK:         %[[PIECE:.*]] = vector.transfer_read %[[B]]{{.*}} vector<32xf32>
// CHECK:         vector.transfer_write %[[PIECE]], %[[PACKED]][%[[STRIP]], %[[K]], %c0]
// CHECK:     scf.for %[[I:.*]] = %c0 to %c64 step %c8 {
// CHECK:       scf.for %[[S:.*]] = %c0 to %c8 step %c1 {
// CHECK:         vector.transfer_read %[[C]][%[[I]], {{.*}} vector<8x32xf32>
// CHECK:         scf.for %[[KK:.*]] = %c0 to %c256 step %c1 iter_args
// CHECK:           %[[ROW:.*]] = arith.addi %{{.*}}, %[[KK]] : index
// CHECK:           %[[AT:.*]] = arith.muli %[[ROW]], %c128 : index
// CHECK:           %[[AHEAD:.*]] = arith.addi %[[AT]], %c1024 : index
// CHECK:           memref.prefetch %[[BYTES]][%[[AHEAD]]], read, locality<3>, data : memref<263168xi8>
// CHECK:           %[[SECOND:.*]] = arith.addi %[[AT]], %c1088 : index
// CHECK:           memref.prefetch %[[BYTES]][%[[SECOND]]], read, locality<3>, data : memref<263168xi8>
// CHECK:           vector.transfer_read %[[PACKED]][%[[S]], %[[KK]], %c0]
// CHECK:           arith.addf {{.*}} : vector<8x1x32xf32>
// CHECK:         vector.transfer_write {{.*}}, %[[C]][%[[I]], {{.*}} : vector<8x32xf32>
func.func @blocked(%a: memref<64x1024xf32>, %b: memref<1024x512xf32>, %c: memref<64x512xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<64x1024xf32>, memref<1024x512xf32>) outs(%c : memref<64x512xf32>)
  return
}

// A workgroup's share of rows that its tile does not divide, min(128, rows
// left), is dynamic but bounded: blocked and packed like a static one.
// CHECK-LABEL: func.func @blocked_bounded_rows
// CHECK-SAME: %{{.*}}: memref<263168xi8> {strata_cpu.local_memory}
// CHECK: memref.view
// CHECK: scf.for %{{.*}} = %c0 to %c512 step %c256 {
// CHECK:   scf.for %{{.*}} = %c0 to %c1024 step %c256 {
func.func @blocked_bounded_rows(%a: memref<1000x1024xf32>, %b: memref<1024x512xf32>, %c: memref<1000x512xf32>, %i: index) {
  %rows = affine.min affine_map<(d0) -> (128, -d0 + 1000)>(%i)
  %av = memref.subview %a[%i, 0] [%rows, 1024] [1, 1] : memref<1000x1024xf32> to memref<?x1024xf32, strided<[1024, 1], offset: ?>>
  %cv = memref.subview %c[%i, 0] [%rows, 512] [1, 1] : memref<1000x512xf32> to memref<?x512xf32, strided<[512, 1], offset: ?>>
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%av, %b : memref<?x1024xf32, strided<[1024, 1], offset: ?>>, memref<1024x512xf32>)
      outs(%cv : memref<?x512xf32, strided<[512, 1], offset: ?>>)
  return
}

// A workgroup of 256 rows or more (SelectTileSizes' two largest) takes
// blocks 512 deep.
// CHECK-LABEL: func.func @deep_blocks
// CHECK-SAME: memref<525312xi8> {strata_cpu.local_memory}
// CHECK: scf.for %{{.*}} = %c0 to %c512 step %c256 {
// CHECK:   scf.for %{{.*}} = %c0 to %c1024 step %c512 {
func.func @deep_blocks(%a: memref<256x1024xf32>, %b: memref<1024x512xf32>, %c: memref<256x512xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<256x1024xf32>, memref<1024x512xf32>) outs(%c : memref<256x512xf32>)
  return
}

// AVX2's register tiles of 16 columns take blocks of 8 of them: 128 columns
// (a 256-column block 512 deep filled all of a Zen 3 core's L2), and 256
// deep however many rows (a strip 512 deep filled all of its L1).
// CHECK-LABEL: func.func @narrow_tile_blocks
// CHECK-SAME: memref<132096xi8> {strata_cpu.local_memory}
// CHECK: memref.view %{{.*}} : memref<132096xi8> to memref<8x256x16xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c512 step %c128 {
// CHECK:   scf.for %{{.*}} = %c0 to %c1024 step %c256 {
func.func @narrow_tile_blocks(%a: memref<256x1024xf32>, %b: memref<1024x512xf32>, %c: memref<256x512xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<256x1024xf32>, memref<1024x512xf32>) outs(%c : memref<256x512xf32>)
  return
}

// A workgroup of 256 columns (a column tile of SGEMM 1024) blocked for its
// depth is blocked along its columns too when its blocks are narrower.
// CHECK-LABEL: func.func @narrow_blocks_of_a_column_tile
// CHECK: scf.for %{{.*}} = %c0 to %c256 step %c128 {
// CHECK:   scf.for %{{.*}} = %c0 to %c1024 step %c256 {
func.func @narrow_blocks_of_a_column_tile(%a: memref<1024x1024xf32>, %b: memref<1024x256xf32>, %c: memref<1024x256xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<1024x1024xf32>, memref<1024x256xf32>) outs(%c : memref<1024x256xf32>)
  return
}

// Rows with no bound (a dynamic batch) are not blocked.
// CHECK-LABEL: func.func @unbounded_rows
// CHECK-NOT: memref.view
// CHECK-NOT: step %c256
// CHECK: return
func.func @unbounded_rows(%a: memref<?x1024xf32>, %b: memref<1024x512xf32>, %c: memref<?x512xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<?x1024xf32>, memref<1024x512xf32>) outs(%c : memref<?x512xf32>)
  return
}

// With fewer rows than 64 the copy would cost more than it saves: the
// blocks are read in place.
// CHECK-LABEL: func.func @blocked_few_rows
// CHECK-SAME: (%{{.*}}: memref<32x1024xf32>, %[[B:.*]]: memref<1024x512xf32>, %{{.*}}: memref<32x512xf32>)
// CHECK-NOT: memref.view
// CHECK: scf.for %{{.*}} = %c0 to %c512 step %c256 {
// CHECK:   scf.for %{{.*}} = %c0 to %c1024 step %c256 {
// CHECK:     scf.for %{{.*}} = %c0 to %c32 step %c8 {
// CHECK:       scf.for %{{.*}} = %c0 to %c256 step %c32 {
// CHECK:         scf.for %{{.*}} = %c0 to %c256 step %c1 iter_args
// CHECK:           vector.transfer_read %[[B]]
func.func @blocked_few_rows(%a: memref<32x1024xf32>, %b: memref<1024x512xf32>, %c: memref<32x512xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<32x1024xf32>, memref<1024x512xf32>) outs(%c : memref<32x512xf32>)
  return
}

// A helper (private: not a kernel, so it has no local memory) reads its
// blocks in place.
// CHECK-LABEL: func.func private @blocked_helper
// CHECK-NOT: memref.view
// CHECK: return
func.func private @blocked_helper(%a: memref<64x1024xf32>, %b: memref<1024x512xf32>, %c: memref<64x512xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<64x1024xf32>, memref<1024x512xf32>) outs(%c : memref<64x512xf32>)
  return
}

// A matmul from a zero fill takes the fill into its tiles: each 8 x 32
// accumulator starts as a zero vector in registers; the output is neither
// filled beforehand nor read back, full tiles and partial ones alike.
// CHECK-LABEL: func.func @matmul_from_zero
// CHECK-SAME: (%[[A:.*]]: memref<20x64xf32>, %[[B:.*]]: memref<64x40xf32>, %[[C:.*]]: memref<20x40xf32>)
// CHECK-DAG: %[[Z4X8:.*]] = arith.constant dense<0.000000e+00> : vector<4x8xf32>
// CHECK-DAG: %[[Z8X32:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK-NOT: linalg.fill
// CHECK-NOT: vector.transfer_read %[[C]]
// CHECK: scf.for %[[I:.*]] = %c0 to %c16 step %c8 {
// CHECK:   %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[Z8X32]]) -> (vector<8x32xf32>) {
// CHECK:   vector.transfer_write %[[SUM]], %[[C]][%[[I]], %c0]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[Z4X8]]) -> (vector<4x8xf32>) {
// CHECK-NOT: vector.transfer_read %[[C]]
// CHECK: return
func.func @matmul_from_zero(%a: memref<20x64xf32>, %b: memref<64x40xf32>, %c: memref<20x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 8, 32>, workgroup = array<i64: 0, 0>}}
      ins(%zero : f32) outs(%c : memref<20x40xf32>)
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<20x64xf32>, memref<64x40xf32>) outs(%c : memref<20x40xf32>)
  return
}

// Blocked for the caches along the columns only, each tile still reduces
// in one go: the fill goes into the tiles.
// CHECK-LABEL: func.func @columns_blocked_from_zero
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c512 step %c256 {
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK-NOT: vector.transfer_read %arg2
func.func @columns_blocked_from_zero(%a: memref<64x64xf32>, %b: memref<64x512xf32>, %c: memref<64x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 8, 32>, workgroup = array<i64: 0, 0>}}
      ins(%zero : f32) outs(%c : memref<64x512xf32>)
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<64x64xf32>, memref<64x512xf32>) outs(%c : memref<64x512xf32>)
  return
}

// With the reduction blocked for the caches, a tile is reduced in several
// blocks: the first (peeled out of the loop over them) takes the fill in,
// its tiles starting from zero, and each later one starts from what the
// last one stored. No pass of the fill over the output is left.
// CHECK-LABEL: func.func @depth_blocked_from_zero
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK-NOT: vector.transfer_write %[[ZERO]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK: vector.transfer_write %{{.*}}, %arg2
// CHECK: scf.for %{{.*}} = %c256 to %c1024 step %c256 {
// CHECK:   %[[INIT:.*]] = vector.transfer_read %arg2
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]])
func.func @depth_blocked_from_zero(%a: memref<64x1024xf32>, %b: memref<1024x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 8, 32>, workgroup = array<i64: 0, 0>}}
      ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<64x1024xf32>, memref<1024x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// A reduction that also reads its output as an input would read other
// tiles' unfilled values: its fill stays before it.
// CHECK-LABEL: func.func @reads_its_output
// CHECK: scf.for
// CHECK:   vector.transfer_write %{{.*}}, %arg1
// CHECK: scf.for
// CHECK:   vector.transfer_read %arg1
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @reads_its_output(%c: memref<16x64xf32>, %r: memref<16xf32>) {
  %zero = arith.constant 1.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 8>, workgroup = array<i64: 0>}}
      ins(%zero : f32) outs(%r : memref<16xf32>)
  linalg.generic {indexing_maps = [#rows, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c, %r : memref<16x64xf32>, memref<16xf32>) outs(%r : memref<16xf32>)
      attrs = {strata_cpu.tile_sizes = {vector = array<i64: 8, 16>, workgroup = array<i64: 0, 0>}} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// The elementwise op after a reduction (a bias and a ReLU here) is taken
// into its tiles too: each accumulator gets it in registers right after its
// reduction and is stored once; the output is never read back.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-SAME: (%{{.*}}: memref<20x64xf32>, %{{.*}}: memref<64x40xf32>, %[[BIAS:.*]]: memref<40xf32>, %[[C:.*]]: memref<20x40xf32>)
// CHECK-NOT: vector.transfer_read %[[C]]
// CHECK: scf.for %[[I:.*]] = %c0 to %c16 step %c8 {
// CHECK:   %[[SUM:.*]] = scf.for {{.*}} -> (vector<8x32xf32>) {
// CHECK:   %[[BIASED:.*]] = arith.addf %[[SUM]], %{{.*}} : vector<8x32xf32>
// CHECK:   %[[RELU:.*]] = arith.maximumf %[[BIASED]], %{{.*}} : vector<8x32xf32>
// CHECK:   vector.transfer_write %[[RELU]], %[[C]][%[[I]], %c0]
// CHECK-NOT: vector.transfer_write %[[SUM]]
// CHECK-NOT: vector.transfer_read %[[C]]
// CHECK: return
#bias_rows = affine_map<(d0, d1) -> (d0, d1)>
#bias_cols = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias_relu(%a: memref<20x64xf32>, %b: memref<64x40xf32>, %bias: memref<40xf32>, %c: memref<20x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 8, 32>, workgroup = array<i64: 0, 0>}}
      ins(%zero : f32) outs(%c : memref<20x40xf32>)
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<20x64xf32>, memref<64x40xf32>) outs(%c : memref<20x40xf32>)
  linalg.generic {indexing_maps = [#bias_rows, #bias_cols, #bias_rows], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<20x40xf32>, memref<40xf32>) outs(%c : memref<20x40xf32>)
      attrs = {strata_cpu.tile_sizes = {vector = array<i64: 8, 32>, workgroup = array<i64: 0, 0>}} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// 20 rows in tiles of 6 would leave a last tile of 2, whose 4 accumulators
// cannot hide the FMA latency: the last 8 rows are two tiles of 4 instead.
// Both parts take the fill and the consumer in.
// CHECK-LABEL: func.func @matmul_even_last_rows
// CHECK-SAME: (%{{.*}}: memref<20x64xf32>, %{{.*}}: memref<64x32xf32>, %{{.*}}: memref<32xf32>, %[[C:.*]]: memref<20x32xf32>)
// CHECK-DAG: %[[Z4:.*]] = arith.constant dense<0.000000e+00> : vector<4x16xf32>
// CHECK-DAG: %[[Z6:.*]] = arith.constant dense<0.000000e+00> : vector<6x16xf32>
// CHECK-NOT: linalg.fill
// CHECK-NOT: vector.transfer_read %[[C]]
// CHECK: scf.for %[[I:.*]] = %c0 to %c12 step %c6 {
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z6]]) -> (vector<6x16xf32>) {
// CHECK:   arith.maximumf {{.*}} : vector<6x16xf32>
// CHECK:   vector.transfer_write %{{.*}}, %[[C]][%[[I]], %{{.*}}] {{.*}} : vector<6x16xf32>
// CHECK: scf.for %[[J:.*]] = %c0 to %c8 step %c4 {
// CHECK:   %[[ROW:.*]] = affine.apply #{{.*}}()[%[[J]]]
// CHECK:   scf.for {{.*}} iter_args(%{{.*}} = %[[Z4]]) -> (vector<4x16xf32>) {
// CHECK:   arith.maximumf {{.*}} : vector<4x16xf32>
// CHECK:   vector.transfer_write %{{.*}}, %[[C]][%[[ROW]], %{{.*}}] {{.*}} : vector<4x16xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: vector.transfer_read %[[C]]
// CHECK: return
func.func @matmul_even_last_rows(%a: memref<20x64xf32>, %b: memref<64x32xf32>, %bias: memref<32xf32>, %c: memref<20x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 0, 0>}}
      ins(%zero : f32) outs(%c : memref<20x32xf32>)
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<20x64xf32>, memref<64x32xf32>) outs(%c : memref<20x32xf32>)
  linalg.generic {indexing_maps = [#bias_rows, #bias_cols, #bias_rows], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<20x32xf32>, memref<32xf32>) outs(%c : memref<20x32xf32>)
      attrs = {strata_cpu.tile_sizes = {vector = array<i64: 1, 8>, workgroup = array<i64: 0, 0>}} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// A last tile of half the tile's rows or more (3 of 6) stays as it is.
// CHECK-LABEL: func.func @matmul_half_last_tile
// CHECK: scf.for %{{.*}} = %c0 to %c18 step %c6 {
// CHECK:   -> (vector<6x16xf32>)
// CHECK: -> (vector<3x16xf32>)
// CHECK: return
func.func @matmul_half_last_tile(%a: memref<21x64xf32>, %b: memref<64x16xf32>, %c: memref<21x16xf32>) {
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 6, 16, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<21x64xf32>, memref<64x16xf32>) outs(%c : memref<21x16xf32>)
  return
}

// With the reduction blocked for the caches, the consumer waits for the
// last block: it stays a pass of its own after the reduction.
// CHECK-LABEL: func.func @depth_blocked_then_relu
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c256 {
// CHECK: }
// CHECK: scf.for
// CHECK:   vector.transfer_read %arg2
// CHECK:   arith.maximumf
func.func @depth_blocked_then_relu(%a: memref<64x1024xf32>, %b: memref<1024x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.matmul {strata_cpu.tile_sizes = {vector = array<i64: 8, 32, 1>, workgroup = array<i64: 0, 0, 0>}}
      ins(%a, %b : memref<64x1024xf32>, memref<1024x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#bias_rows, #bias_rows], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%c : memref<64x64xf32>)
      attrs = {strata_cpu.tile_sizes = {vector = array<i64: 8, 32>, workgroup = array<i64: 0, 0>}} {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// A matmul over packed weights (m, n1, n0, k: A(m, k) * Bp(n1, k, n0)) with
// few rows: each step of k also prefetches the same row of the next strip,
// clamped to the last one, for the next workgroup, so the kernel's
// workgroups should run in ascending order.
// CHECK-LABEL: func.func @packed_few_rows
// CHECK-SAME: attributes {strata_cpu.ascending_workgroups}
// CHECK-DAG: %[[LAST:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[N1:[a-z0-9]+]] = %{{.*}} to %{{.*}} step %[[ONE]]
// CHECK: %[[PLUS:.*]] = arith.addi %[[N1]], %[[ONE]] : index
// CHECK: %[[NEXT:.*]] = arith.minui %[[PLUS]], %[[LAST]] : index
// CHECK: scf.for %[[K:[a-z0-9]+]] =
// CHECK: memref.prefetch %arg1[%[[NEXT]], %[[K]], %{{.*}}], read, locality<3>, data : memref<4x64x16xf32>
// CHECK: vector.transfer_read %arg1[%[[N1]], %[[K]], %{{.*}}]
#packed_a = affine_map<(m, n1, n0, k) -> (m, k)>
#packed_b = affine_map<(m, n1, n0, k) -> (n1, k, n0)>
#packed_c = affine_map<(m, n1, n0, k) -> (m, n1, n0)>
func.func @packed_few_rows(%a: memref<12x64xf32>, %b: memref<4x64x16xf32>, %c: memref<12x4x16xf32>) {
  linalg.generic {indexing_maps = [#packed_a, #packed_b, #packed_c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                  strata_cpu.tile_sizes = {vector = array<i64: 6, 1, 16, 1>, workgroup = array<i64: 0, 0, 0, 0>}}
      ins(%a, %b : memref<12x64xf32>, memref<4x64x16xf32>) outs(%c : memref<12x4x16xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Strips over 16 KiB (384 x 16 f32, 24 KiB) do not stay in L1 beside the
// next one; where several row tiles read each (16 rows, tiles of 8), the
// next strip is prefetched into L2 only (locality 2, prefetcht1).
// CHECK-LABEL: func.func @packed_long_strips
// CHECK-SAME: attributes {strata_cpu.ascending_workgroups}
// CHECK: memref.prefetch %arg1[%{{.*}}, %{{.*}}, %{{.*}}], read, locality<2>, data : memref<4x384x16xf32>
// CHECK: vector.transfer_read %arg1[
func.func @packed_long_strips(%a: memref<16x384xf32>, %b: memref<4x384x16xf32>, %c: memref<16x4x16xf32>) {
  linalg.generic {indexing_maps = [#packed_a, #packed_b, #packed_c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                  strata_cpu.tile_sizes = {vector = array<i64: 8, 1, 16, 1>, workgroup = array<i64: 0, 0, 0, 0>}}
      ins(%a, %b : memref<16x384xf32>, memref<4x384x16xf32>) outs(%c : memref<16x4x16xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// The same where the tiles do not divide the rows (16 in tiles of 6, the
// last of 4): a tile has at most 6 rows, fewer than the 16 that read the
// strip.
// CHECK-LABEL: func.func @packed_long_strips_partial_tile
// CHECK-SAME: attributes {strata_cpu.ascending_workgroups}
// CHECK: memref.prefetch %arg1[%{{.*}}, %{{.*}}, %{{.*}}], read, locality<2>, data : memref<4x384x16xf32>
// CHECK: memref.prefetch %arg1[%{{.*}}, %{{.*}}, %{{.*}}], read, locality<2>, data : memref<4x384x16xf32>
func.func @packed_long_strips_partial_tile(%a: memref<16x384xf32>, %b: memref<4x384x16xf32>, %c: memref<16x4x16xf32>) {
  linalg.generic {indexing_maps = [#packed_a, #packed_b, #packed_c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                  strata_cpu.tile_sizes = {vector = array<i64: 6, 1, 16, 1>, workgroup = array<i64: 0, 0, 0, 0>}}
      ins(%a, %b : memref<16x384xf32>, memref<4x384x16xf32>) outs(%c : memref<16x4x16xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// One row tile reads each long strip once, in order: no prefetch.
// CHECK-LABEL: func.func @packed_long_strips_one_tile
// CHECK-NOT: strata_cpu.ascending_workgroups
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @packed_long_strips_one_tile(%a: memref<8x384xf32>, %b: memref<4x384x16xf32>, %c: memref<8x4x16xf32>) {
  linalg.generic {indexing_maps = [#packed_a, #packed_b, #packed_c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                  strata_cpu.tile_sizes = {vector = array<i64: 8, 1, 16, 1>, workgroup = array<i64: 0, 0, 0, 0>}}
      ins(%a, %b : memref<8x384xf32>, memref<4x384x16xf32>) outs(%c : memref<8x4x16xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// With many rows the strip serves them all from L1, and the next one
// would take half of it: no prefetch.
// CHECK-LABEL: func.func @packed_many_rows
// CHECK-NOT: strata_cpu.ascending_workgroups
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @packed_many_rows(%a: memref<64x64xf32>, %b: memref<4x64x16xf32>, %c: memref<64x4x16xf32>) {
  linalg.generic {indexing_maps = [#packed_a, #packed_b, #packed_c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"],
                  strata_cpu.tile_sizes = {vector = array<i64: 6, 1, 16, 1>, workgroup = array<i64: 0, 0, 0, 0>}}
      ins(%a, %b : memref<64x64xf32>, memref<4x64x16xf32>) outs(%c : memref<64x4x16xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A tile of 1 x 1 x 16 that reads its inputs at (0, 2 i + 1, 2 j + 1, c) and
// (0, 2 i, 2 j, c), a Winograd input transform's block values: each tile
// reads one 16-lane vector of each at its position and writes one.
// CHECK-LABEL: func.func @point_reads
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[J:.*]] =
// CHECK-DAG: vector.transfer_read %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<1x10x66x16xf32>, vector<16xf32>
// CHECK-DAG: vector.transfer_read %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} {in_bounds = [true]} : memref<1x10x66x16xf32>, vector<16xf32>
// CHECK: arith.subf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, memref<4x32x16xf32>
func.func @point_reads(%a: memref<1x10x66x16xf32>, %o: memref<4x32x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, c) -> (0, i * 2 + 1, j * 2 + 1, c)>,
                                   affine_map<(i, j, c) -> (0, i * 2, j * 2, c)>,
                                   affine_map<(i, j, c) -> (i, j, c)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %a : memref<1x10x66x16xf32>, memref<1x10x66x16xf32>) outs(%o : memref<4x32x16xf32>)
      attrs = {strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 16>, workgroup = array<i64: 0, 0, 0>}} {
  ^bb0(%x: f32, %w: f32, %y: f32):
    %s = arith.subf %x, %w : f32
    linalg.yield %s : f32
  }
  return
}

// Such a tile of a permutation copy, 16 pixels x 3 channels: one read of 3
// rows of 16 (contiguous each), a transpose in registers (one shuffle of
// the 48 lanes) and one contiguous write of the 48 interleaved values, where
// the permuted read and the tile's write went element by element.
// CHECK-LABEL: func.func @channels_last_image
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : memref<1x3x32x32xf32>, vector<3x1x16xf32>
// CHECK: vector.shuffle {{.*}} [0, 16, 32, 1, 17, 33, {{.*}}, 15, 31, 47] : vector<48xf32>, vector<48xf32>
// CHECK: vector.transfer_write {{.*}} : vector<48xf32>, memref<1x1x48xf32
// CHECK-NOT: vector.transfer_write
func.func @channels_last_image(%a: memref<1x3x32x32xf32>, %o: memref<1x32x32x3xf32>) {
  linalg.transpose ins(%a : memref<1x3x32x32xf32>) outs(%o : memref<1x32x32x3xf32>) permutation = [0, 2, 3, 1]
      {strata_cpu.tile_sizes = {vector = array<i64: 1, 1, 16, 3>, workgroup = array<i64: 0, 0, 0, 0>}}
  return
}
