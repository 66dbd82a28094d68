// strata-gpu-bool-bytes: i1 buffers become byte buffers; loads compare the
// byte with 0, stores write the bit as 0 or 1.
// RUN: strata-opt %s --strata-gpu-bool-bytes | FileCheck %s

// CHECK-LABEL: func.func @not(
// CHECK-SAME: %[[IN:.*]]: memref<7xi8>, %[[OUT:.*]]: memref<7xi8>)
// CHECK: %[[BYTE:.*]] = memref.load %[[IN]][%{{.*}}] : memref<7xi8>
// CHECK: %[[BIT:.*]] = arith.cmpi ne, %[[BYTE]], %c0_i8
// CHECK: %[[NOT:.*]] = arith.xori %[[BIT]], %true
// CHECK: %[[WIDE:.*]] = arith.extui %[[NOT]] : i1 to i8
// CHECK: memref.store %[[WIDE]], %[[OUT]][%{{.*}}] : memref<7xi8>
func.func @not(%in: memref<7xi1>, %out: memref<7xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %true = arith.constant true
  scf.for %i = %c0 to %c7 step %c1 {
    %b = memref.load %in[%i] : memref<7xi1>
    %n = arith.xori %b, %true : i1
    memref.store %n, %out[%i] : memref<7xi1>
  }
  return
}
