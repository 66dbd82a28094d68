/* api-cold-start: the time from nothing to the first result of the sample
 * MLP through the C API, inside one process: instance, device, module load
 * (map + verify + link), input, the first call (which prepares the
 * executables) and reading the scores. Prints the milliseconds and the
 * class, for tests/benchmarks/cold_start.py.
 *
 *   api-cold-start mlp.smod [DRIVER]
 *   load_to_result_ms=0.61 class=6
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>

#include <strata/strata.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int check(strata_status* status) {
  if (!status) return 1;
  fprintf(stderr, "api-cold-start: %s\n", strata_status_message(status));
  strata_status_free(status);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: api-cold-start MODULE.smod [DRIVER]\n");
    return 2;
  }
  static float pixels[784];
  for (int i = 0; i < 784; ++i) pixels[i] = (float)((i * 37) % 256) / 255.0f;
  const int64_t shape[2] = {1, 784};
  float scores[10];

  const double start = now_ms();
  strata_instance* instance = NULL;
  strata_device* device = NULL;
  strata_module* module = NULL;
  strata_function* predict = NULL;
  strata_tensor* input = NULL;
  strata_tensor* output = NULL;
  int ok = check(strata_instance_create(&instance)) &&
           check(strata_device_open(instance, argc > 2 ? argv[2] : "cpu-sync", NULL, &device)) &&
           check(strata_module_load_file(device, argv[1], &module)) &&
           check(strata_module_lookup_function(module, "predict", &predict)) &&
           check(strata_tensor_wrap(device, STRATA_ELEMENT_TYPE_F32, shape, 2, pixels, sizeof(pixels), NULL, NULL,
                                    &input)) &&
           check(strata_function_call(predict, &input, 1, &output, 1)) &&
           check(strata_tensor_copy_out(output, scores, sizeof(scores)));
  const double end = now_ms();

  if (ok) {
    int best = 0;
    for (int i = 1; i < 10; ++i) best = scores[i] > scores[best] ? i : best;
    printf("load_to_result_ms=%.3f class=%d\n", end - start, best);
  }
  strata_tensor_release(output);
  strata_tensor_release(input);
  strata_module_release(module);
  strata_device_release(device);
  strata_instance_release(instance);
  return ok ? 0 : 1;
}
