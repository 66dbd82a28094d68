// A cf.assert in a kernel (torch-mlir's bounds checks on embedding look-ups)
// survives as a check: strata-cpu-wrap-kernel-abi numbers it, gives the body
// an i32 status and lists its message with its location in the entry's
// description; strata-cpu-lower-checks makes it return 16 + its number.
// RUN: strata-opt %s --strata-cpu-wrap-kernel-abi | FileCheck %s --check-prefix=WRAP
// RUN: strata-opt %s --strata-cpu-wrap-kernel-abi --convert-scf-to-cf --strata-cpu-lower-checks --canonicalize | FileCheck %s --check-prefix=LOWER

// WRAP-LABEL: func.func @gather(
// WRAP-SAME: check_messages = ["{{.*}}lower-checks.mlir:40:5: index must be smaller than dim size", "{{.*}}lower-checks.mlir:42:5: index must be larger or equal to 0"]
// WRAP: %[[STATUS:.*]] = call @gather.body(
// WRAP: return %[[STATUS]] : i32
// WRAP-LABEL: func.func private @gather.body(
// WRAP-SAME: -> i32
// WRAP: cf.assert %{{.*}}, "index must be smaller than dim size" {strata_cpu.check = 0 : i32}
// WRAP: cf.assert %{{.*}}, "index must be larger or equal to 0" {strata_cpu.check = 1 : i32}
// WRAP: return %c0_i32 : i32

// LOWER-LABEL: func.func private @gather.body(
// LOWER: cf.cond_br %{{.*}}, ^[[NEXT:.*]], ^[[FAIL0:.*]]
// LOWER: ^[[NEXT]]:
// LOWER: cf.cond_br %{{.*}}, ^[[LOAD:.*]], ^[[FAIL1:.*]]
// LOWER: ^[[LOAD]]:
// LOWER: memref.load
// LOWER-DAG: ^[[FAIL0]]:
// LOWER-DAG: return %c16_i32 : i32
// LOWER-DAG: ^[[FAIL1]]:
// LOWER-DAG: return %c17_i32 : i32
// LOWER-NOT: cf.assert
func.func @gather(%ids: memref<4xi64>, %table: memref<10x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0 : i64
  scf.for %i = %c0 to %c4 step %c1 {
    %id = memref.load %ids[%i] : memref<4xi64>
    %row = arith.index_cast %id : i64 to index
    %below = arith.cmpi slt, %row, %c10 : index
    cf.assert %below, "index must be smaller than dim size"
    %nonneg = arith.cmpi sge, %id, %zero : i64
    cf.assert %nonneg, "index must be larger or equal to 0"
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %table[%row, %j] : memref<10x8xf32>
      memref.store %v, %out[%i, %j] : memref<4x8xf32>
    }
  }
  return
}
