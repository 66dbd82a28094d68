// strata-cpu-tree-reductions: float reductions of the innermost vector
// dimension (add, and min/max of either NaN rule) become halving trees of
// vector ops, where upstream's lowering chains one scalar step per lane.
// RUN: strata-opt %s --pass-pipeline="builtin.module(func.func(strata-cpu-tree-reductions))" | FileCheck %s

// A row maximum of a softmax tile: 16 lanes in 4 steps over the halves
// (8, 4, 2, 1 lanes), then the accumulator.
// CHECK-LABEL: func.func @row_maximum
// CHECK-SAME: (%[[V:.*]]: vector<1x16xf32>, %[[ACC:.*]]: vector<1xf32>)
// CHECK: %[[L8:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0, 0], sizes = [1, 8], strides = [1, 1]}
// CHECK: %[[H8:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0, 8], sizes = [1, 8], strides = [1, 1]}
// CHECK: %[[M8:.*]] = arith.maximumf %[[L8]], %[[H8]] : vector<1x8xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x4xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x2xf32>
// CHECK: %[[M1:.*]] = arith.maximumf {{.*}} : vector<1x1xf32>
// CHECK: %[[R:.*]] = vector.shape_cast %[[M1]] : vector<1x1xf32> to vector<1xf32>
// CHECK: %[[OUT:.*]] = arith.maximumf %[[R]], %[[ACC]] : vector<1xf32>
// CHECK-NOT: vector.multi_reduction
// CHECK: return %[[OUT]]
func.func @row_maximum(%v: vector<1x16xf32>, %acc: vector<1xf32>) -> vector<1xf32> {
  %r = vector.multi_reduction <maximumf>, %v, %acc [1] : vector<1x16xf32> to vector<1xf32>
  return %r : vector<1xf32>
}

// A sum of one register into a scalar, and a maxnum over several rows at
// once (one vector op per step for all 4 rows).
// CHECK-LABEL: func.func @sum_and_rows
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: arith.addf {{.*}} : vector<1xf32>
// CHECK: %[[S:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// CHECK: arith.addf %[[S]], %{{.*}} : f32
// CHECK: arith.maxnumf {{.*}} : vector<4x4xf32>
// CHECK: arith.maxnumf {{.*}} : vector<4x2xf32>
// CHECK: arith.maxnumf {{.*}} : vector<4x1xf32>
// CHECK: vector.shape_cast {{.*}} : vector<4x1xf32> to vector<4xf32>
// CHECK-NOT: vector.multi_reduction
func.func @sum_and_rows(%v: vector<16xf32>, %acc: f32, %w: vector<4x8xf32>, %wacc: vector<4xf32>) -> (f32, vector<4xf32>) {
  %s = vector.multi_reduction <add>, %v, %acc [0] : vector<16xf32> to f32
  %m = vector.multi_reduction <maxnumf>, %w, %wacc [1] : vector<4x8xf32> to vector<4xf32>
  return %s, %m : f32, vector<4xf32>
}

// Left to upstream: an outer dimension reduced, lanes that are not a power
// of 2, integers, and products.
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-4: vector.multi_reduction
func.func @untouched(%a: vector<4x16xf32>, %aacc: vector<16xf32>, %b: vector<12xf32>, %c: vector<16xi32>,
                     %d: vector<16xf32>, %f: f32, %i: i32) -> (vector<16xf32>, f32, i32, f32) {
  %0 = vector.multi_reduction <maximumf>, %a, %aacc [0] : vector<4x16xf32> to vector<16xf32>
  %1 = vector.multi_reduction <maximumf>, %b, %f [0] : vector<12xf32> to f32
  %2 = vector.multi_reduction <add>, %c, %i [0] : vector<16xi32> to i32
  %3 = vector.multi_reduction <mul>, %d, %f [0] : vector<16xf32> to f32
  return %0, %1, %2, %3 : vector<16xf32>, f32, i32, f32
}

// A loop that reduces one register of a row per step into its running
// value carries the 16 lanes instead (one lane-by-lane max per step), and
// reduces them once after the loop; the register starts as the running
// value broadcast. A sum's starts as zeros and adds the running value at
// the end.
// CHECK-LABEL: func.func @row_loop
// CHECK-SAME: (%[[M:.*]]: memref<128xf32>, %[[INIT:.*]]: vector<1xf32>, %[[SINIT:.*]]: f32)
// CHECK-DAG: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[START:.*]] = vector.broadcast %[[INIT]] : vector<1xf32> to vector<1x16xf32>
// CHECK: %[[LANES:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[START]]) -> (vector<1x16xf32>)
// CHECK:   %[[STEP:.*]] = arith.maximumf %{{.*}}, %[[ACC]] : vector<1x16xf32>
// CHECK:   scf.yield %[[STEP]]
// CHECK: vector.extract_strided_slice %[[LANES]] {offsets = [0, 0], sizes = [1, 8]
// CHECK: arith.maximumf {{.*}}, %[[INIT]] : vector<1xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]]) -> (vector<16xf32>)
// CHECK:   arith.addf {{.*}} : vector<16xf32>
// CHECK: %[[SUM:.*]] = vector.extract %{{.*}}[0] : f32 from vector<1xf32>
// CHECK: arith.addf %[[SUM]], %[[SINIT]] : f32
// CHECK-NOT: vector.multi_reduction
func.func @row_loop(%m: memref<128xf32>, %init: vector<1xf32>, %sinit: f32) -> (vector<1xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %p = ub.poison : f32
  %r = scf.for %i = %c0 to %c128 step %c16 iter_args(%acc = %init) -> (vector<1xf32>) {
    %v = vector.transfer_read %m[%i], %p {in_bounds = [true]} : memref<128xf32>, vector<16xf32>
    %b = vector.broadcast %v : vector<16xf32> to vector<1x16xf32>
    %x = vector.multi_reduction <maximumf>, %b, %acc [1] : vector<1x16xf32> to vector<1xf32>
    scf.yield %x : vector<1xf32>
  }
  %s = scf.for %i = %c0 to %c128 step %c16 iter_args(%acc = %sinit) -> (f32) {
    %v = vector.transfer_read %m[%i], %p {in_bounds = [true]} : memref<128xf32>, vector<16xf32>
    %x = vector.multi_reduction <add>, %v, %acc [0] : vector<16xf32> to f32
    scf.yield %x : f32
  }
  return %r, %s : vector<1xf32>, f32
}
