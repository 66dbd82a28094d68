/* fill_pattern: each workgroup records that it ran, so a test can check that
 * every workgroup of a 3-D dispatch ran exactly once.
 *
 * bindings:  0 = grid of count_x * count_y * count_z cells (x fastest), each
 *            four u32: the cell's workgroup gets {x, y, z, hits + 1}.
 * constants: none.
 * returns:   0; 1 for wrong binding count; 2 if the grid is too short;
 *            3 if the workgroup id is outside the workgroup count.
 */
#include "drivers/cpu/kernel_abi.h"

int fill_pattern(const strata_cpu_dispatch_v0_t* dispatch) {
  if (dispatch->binding_count != 1) return 1;
  const uint32_t* id = dispatch->workgroup_id;
  const uint32_t* count = dispatch->workgroup_count;
  const uint64_t cells = (uint64_t)count[0] * count[1] * count[2];
  if (dispatch->binding_lengths[0] / (4 * sizeof(uint32_t)) < cells) return 2;
  if (id[0] >= count[0] || id[1] >= count[1] || id[2] >= count[2]) return 3;
  const uint64_t linear = ((uint64_t)id[2] * count[1] + id[1]) * count[0] + id[0];
  uint32_t* cell = (uint32_t*)dispatch->bindings[0] + 4 * linear;
  cell[0] = id[0];
  cell[1] = id[1];
  cell[2] = id[2];
  cell[3] += 1;
  return 0;
}
