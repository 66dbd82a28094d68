// fail_if for ROCm: fails the dispatch with constant 0 as its code, as
// fail_if.c, fail_if.comp and fail_if.ptx (0 succeeds).
//
// arguments (schemas/rocm_executable.fbs): the check-status pointer, then
//            constant 0; no bindings, so no lengths.
// checks:    the code is written to the check-status word. The metadata
//            lists one check, so code 1 reads as check 0 ("fail_if: asked to
//            fail with code 1"); any other code is beyond the checks and
//            fails the dispatch as a kernel returning that code.
#include "rocm_kernel.h"

STRATA_KERNEL(1)
void fail_if(global uint* check, uint code) {
  if (code != 0) *check = code;
}
