// strata-cpu-approximate-math: listed functions become polynomial
// arithmetic on vectors and scalars alike (f16 through f32); others stay.
// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-cpu-approximate-math{functions=exp,tanh}))' | FileCheck %s
// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-cpu-approximate-math{functions=none}))' | FileCheck --check-prefix=NONE %s

// CHECK-LABEL: func.func @vector_exp
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: return
// NONE-LABEL: func.func @vector_exp
// NONE: math.exp {{.*}} : vector<16xf32>
func.func @vector_exp(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.exp %x : vector<16xf32>
  return %y : vector<16xf32>
}

// CHECK-LABEL: func.func @scalar_tanh
// CHECK-NOT: math.tanh
// CHECK: return
func.func @scalar_tanh(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  return %y : f32
}

// CHECK-LABEL: func.func @half_exp
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK-NOT: math.exp
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @half_exp(%x: f16) -> f16 {
  %y = math.exp %x : f16
  return %y : f16
}

// Not listed: left to the intrinsic or libm.
// CHECK-LABEL: func.func @sin
// CHECK: math.sin
func.func @sin(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.sin %x : vector<16xf32>
  return %y : vector<16xf32>
}
