/* select_op: out[i] = op(in[i]) for every element, with op picked from a
 * constant table of function pointers. The table and the exported global
 * make the linker emit every relocation kind the loader supports: RELATIVE
 * (pointers to local functions), 64/ABS64 (pointers to imports), GLOB_DAT
 * (the global read through the GOT) and JUMP_SLOT (the import called
 * directly).
 *
 * bindings:  0 = in (f32), 1 = out (f32); the element count is out's
 *            length / 4, and in must be at least as long.
 * constants: 0 = op: 0 negate, 1 add strata_test_offset, 2 sqrtf, 3 tanhf,
 *            4 2 * sqrtf (called directly, not through the table).
 * returns:   0; 1 for wrong binding/constant counts; 2 if in is too short;
 *            3 for an unknown op.
 */
#include "drivers/cpu/kernel_abi.h"

float sqrtf(float x);
float tanhf(float x);

/* Exported data: tests look them up and read them. The zeroed array lies in
 * .bss, memory the file does not hold (p_memsz > p_filesz). */
float strata_test_offset = 0.5f;
uint32_t strata_test_zeroed[1024];

static float negate(float x) { return -x; }
static float add_offset(float x) { return x + strata_test_offset; }

static float (*const kOps[])(float) = {negate, add_offset, sqrtf, tanhf};

int select_op(const strata_cpu_dispatch_v0_t* dispatch) {
  if (dispatch->binding_count != 2 || dispatch->constant_count != 1) return 1;
  const uint64_t count = dispatch->binding_lengths[1] / sizeof(float);
  if (dispatch->binding_lengths[0] / sizeof(float) < count) return 2;
  const float* in = (const float*)dispatch->bindings[0];
  float* out = (float*)dispatch->bindings[1];
  const uint32_t op = dispatch->constants[0];
  if (op == 4) {
    for (uint64_t i = 0; i < count; ++i) out[i] = 2.0f * sqrtf(in[i]);
    return 0;
  }
  if (op >= sizeof(kOps) / sizeof(kOps[0])) return 3;
  for (uint64_t i = 0; i < count; ++i) out[i] = kOps[op](in[i]);
  return 0;
}
