// strata-form-dispatches: matmul + bias + ReLU become one kernel computing in
// place; the fill of its output is cloned in; weights stay arguments; two
// identical regions share one kernel; a region whose values are used between
// its ops and a consumer does not absorb that consumer.
// RUN: strata-opt %s --strata-form-dispatches --canonicalize --split-input-file | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
// CHECK-LABEL: func.func @dense_dispatch_0
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16xf32>) -> tensor<4x16xf32> attributes {flow.kernel}
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[X]], %[[W]] : {{.*}}) outs(%[[FILL]] :
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %[[B]] : {{.*}}) outs(%[[MM]] :
// CHECK: arith.maximumf
// CHECK-LABEL: func.func @dense(
// CHECK: %[[R:.*]] = flow.dispatch @dense_dispatch_0(%arg0, %{{.*}}, %arg1) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @dense(%x: tensor<4x8xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e2 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.maximumf %s, %z : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// Two identical independent regions share one kernel.
#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @twice_dispatch_0
// CHECK-NOT: func.func @twice_dispatch_1
// CHECK-LABEL: func.func @twice(
// CHECK: flow.dispatch @twice_dispatch_0(%arg0)
// CHECK: flow.dispatch @twice_dispatch_0(%arg1)
func.func @twice(%x: tensor<13xf32>, %y: tensor<13xf32>) -> (tensor<13xf32>, tensor<13xf32>) {
  %e = tensor.empty() : tensor<13xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<13xf32>) outs(%e : tensor<13xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<13xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<13xf32>) outs(%e : tensor<13xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<13xf32>
  return %a, %b : tensor<13xf32>, tensor<13xf32>
}

// -----

// A consumer reading a value that the host also reads in between does not
// join the region: the region would have to move past the host's read.
#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @blocked(
// CHECK: %[[A:.*]] = flow.dispatch @blocked_dispatch_0(%arg0)
// CHECK: tensor.extract %[[A]][
// CHECK: flow.dispatch @blocked_dispatch_1(%{{.*}}, %[[A]])
func.func @blocked(%x: tensor<13xf32>) -> (tensor<13xf32>, f32) {
  %e = tensor.empty() : tensor<13xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<13xf32>) outs(%e : tensor<13xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<13xf32>
  %c1 = arith.constant 1 : index
  %first = tensor.extract %a[%c1] : tensor<13xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<13xf32>) outs(%e : tensor<13xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %first : f32
    linalg.yield %s : f32
  } -> tensor<13xf32>
  return %b, %first : tensor<13xf32>, f32
}

// -----

// A dynamic batch: the kernel takes the size as an index argument and the
// dispatch gives the host's size of its result.
#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @dynamic_dispatch_0
// CHECK-SAME: (%{{.*}}: tensor<?x4xf32>, %{{.*}}: index) -> tensor<?x4xf32>
// CHECK-LABEL: func.func @dynamic(
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: flow.dispatch @dynamic_dispatch_0(%arg0, %[[N]]) dims(%[[N]])
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.mulf %v, %v : f32
    linalg.yield %s : f32
  } -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// A residual add reads two regions: it joins the matmul's (the later
// producer) and computes in place over its output; the earlier region's
// value is an argument of that kernel.
#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @residual_dispatch_0
// CHECK: math.exp
// CHECK-LABEL: func.func @residual_dispatch_1
// CHECK-SAME: (%[[X:.*]]: tensor<8x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[H:.*]]: tensor<8x8xf32>)
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %[[H]] : {{.*}}) outs(%[[MM]] :
// CHECK-LABEL: func.func @residual(
// CHECK: %[[E:.*]] = flow.dispatch @residual_dispatch_0(%arg0)
// CHECK-NEXT: flow.dispatch @residual_dispatch_1(%arg0, %arg1, %[[E]])
// CHECK-NOT: flow.dispatch
func.func @residual(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %h : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
