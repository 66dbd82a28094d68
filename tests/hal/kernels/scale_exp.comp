// scale_exp for Vulkan: out[i] = scale * exp(in[i]) over this workgroup's
// slice, as scale_exp.c (whose expf comes from the runtime; here it is the
// device's exp).
//
// bindings:  0 = in (f32), 1 = out (f32); the element count is out's
//            length, and in must be at least as long.
// constants: 0 = scale (the bits of an f32), 1 = elements per workgroup.
// checks:    check 0 (binding 2): in is shorter than out (scale_exp.c
//            returns 2).
#version 450
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer In { float in_values[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_values[]; };
layout(set = 0, binding = 2) buffer Check { uint check_word; };
layout(push_constant) uniform Constants {
  uint scale_bits;
  uint size;
};

void main() {
  const uint count = uint(out_values.length());
  if (uint(in_values.length()) < count) {
    check_word = 1u;
    return;
  }
  const float scale = uintBitsToFloat(scale_bits);
  const uint begin = gl_WorkGroupID.x * size;
  const uint end = min(begin + size, count);
  for (uint i = begin + gl_LocalInvocationID.x; i < end; i += gl_WorkGroupSize.x) {
    out_values[i] = scale * exp(in_values[i]);
  }
}
