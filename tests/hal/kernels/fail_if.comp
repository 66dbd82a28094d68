// fail_if for Vulkan: fails the dispatch with constant 0 as its code, as
// fail_if.c (0 succeeds).
//
// bindings:  none.
// constants: 0 = the code.
// checks:    the code is written to the check-status word (binding 0). The
//            metadata lists one check, so code 1 reads as check 0 ("fail_if:
//            asked to fail with code 1"); any other code is beyond the
//            checks and fails the dispatch as a kernel returning that code.
#version 450
layout(local_size_x = 1) in;

layout(set = 0, binding = 0) buffer Check { uint check_word; };
layout(push_constant) uniform Constants { uint code; };

void main() {
  if (code != 0u) check_word = code;
}
