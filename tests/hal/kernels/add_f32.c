/* add_f32: c[i] = a[i] + b[i] over this workgroup's slice of the elements.
 *
 * bindings:  0 = a (f32), 1 = b (f32), 2 = c (f32); the element count is c's
 *            length / 4, and a and b must be at least as long.
 * constants: 0 = elements per workgroup; workgroup x covers
 *            [x * size, (x + 1) * size), clipped to the element count.
 * returns:   0; 1 for wrong binding/constant counts; 2 if a or b is too short.
 */
#include "drivers/cpu/kernel_abi.h"

int add_f32(const strata_cpu_dispatch_v0_t* dispatch) {
  if (dispatch->binding_count != 3 || dispatch->constant_count != 1) return 1;
  const uint64_t count = dispatch->binding_lengths[2] / sizeof(float);
  if (dispatch->binding_lengths[0] / sizeof(float) < count ||
      dispatch->binding_lengths[1] / sizeof(float) < count) {
    return 2;
  }
  const float* a = (const float*)dispatch->bindings[0];
  const float* b = (const float*)dispatch->bindings[1];
  float* c = (float*)dispatch->bindings[2];
  const uint64_t size = dispatch->constants[0];
  const uint64_t begin = (uint64_t)dispatch->workgroup_id[0] * size;
  const uint64_t end = begin + size < count ? begin + size : count;
  for (uint64_t i = begin; i < end; ++i) c[i] = a[i] + b[i];
  return 0;
}
