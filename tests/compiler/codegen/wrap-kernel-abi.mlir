// strata-cpu-wrap-kernel-abi gives each kernel the entry-point signature of
// drivers/cpu/kernel_abi.h: int kernel(const strata_cpu_dispatch_v0_t *).
// RUN: strata-opt %s --strata-cpu-wrap-kernel-abi --canonicalize --cse --split-input-file --verify-diagnostics | FileCheck %s

// Bindings: the memrefs in order. Push constants: the scalar, then the
// dynamic dimension of each memref. The rows of %a come from constant 1, so
// the host dispatches ceil(constants[1] / 8) workgroups.
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[DISPATCH:.*]]: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.readonly}) -> i32
// CHECK-SAME: strata_cpu.entry_point = {binding_count = 2 : i64, binding_read_only = array<i1: true, false>, constant_count = 3 : i64, workgroup_count_constant = 1 : i64, workgroup_size = array<i64: 8, 1, 1>}
// The workgroup id and count, linearized: x + cx * (y + cy * z).
// CHECK: %[[X:.*]] = llvm.getelementptr %[[DISPATCH]][0, 0, 0]
// CHECK: %[[CX:.*]] = llvm.getelementptr %[[DISPATCH]][0, 1, 0]
// CHECK: arith.addi
// CHECK: %[[ID:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: arith.muli
// CHECK: %[[COUNT:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// At least 2 bindings and 3 constants, else return 1.
// CHECK: %[[BINDINGS_OK:.*]] = arith.cmpi uge, %{{.*}}, %c2_i32 : i32
// CHECK: %[[CONSTANTS_OK:.*]] = arith.cmpi uge, %{{.*}}, %c3_i32 : i32
// CHECK: %[[ENOUGH:.*]] = arith.andi %[[BINDINGS_OK]], %[[CONSTANTS_OK]]
// CHECK: cf.cond_br %[[ENOUGH]], ^[[LOAD:.*]], ^[[FAIL:.*]](%c1_i32 : i32)
// CHECK: ^[[LOAD]]:
// CHECK: %[[BINDINGS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[LENGTHS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[CONSTANTS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[SCALAR:.*]] = llvm.load %[[CONSTANTS]] : !llvm.ptr -> i32
// CHECK: %[[ROWS_A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: %[[ROWS_OUT:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// Binding 0: its pointer, its length, rows x 4 x 4 bytes must fit.
// CHECK: %[[POINTER:.*]] = llvm.load %[[BINDINGS]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[LENGTH:.*]] = llvm.load %[[LENGTHS]] : !llvm.ptr -> i64
// CHECK: %[[ROWS:.*]] = arith.extui %[[ROWS_A]] : i32 to i64
// CHECK: arith.mului_extended %[[ROWS]], %c4_i64 : i64
// CHECK: arith.cmpi ule, %{{.*}}, %[[LENGTH]] : i64
// A row-major descriptor: sizes [rows, 4], strides [4, 1].
// CHECK: llvm.insertvalue %[[POINTER]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[POINTER]], %{{.*}}[1]
// CHECK: llvm.insertvalue %c4_i64, %{{.*}}[3, 1]
// CHECK: llvm.insertvalue %c1_i64, %{{.*}}[4, 1]
// CHECK: llvm.insertvalue %[[ROWS]], %{{.*}}[3, 0]
// CHECK: %[[DESCRIPTOR:.*]] = llvm.insertvalue %c4_i64, %{{.*}}[4, 0]
// CHECK: %[[A:.*]] = builtin.unrealized_conversion_cast %[[DESCRIPTOR]] : {{.*}} to memref<?x4xf32>
// CHECK: %[[OUT:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<?x4xf32>
// CHECK: %[[S:.*]] = arith.bitcast %[[SCALAR]] : i32 to f32
// CHECK: %[[ID_INDEX:.*]] = arith.index_castui %[[ID]] : i64 to index
// CHECK: %[[COUNT_INDEX:.*]] = arith.index_castui %[[COUNT]] : i64 to index
// CHECK: cf.cond_br %{{.*}}, ^[[CALL:.*]], ^[[FAIL]](%c2_i32 : i32)
// CHECK: ^[[CALL]]:
// CHECK: call @scale.body(%[[A]], %[[OUT]], %[[S]], %[[ID_INDEX]], %[[COUNT_INDEX]])
// CHECK: return %c0_i32 : i32
// CHECK: ^[[FAIL]](%[[CODE:.*]]: i32):
// CHECK: return %[[CODE]] : i32
// The body keeps the kernel's signature and is not exported.
// CHECK: func.func private @scale.body(%{{.*}}: memref<?x4xf32>, %{{.*}}: memref<?x4xf32>, %{{.*}}: f32, %{{.*}}: index {strata_cpu.workgroup_id}, %{{.*}}: index {strata_cpu.workgroup_count})
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
func.func @scale(%a: memref<?x4xf32>, %out: memref<?x4xf32>, %s: f32,
                 %id: index {strata_cpu.workgroup_id},
                 %count: index {strata_cpu.workgroup_count})
    attributes {strata_cpu.distribution = {extent_arg = 0 : i64, extent_dim = 0 : i64, tile = 8 : i64}} {
  linalg.copy ins(%a : memref<?x4xf32>) outs(%out : memref<?x4xf32>)
  return
}

// -----

