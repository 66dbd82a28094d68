// add_f32 for ROCm: c[i] = a[i] + b[i] over this workgroup's slice of the
// elements, as add_f32.c, add_f32.comp and add_f32.ptx.
//
// arguments (schemas/rocm_executable.fbs, the kernel ABI CUDA's): a, b, c
//            (f32 pointers), the check-status pointer, constant 0, then the
//            byte lengths of a, b and c that the driver passes after the
//            constants.
// constants: 0 = elements per workgroup; workgroup x covers
//            [x * size, (x + 1) * size), clipped to the element count (c's
//            length / 4), threads striding by the workgroup size (64).
// checks:    check 0: a or b is shorter than c (add_f32.c returns 2); nothing
//            is written then.
#include "rocm_kernel.h"

STRATA_KERNEL(64)
void add_f32(global const float* a, global const float* b, global float* c, global uint* check, uint size,
             ulong a_length, ulong b_length, ulong c_length) {
  const ulong count = c_length / 4;
  if (a_length / 4 < count || b_length / 4 < count) {
    *check = 1;
    return;
  }
  const ulong begin = (ulong)workgroup_id(0) * size;
  const ulong end = begin + size < count ? begin + size : count;
  for (ulong i = begin + thread_id(0); i < end; i += 64) c[i] = a[i] + b[i];
}
