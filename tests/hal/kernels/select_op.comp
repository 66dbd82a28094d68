// select_op for Vulkan: out[i] = op(in[i]) for every element, as select_op.c
// (whose function-pointer table exercises ELF relocations; here a switch).
//
// bindings:  0 = in (f32), 1 = out (f32); the element count is out's
//            length, and in must be at least as long.
// constants: 0 = op: 0 negate, 1 add 0.5 (select_op.c's strata_test_offset),
//            2 sqrt, 3 tanh, 4 2 * sqrt.
// checks:    check 0 (binding 2): in is shorter than out (select_op.c returns
//            2); check 1: an unknown op (select_op.c returns 3).
#version 450
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer In { float in_values[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_values[]; };
layout(set = 0, binding = 2) buffer Check { uint check_word; };
layout(push_constant) uniform Constants { uint op; };

void main() {
  const uint count = uint(out_values.length());
  if (uint(in_values.length()) < count) {
    check_word = 1u;
    return;
  }
  if (op > 4u) {
    check_word = 2u;
    return;
  }
  for (uint i = gl_LocalInvocationID.x; i < count; i += gl_WorkGroupSize.x) {
    const float x = in_values[i];
    float y;
    switch (op) {
      case 0u: y = -x; break;
      case 1u: y = x + 0.5; break;
      case 2u: y = sqrt(x); break;
      case 3u: y = tanh(x); break;
      default: y = 2.0 * sqrt(x); break;
    }
    out_values[i] = y;
  }
}
