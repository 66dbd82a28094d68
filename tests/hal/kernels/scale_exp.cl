// scale_exp for ROCm: out[i] = scale * exp(in[i]) over this workgroup's
// slice, as scale_exp.c (whose expf comes from the runtime), scale_exp.comp
// and scale_exp.ptx; here exp(x) is 2^(x * log2(e)) with the hardware's
// v_exp_f32, within a few ulp (about 5e-7 relative for |x| < 4).
//
// arguments (schemas/rocm_executable.fbs): in, out (f32 pointers), the
//            check-status pointer, constants 0 and 1, then the byte lengths
//            of in and out that the driver passes after the constants.
// constants: 0 = scale (the bits of an f32), 1 = elements per workgroup;
//            workgroup x covers [x * size, (x + 1) * size), clipped to the
//            element count (out's length / 4).
// checks:    check 0: in is shorter than out (scale_exp.c returns 2).
#include "rocm_kernel.h"

STRATA_KERNEL(64)
void scale_exp(global const float* in, global float* out, global uint* check, uint scale_bits, uint size,
               ulong in_length, ulong out_length) {
  const ulong count = out_length / 4;
  if (in_length / 4 < count) {
    *check = 1;
    return;
  }
  const float scale = as_float(scale_bits);
  const ulong begin = (ulong)workgroup_id(0) * size;
  const ulong end = begin + size < count ? begin + size : count;
  for (ulong i = begin + thread_id(0); i < end; i += 64) out[i] = scale * exp_approx(in[i]);
}
