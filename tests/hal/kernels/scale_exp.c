/* scale_exp: out[i] = scale * expf(in[i]) over this workgroup's slice. expf is
 * imported from the runtime, so loading this kernel exercises import
 * resolution through the PLT.
 *
 * bindings:  0 = in (f32), 1 = out (f32); the element count is out's
 *            length / 4, and in must be at least as long.
 * constants: 0 = scale (the bits of an f32), 1 = elements per workgroup.
 * returns:   0; 1 for wrong binding/constant counts; 2 if in is too short.
 */
#include "drivers/cpu/kernel_abi.h"

float expf(float x);

int scale_exp(const strata_cpu_dispatch_v0_t* dispatch) {
  if (dispatch->binding_count != 2 || dispatch->constant_count != 2) return 1;
  const uint64_t count = dispatch->binding_lengths[1] / sizeof(float);
  if (dispatch->binding_lengths[0] / sizeof(float) < count) return 2;
  const float* in = (const float*)dispatch->bindings[0];
  float* out = (float*)dispatch->bindings[1];
  const union { uint32_t bits; float value; } scale = {dispatch->constants[0]};
  const uint64_t size = dispatch->constants[1];
  const uint64_t begin = (uint64_t)dispatch->workgroup_id[0] * size;
  const uint64_t end = begin + size < count ? begin + size : count;
  for (uint64_t i = begin; i < end; ++i) out[i] = scale.value * expf(in[i]);
  return 0;
}
