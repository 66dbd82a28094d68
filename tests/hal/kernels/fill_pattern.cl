// fill_pattern for ROCm: each workgroup records that it ran, as
// fill_pattern.c, fill_pattern.comp and fill_pattern.ptx, so a test can check
// that every workgroup of a 3-D dispatch ran exactly once.
//
// arguments (schemas/rocm_executable.fbs): the grid pointer, the
//            check-status pointer, then the grid's byte length that the
//            driver passes after the (no) constants.
// binding 0: grid of count_x * count_y * count_z cells (x fastest), each
//            four u32: the cell's workgroup gets {x, y, z, hits + 1}. The
//            workgroup count is the dispatch packet's grid size (workgroups
//            of one thread).
// checks:    check 0: the grid is shorter than the workgroup count
//            (fill_pattern.c returns 2). A workgroup id outside the count
//            (return 3 there) cannot happen on a GPU.
#include "rocm_kernel.h"

STRATA_KERNEL(1)
void fill_pattern(global uint* grid, global uint* check, ulong grid_length) {
  const uint id[3] = {workgroup_id(0), workgroup_id(1), workgroup_id(2)};
  const uint count[3] = {workgroup_count(0), workgroup_count(1), workgroup_count(2)};
  const ulong cells = (ulong)count[0] * count[1] * count[2];
  if (grid_length / 16 < cells) {
    *check = 1;
    return;
  }
  const ulong linear = ((ulong)id[2] * count[1] + id[1]) * count[0] + id[0];
  global uint* cell = grid + 4 * linear;
  cell[0] = id[0];
  cell[1] = id[1];
  cell[2] = id[2];
  cell[3] += 1;
}
