// strata-plan-transients: the dispatch results that only later dispatches of
// their block read, and the kernels' scratch, share one arena by lifetime;
// dynamically sized ones share slots. A result that the host reads, returns
// or passes to another block keeps a buffer of its own.
// RUN: strata-opt --strata-plan-transients --split-input-file %s | FileCheck %s
// RUN: strata-opt --strata-plan-transients --split-input-file --verify-diagnostics %S/Inputs/plan-transients-errors.mlir

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
#s = [{format = "cpu-elf-x86_64", ordinal = 1 : i32, scratch_bytes = 256 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}
func.func private @s(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #s}

// The 256 bytes of @s's scratch live for its dispatch only, with b (its
// input) and c (its output): 256 + 64 + 64 bytes. a dies before the scratch
// is used and shares its bytes. d is returned.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = flow.dispatch @k(%{{.*}}) {flow.arena_bytes = 384 : i64, flow.transient_offsets = array<i64: 0>}
// CHECK: %[[B:.*]] = flow.dispatch @k(%[[A]]) {flow.transient_offsets = array<i64: 256>}
// CHECK: %[[C:.*]] = flow.dispatch @s(%[[B]]) {flow.scratch_offset = 0 : i64, flow.transient_offsets = array<i64: 320>}
// CHECK: %[[D:.*]] = flow.dispatch @k(%[[C]]) :
// CHECK-NOT: flow.transient_offsets
// CHECK: return %[[D]]
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = flow.dispatch @k(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %c = flow.dispatch @s(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %d = flow.dispatch @k(%c) : (tensor<16xf32>) -> tensor<16xf32>
  return %d : tensor<16xf32>
}

// -----

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}

// Read by the host (an extract, through a view) or by another block: not
// transients, so no arena.
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: flow.arena_bytes
// CHECK-NOT: flow.transient_offsets
// CHECK: return
func.func @escapes(%x: tensor<16xf32>, %i: index) -> f32 {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %v = tensor.expand_shape %a [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %e = tensor.extract %v[%i, %i] : tensor<4x4xf32>
  %b = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  cf.br ^next(%b : tensor<16xf32>)
^next(%c: tensor<16xf32>):
  return %e : f32
}

// -----

#d = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, count_factor = 1 : i64, count_words = array<i32: 0>, count_max = 0 : i32, workgroup_size = array<i32: 64, 1, 1>}]
func.func private @d(tensor<?xf32>) -> tensor<?xf32> attributes {flow.kernel, flow.variants = #d}

// Dynamically sized: a and c share slot 0, b takes slot 1; all sizes are
// known at the first, which allocates the slots. %late's size comes after
// it, so %late keeps its own buffer.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[A:.*]] = flow.dispatch @d(%{{.*}}) dims(%{{.*}}) {flow.dynamic_arena, flow.dynamic_slots = array<i64: 0>}
// CHECK: %[[B:.*]] = flow.dispatch @d(%[[A]]) dims(%{{.*}}) {flow.dynamic_slots = array<i64: 1>}
// CHECK: %[[C:.*]] = flow.dispatch @d(%[[B]]) dims(%{{.*}}) {flow.dynamic_slots = array<i64: 0>}
// CHECK: arith.muli
// CHECK: %[[LATE:.*]] = flow.dispatch @d(%[[C]]) dims(%{{.*}}) :
// CHECK: flow.dispatch @d(%[[LATE]]) dims(%{{.*}}) :
func.func @dynamic(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %a = flow.dispatch @d(%x) dims(%n) : (tensor<?xf32>) -> tensor<?xf32>
  %b = flow.dispatch @d(%a) dims(%n) : (tensor<?xf32>) -> tensor<?xf32>
  %c = flow.dispatch @d(%b) dims(%n) : (tensor<?xf32>) -> tensor<?xf32>
  %m = arith.muli %n, %n : index
  %late = flow.dispatch @d(%c) dims(%m) : (tensor<?xf32>) -> tensor<?xf32>
  %r = flow.dispatch @d(%late) dims(%m) : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
#s = [{format = "cpu-elf-x86_64", ordinal = 1 : i32, scratch_bytes = 256 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}
func.func private @s(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #s}
func.func private @k2(tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}

// Dispatches none of which reads another's result form a group that the
// runtime may run at once: what one of them reads or writes lives as long as
// the group, so none reuses another's bytes. a and b are one group, c and d
// (which read them) the next, e (returned) the last. Without groups, c's
// result would take a's bytes (a dies at c); here a, b, c, d and d's scratch
// are all apart: 64 bytes each and the 256 of the scratch.
// CHECK-LABEL: func.func @groups
// CHECK: %[[A:.*]] = flow.dispatch @k(%{{.*}}) {flow.arena_bytes = 512 : i64, flow.transient_offsets = array<i64: 256>}
// CHECK: %[[B:.*]] = flow.dispatch @k(%{{.*}}) {flow.transient_offsets = array<i64: 320>}
// CHECK: %[[C:.*]] = flow.dispatch @k(%[[A]]) {flow.transient_offsets = array<i64: 384>}
// CHECK: %[[D:.*]] = flow.dispatch @s(%[[B]]) {flow.scratch_offset = 0 : i64, flow.transient_offsets = array<i64: 448>}
// CHECK: flow.dispatch @k2(%[[C]], %[[D]]) :
func.func @groups(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %b = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %c = flow.dispatch @k(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %d = flow.dispatch @s(%b) : (tensor<16xf32>) -> tensor<16xf32>
  %e = flow.dispatch @k2(%c, %d) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %e : tensor<16xf32>
}
