/* fail_if: returns constant 0, so a test can make a dispatch fail on demand
 * with a code of its choosing (0 succeeds).
 *
 * bindings:  none.
 * constants: 0 = the code to return.
 * returns:   constant 0; -1 without it.
 */
#include "drivers/cpu/kernel_abi.h"

int fail_if(const strata_cpu_dispatch_v0_t* dispatch) {
  if (dispatch->constant_count < 1) return -1;
  return (int)dispatch->constants[0];
}
