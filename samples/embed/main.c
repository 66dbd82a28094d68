/* classify: runs the sample MLP (samples/models/mlp.mlir, compiled with
 * compile-module) through Strata's C API and prints the class it picks.
 *
 *   classify mlp.smod                      # a fixed test pattern as input
 *   classify mlp.smod image.raw            # 784 little-endian float32 pixels
 *   classify mlp.smod image.raw cpu-task threads=2
 *
 * prints
 *
 *   device: cpu-sync (CPU, inline on the calling thread)
 *   function: predict(tensor<1x784xf32>) -> (tensor<1x10xf32>)
 *   class: 6
 *   scores: -0.201030076 0.0338166207 -0.506097138 ...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata/strata.h>

enum { kPixels = 784, kClasses = 10 };

/* Prints a failed status, frees it and says whether there was one. */
static int failed(strata_status* status, const char* what) {
  if (!status) return 0;
  fprintf(stderr, "classify: %s: %s: %s\n", what, strata_code_name(strata_status_code(status)),
          strata_status_message(status));
  strata_status_free(status);
  return 1;
}

/* The input image: read from a raw file, or a fixed pattern. */
static int read_input(const char* path, float* pixels) {
  if (!path) {
    for (int i = 0; i < kPixels; ++i) pixels[i] = (float)((i * 37) % 256) / 255.0f;
    return 1;
  }
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "classify: cannot open '%s'\n", path);
    return 0;
  }
  size_t n = fread(pixels, sizeof(float), kPixels + 1, f);
  fclose(f);
  if (n != kPixels) {
    fprintf(stderr, "classify: '%s' holds %zu floats, expected %d\n", path, n, kPixels);
    return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    fprintf(stderr, "usage: classify MODULE.smod [IMAGE.raw|-] [DRIVER] [OPTIONS]\n");
    return 2;
  }
  const char* input_path = argc > 2 && strcmp(argv[2], "-") != 0 ? argv[2] : NULL;
  const char* driver = argc > 3 ? argv[3] : "cpu-sync";
  const char* options = argc > 4 ? argv[4] : NULL;

  /* The input stays in this array: strata_tensor_wrap uses it in place. */
  static float pixels[kPixels];
  if (!read_input(input_path, pixels)) return 1;

  int rc = 1;
  strata_instance* instance = NULL;
  strata_device* device = NULL;
  strata_module* module = NULL;
  strata_function* predict = NULL;
  strata_tensor* input = NULL;
  strata_tensor* output = NULL;
  const int64_t shape[2] = {1, kPixels};
  float scores[kClasses];

  if (failed(strata_instance_create(&instance), "creating the instance")) goto done;
  if (failed(strata_device_open(instance, driver, options, &device), "opening the device")) goto done;
  if (failed(strata_module_load_file(device, argv[1], &module), "loading the module")) goto done;
  if (failed(strata_module_lookup_function(module, "predict", &predict), "looking up predict")) goto done;
  printf("device: %s (%s)\n", strata_device_name(device), strata_device_description(device));
  printf("function: %s(%s) -> (%s)\n", strata_function_name(predict), strata_function_input_type(predict, 0),
         strata_function_output_type(predict, 0));

  if (failed(strata_tensor_wrap(device, STRATA_ELEMENT_TYPE_F32, shape, 2, pixels, sizeof(pixels), NULL, NULL,
                                &input),
             "wrapping the input")) {
    goto done;
  }
  if (failed(strata_function_call(predict, &input, 1, &output, 1), "calling predict")) goto done;
  if (strata_tensor_element_count(output) != kClasses) {
    char type[64];
    strata_tensor_describe(output, type, sizeof(type));
    fprintf(stderr, "classify: predict returned %s, expected %d scores\n", type, kClasses);
    goto done;
  }
  if (failed(strata_tensor_copy_out(output, scores, sizeof(scores)), "reading the scores")) goto done;

  int best = 0;
  for (int i = 1; i < kClasses; ++i) {
    if (scores[i] > scores[best]) best = i;
  }
  printf("class: %d\nscores:", best);
  for (int i = 0; i < kClasses; ++i) printf(" %.9g", scores[i]);
  printf("\n");
  rc = 0;

done:
  strata_tensor_release(output);
  strata_tensor_release(input);
  strata_module_release(module);
  strata_device_release(device);
  strata_instance_release(instance);
  return rc;
}
