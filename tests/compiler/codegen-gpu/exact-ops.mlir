// RUN: strata-opt %s --strata-gpu-exact-ops | FileCheck %s
// RUN: strata-opt %s "--strata-gpu-exact-ops=ops=trunc" | FileCheck %s --check-prefix=TRUNC
// RUN: not strata-opt %s "--strata-gpu-exact-ops=ops=tanh" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Integer powers by repeated squaring in a loop; negative exponents select
// 1, +-1 or 0 after it.
// CHECK-LABEL: func.func @ipowi
// CHECK-SAME:    (%[[X:.*]]: i32, %[[E:.*]]: i32)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         %[[NEG:.*]] = arith.cmpi slt, %[[E]], %[[ZERO]]
// CHECK:         %[[COUNT:.*]] = arith.select %[[NEG]], %[[ZERO]], %[[E]]
// CHECK:         %[[LOOP:.*]]:3 = scf.while ({{.*}} = %[[ONE]], {{.*}} = %[[X]], {{.*}} = %[[COUNT]])
// CHECK:           arith.cmpi ne
// CHECK:           scf.condition
// CHECK:           arith.muli
// CHECK:           arith.select
// CHECK:           arith.muli
// CHECK:           arith.shrui
// CHECK:           scf.yield
// CHECK:         %[[R:.*]] = arith.select %[[NEG]], %{{.*}}, %[[LOOP]]#0
// CHECK:         return %[[R]]
// CHECK-NOT:     math.ipowi
// TRUNC-LABEL: func.func @ipowi
// TRUNC:         math.ipowi
func.func @ipowi(%x: i32, %e: i32) -> i32 {
  %r = math.ipowi %x, %e : i32
  return %r : i32
}

// Vector powers are left alone.
// CHECK-LABEL: func.func @ipowi_vector
// CHECK:         math.ipowi
func.func @ipowi_vector(%x: vector<4xi32>, %e: vector<4xi32>) -> vector<4xi32> {
  %r = math.ipowi %x, %e : vector<4xi32>
  return %r : vector<4xi32>
}

// Maximum: a if greater, b if less, the AND of their bits if equal (+0 of
// -0 and +0), else (a NaN) a + b.
// CHECK-LABEL: func.func @maximumf
// CHECK-SAME:    (%[[A:.*]]: f32, %[[B:.*]]: f32)
// CHECK-DAG:     %[[AI:.*]] = arith.bitcast %[[A]] : f32 to i32
// CHECK-DAG:     %[[BI:.*]] = arith.bitcast %[[B]] : f32 to i32
// CHECK:         %[[TIEI:.*]] = arith.andi %[[AI]], %[[BI]]
// CHECK:         %[[TIE:.*]] = arith.bitcast %[[TIEI]] : i32 to f32
// CHECK:         %[[NAN:.*]] = arith.addf %[[A]], %[[B]]
// CHECK:         %[[EQ:.*]] = arith.cmpf oeq, %[[A]], %[[B]]
// CHECK:         %[[S1:.*]] = arith.select %[[EQ]], %[[TIE]], %[[NAN]]
// CHECK:         %[[LT:.*]] = arith.cmpf olt, %[[A]], %[[B]]
// CHECK:         %[[S2:.*]] = arith.select %[[LT]], %[[B]], %[[S1]]
// CHECK:         %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[B]]
// CHECK:         arith.select %[[GT]], %[[A]], %[[S2]]
// CHECK-NOT:     arith.maximumf
func.func @maximumf(%a: f32, %b: f32) -> f32 {
  %r = arith.maximumf %a, %b : f32
  return %r : f32
}

// Minimum: the same with the comparisons swapped and the OR of the bits
// (-0 of -0 and +0).
// CHECK-LABEL: func.func @minimumf
// CHECK:         arith.ori
// CHECK:         arith.cmpf oeq
// CHECK:         arith.cmpf ogt
// CHECK:         arith.cmpf olt
// CHECK-NOT:     arith.minimumf
func.func @minimumf(%a: f16, %b: f16) -> f16 {
  %r = arith.minimumf %a, %b : f16
  return %r : f16
}

// trunc(x) = copysign(floor(|x|), x).
// CHECK-LABEL: func.func @trunc
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK:         %[[ABS:.*]] = math.absf %[[X]]
// CHECK:         %[[FLOOR:.*]] = math.floor %[[ABS]]
// CHECK:         math.copysign %[[FLOOR]], %[[X]]
// TRUNC-LABEL: func.func @trunc
// TRUNC:         math.floor
// TRUNC-NOT:     math.trunc
func.func @trunc(%x: f32) -> f32 {
  %r = math.trunc %x : f32
  return %r : f32
}

// UNKNOWN: unknown op 'tanh' (expected ipowi, maximumf, minimumf or trunc)
