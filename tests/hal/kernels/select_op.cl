// select_op for ROCm: out[i] = op(in[i]) for every element, as select_op.c
// (whose function-pointer table exercises ELF relocations), select_op.comp
// and select_op.ptx; here a switch. Every workgroup covers all the elements,
// its threads striding by the workgroup size (64).
//
// arguments (schemas/rocm_executable.fbs): in, out (f32 pointers), the
//            check-status pointer, constant 0, then the byte lengths of in
//            and out that the driver passes after the constants.
// constants: 0 = op: 0 negate, 1 add 0.5 (select_op.c's strata_test_offset),
//            2 sqrt (correctly rounded), 3 tanh, 4 2 * sqrt. tanh(x) is
//            sign(x) * (e - 1) / (e + 1) with e = 2^(2|x| log2(e)) for
//            1/4 <= |x| < 10, its Taylor series to x^7 below 1/4 and sign(x)
//            from 10 on, as select_op.ptx.
// checks:    check 0: in is shorter than out (select_op.c returns 2);
//            check 1: an unknown op (select_op.c returns 3).
#include "rocm_kernel.h"

static float tanh_approx(float x) {
  const float a = __builtin_fabsf(x);
  float t;
  if (a >= 10.0f) {
    t = 1.0f;
  } else if (a >= 0.25f) {
    const float e = exp_approx(2.0f * a);
    t = (e - 1.0f) / (e + 1.0f);
  } else {
    const float s = a * a;
    t = a * (1.0f + s * (-1.0f / 3 + s * (2.0f / 15 + s * (-17.0f / 315))));
  }
  return __builtin_copysignf(t, x);
}

STRATA_KERNEL(64)
void select_op(global const float* in, global float* out, global uint* check, uint op, ulong in_length,
               ulong out_length) {
  const ulong count = out_length / 4;
  if (in_length / 4 < count) {
    *check = 1;
    return;
  }
  if (op > 4) {
    *check = 2;
    return;
  }
  for (ulong i = thread_id(0); i < count; i += 64) {
    const float x = in[i];
    float y;
    switch (op) {
      case 0: y = -x; break;
      case 1: y = x + 0.5f; break;
      case 2: y = __builtin_sqrtf(x); break;
      case 3: y = tanh_approx(x); break;
      default: y = 2.0f * __builtin_sqrtf(x); break;
    }
    out[i] = y;
  }
}
