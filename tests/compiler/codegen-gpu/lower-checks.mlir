// strata-gpu-lower-checks: a check sets the status word (binding
// strata.check_status, appended) to its number + 1 when it fails, and guards
// the access after it; the messages say what each check tests and where.
// RUN: strata-opt %s --strata-gpu-lower-checks | FileCheck %s

// CHECK-LABEL: func.func @lookup(
// CHECK-SAME: %[[STATUS:[^:]*]]: memref<1xi32> {strata.check_status})
// CHECK-SAME: strata.check_messages = ["{{.*}}lower-checks.mlir:{{[0-9]+}}:{{[0-9]+}}: index in range"]
// CHECK: scf.for
// CHECK: %[[OK:.*]] = arith.cmpi ult
// CHECK: %[[FAILS:.*]] = arith.xori %[[OK]], %true
// CHECK: scf.if %[[FAILS]] {
// CHECK: memref.store %c1_i32, %[[STATUS]][%c0{{.*}}]
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: memref.load %arg0
// CHECK-NEXT: memref.store
// CHECK-NOT: cf.assert
func.func @lookup(%table: memref<13xf32>, %ids: memref<7xindex>, %out: memref<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c13 = arith.constant 13 : index
  scf.for %i = %c0 to %c7 step %c1 {
    %id = memref.load %ids[%i] : memref<7xindex>
    %ok = arith.cmpi ult, %id, %c13 : index
    cf.assert %ok, "index in range"
    %v = memref.load %table[%id] : memref<13xf32>
    memref.store %v, %out[%i] : memref<7xf32>
  }
  return
}
