// strata-cpu-scratch-to-binding moves statically sized temporaries that are
// too large for the stack into one scratch argument appended to the kernel,
// at 64-byte-aligned offsets, and records its size; the host provides it.
// RUN: strata-opt %s --strata-cpu-scratch-to-binding --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @two_temporaries
// CHECK-SAME: (%{{.*}}: memref<64x128xf32>, %{{.*}}: memref<64xf32>, %[[S:.*]]: memref<33344xi8> {strata_cpu.scratch})
// CHECK-SAME: attributes {strata_cpu.scratch_bytes = 33344 : i64}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C32768:.*]] = arith.constant 32768 : index
// CHECK-DAG: memref.view %[[S]][%[[C0]]][] : memref<33344xi8> to memref<64x128xf32>
// CHECK-DAG: memref.view %[[S]][%[[C32768]]][] : memref<33344xi8> to memref<129xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @two_temporaries(%in: memref<64x128xf32>, %out: memref<64xf32>) {
  %t = memref.alloc() : memref<64x128xf32>
  linalg.exp ins(%in : memref<64x128xf32>) outs(%t : memref<64x128xf32>)
  %u = memref.alloc() : memref<129xf32>
  linalg.reduce ins(%t : memref<64x128xf32>) outs(%out : memref<64xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  memref.dealloc %t : memref<64x128xf32>
  return
}

// -----

// Without a static temporary, nothing changes.
// CHECK-LABEL: func.func @none
// CHECK-SAME: (%{{.*}}: memref<8xf32>)
// CHECK-NOT: strata_cpu.scratch
func.func @none(%a: memref<8xf32>) {
  return
}

// -----

// A dynamic size is left for strata-cpu-verify-kernels to reject, and so is
// a buffer carried out of a loop iteration; private helpers are not kernels.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: strata_cpu.scratch
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<4096xf32>
// CHECK: func.func private @helper
// CHECK: memref.alloc() : memref<4096xf32>
func.func @dynamic(%n: index, %out: memref<4096xf32>) {
  %t = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %out) -> memref<4096xf32> {
    %next = memref.alloc() : memref<4096xf32>
    scf.yield %next : memref<4096xf32>
  }
  return
}
func.func private @helper() {
  %t = memref.alloc() : memref<4096xf32>
  return
}
