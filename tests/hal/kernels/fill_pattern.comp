// fill_pattern for Vulkan: each workgroup records that it ran, as
// fill_pattern.c, so a test can check that every workgroup of a 3-D dispatch
// ran exactly once.
//
// bindings:  0 = grid of count_x * count_y * count_z cells (x fastest), each
//            four u32: the cell's workgroup gets {x, y, z, hits + 1}.
// constants: none.
// checks:    check 0 (binding 1): the grid is shorter than the workgroup
//            count (fill_pattern.c returns 2). A workgroup id outside the
//            count (return 3 there) cannot happen on Vulkan.
// capabilities: Int64 (for the cell count), so the metadata lists it.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;

layout(set = 0, binding = 0) buffer Grid { uvec4 cells[]; };
layout(set = 0, binding = 1) buffer Check { uint check_word; };

void main() {
  const uvec3 id = gl_WorkGroupID;
  const uvec3 count = gl_NumWorkGroups;
  // In 64 bits: a workgroup count of 2^32 cells or more must not wrap.
  const uint64_t cells_needed = uint64_t(count.x) * count.y * count.z;
  if (uint64_t(cells.length()) < cells_needed) {
    check_word = 1u;
    return;
  }
  const uint linear = (id.z * count.y + id.y) * count.x + id.x;
  cells[linear].xyz = id;
  cells[linear].w += 1u;
}