// A kernel that is not split runs on workgroup 0 only; a static extent
// gives a static workgroup count, ceil(100 / 32).
// CHECK: func.func private @helper
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-LABEL: func.func @whole(
// CHECK-SAME: strata_cpu.entry_point = {binding_count = 1 : i64, binding_read_only = array<i1: false>, constant_count = 1 : i64, workgroup_count = array<i64: 1, 1, 1>, workgroup_size = array<i64: 1, 1, 1>}
// CHECK: arith.addi
// CHECK: %[[ID:.*]] = arith.addi
// CHECK: arith.cmpi eq, %[[ID]], %c0_i64 : i64
// CHECK: call @whole.body
// CHECK-LABEL: func.func @split(
// CHECK-SAME: workgroup_count = array<i64: 4, 1, 1>, workgroup_size = array<i64: 32, 1, 1>
func.func private @helper(%a: memref<16xi8>) {
  return
}
func.func @whole(%a: memref<16xi8>, %n: i32) {
  func.call @helper(%a) : (memref<16xi8>) -> ()
  return
}
func.func @split(%a: memref<100xf32>, %id: index {strata_cpu.workgroup_id},
                 %count: index {strata_cpu.workgroup_count})
    attributes {strata_cpu.distribution = {extent = 100 : i64, tile = 32 : i64}} {
  return
}
// Tiles of rows and columns (DistributeToWorkgroups): one workgroup a tile,
// its size the tile's rows and columns.
// CHECK-LABEL: func.func @grid(
// CHECK-SAME: workgroup_count = array<i64: 6, 1, 1>, workgroup_size = array<i64: 32, 32, 1>
func.func @grid(%a: memref<64x96xf32>, %id: index {strata_cpu.workgroup_id},
                %count: index {strata_cpu.workgroup_count})
    attributes {strata_cpu.distribution = {columns = 32 : i64, tile = 32 : i64, tiles = 6 : i64}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op a kernel returns nothing; it writes its results to memref arguments}}
func.func @returns(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  return %x : f32
}

// -----

func.func private @clash.body()
// expected-error @+1 {{'func.func' op cannot name the kernel body 'clash.body': the symbol exists}}
func.func @clash(%a: memref<4xf32>) {
  return
}

// -----

// An i64 scalar takes two push constants, the low word first: the wrapper
// joins them as low | high << 32.
// CHECK-LABEL: func.func @offset(
// CHECK-SAME: constant_count = 2 : i64
// CHECK: llvm.getelementptr %{{.*}}[0, 6]
// CHECK-NEXT: %[[CONSTANTS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[LOW:.*]] = llvm.load %[[CONSTANTS]] : !llvm.ptr -> i32
// CHECK-NEXT: %[[SECOND:.*]] = llvm.getelementptr %[[CONSTANTS]][1]
// CHECK-NEXT: %[[HIGH:.*]] = llvm.load %[[SECOND]] : !llvm.ptr -> i32
// CHECK-DAG: %[[HIGH64:.*]] = arith.extui %[[HIGH]] : i32 to i64
// CHECK-DAG: %[[LOW64:.*]] = arith.extui %[[LOW]] : i32 to i64
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[HIGH64]], %c32_i64 : i64
// CHECK: %[[VALUE:.*]] = arith.ori %[[LOW64]], %[[SHIFTED]] : i64
// CHECK: call @offset.body(%{{.*}}, %[[VALUE]])
func.func @offset(%out: memref<4xi64>, %n: i64) {
  %c0 = arith.constant 0 : index
  memref.store %n, %out[%c0] : memref<4xi64>
  return
}

// -----

// Local memory: the runtime's per-thread buffer (fields 7 and 8 of the
// dispatch struct), not a binding. Its size is declared in the metadata and
// checked: a dispatch that brings less returns 3 before the body runs.
// CHECK-LABEL: func.func @packs(
// CHECK-SAME: strata_cpu.entry_point = {binding_count = 1 : i64, binding_read_only = array<i1: true>, constant_count = 0 : i64, local_memory_bytes = 4096 : i64
// CHECK-DAG: %[[SIZE_FIELD:.*]] = llvm.getelementptr %{{.*}}[0, 8]
// CHECK-DAG: %[[SIZE:.*]] = llvm.load %[[SIZE_FIELD]] : !llvm.ptr -> i64
// CHECK-DAG: %[[LOCAL_FIELD:.*]] = llvm.getelementptr %{{.*}}[0, 7]
// CHECK-DAG: %[[LOCAL:.*]] = llvm.load %[[LOCAL_FIELD]] : !llvm.ptr -> !llvm.ptr
// CHECK-DAG: %[[ENOUGH:.*]] = arith.cmpi uge, %[[SIZE]], %c4096_i64 : i64
// CHECK: %[[VIEW:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<4096xi8>
// CHECK: cf.cond_br %[[ENOUGH]], ^{{.*}}, ^[[FAIL:.*]](%c3_i32 : i32)
// CHECK: ^[[FAIL]](%[[CODE:.*]]: i32):
// CHECK-NEXT: return %[[CODE]] : i32
// CHECK: call @packs.body(%{{.*}}, %[[VIEW]])
func.func @packs(%out: memref<4xf32>, %local: memref<4096xi8> {strata_cpu.local_memory}) {
  return
}

// -----

// A kernel that prefetches what the next workgroup reads (tile-and-vectorize
// marks it) asks for its workgroups in ascending order.
// CHECK-LABEL: func.func @prefetches(
// CHECK-SAME: strata_cpu.entry_point = {ascending_workgroups, binding_count = 1 : i64
func.func @prefetches(%out: memref<4xf32>) attributes {strata_cpu.ascending_workgroups} {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 1 is not the one static memref of i8 that local memory is}}
func.func @bad_local(%out: memref<4xf32>, %local: memref<?xi8> {strata_cpu.local_memory}) {
  return
}
