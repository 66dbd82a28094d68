// add_f32 for Vulkan: c[i] = a[i] + b[i] over this workgroup's slice of the
// elements, as add_f32.c.
//
// bindings:  0 = a (f32), 1 = b (f32), 2 = c (f32); the element count is c's
//            length, and a and b must be at least as long.
// constants: 0 = elements per workgroup; workgroup x covers
//            [x * size, (x + 1) * size), clipped to the element count.
// checks:    check 0 (binding 3): a or b is shorter than c (add_f32.c returns
//            2); nothing is written then.
// The binding and constant counts are fixed by the pipeline layout, so the
// C kernel's count check (return 1) has no counterpart.
#version 450
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };
layout(set = 0, binding = 3) buffer Check { uint check_word; };
layout(push_constant) uniform Constants { uint size; };

void main() {
  const uint count = uint(c.length());
  if (uint(a.length()) < count || uint(b.length()) < count) {
    check_word = 1u;
    return;
  }
  const uint begin = gl_WorkGroupID.x * size;
  const uint end = min(begin + size, count);
  for (uint i = begin + gl_LocalInvocationID.x; i < end; i += gl_WorkGroupSize.x) c[i] = a[i] + b[i];
}
