/* sgemm-pairs: SGEMM N x N x N f32, row-major, by a Strata module (one
 * linalg.matmul, called through the C API) and by oneDNN's dnnl_sgemm, in
 * one process, alternating. On a machine whose speed drifts from minute to
 * minute, figures from separate processes differ by more than what they
 * compare; calls made side by side see the same machine. The two take turns
 * in bursts (the first call of each burst is not timed: it pays for the
 * other's threads still spinning and for its own waking; with several threads
 * each turn starts after 50 ms idle), and the ratio is taken burst pair by
 * burst pair.
 *
 *   sgemm-pairs MODULE.smod N DEVICE [PAIRS]
 *
 * DEVICE is cpu-sync (oneDNN on one thread) or cpu-task?threads=T (oneDNN
 * on T OpenMP threads). oneDNN is opened at run time (libdnnl.so.3 or .2,
 * Debian's libdnnl-dev): nothing links against it. Both results are checked
 * against each other before timing. Prints each side's quartiles of a
 * burst's median call and the quartiles of the pairs' ratio of Strata's
 * GFLOP/s over oneDNN's (above 1: Strata faster). Exit status 1 on any
 * failure, with the reason on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <strata/strata.h>

enum { kBurst = 5 };
static const long kTurnGapNanos = 50 * 1000 * 1000;

typedef int (*dnnl_sgemm_fn)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                             int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int ok(strata_status* status, const char* what) {
  if (!status) return 1;
  fprintf(stderr, "sgemm-pairs: %s: %s\n", what, strata_status_message(status));
  strata_status_free(status);
  return 0;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The q-quantile of `count` sorted values (nearest rank). */
static double quantile(const double* sorted, int count, double q) {
  int index = (int)(q * (count - 1) + 0.5);
  return sorted[index];
}

typedef struct {
  strata_function* function;
  strata_tensor* inputs[2];
  float* out; /* the first result, for the check */
  size_t out_bytes;
} strata_side;

static int strata_call(strata_side* side, int keep) {
  strata_tensor* result = NULL;
  if (!ok(strata_function_call(side->function, side->inputs, 2, &result, 1), "calling sgemm")) return 0;
  int good = 1;
  if (keep) good = ok(strata_tensor_copy_out(result, side->out, side->out_bytes), "reading the result");
  strata_tensor_release(result);
  return good;
}

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: sgemm-pairs MODULE.smod N DEVICE [PAIRS]\n");
    return 1;
  }
  const char* module_path = argv[1];
  const int64_t n = strtoll(argv[2], NULL, 10);
  const char* device_name = argv[3];
  const int pairs = argc > 4 ? atoi(argv[4]) : 40;
  if (n <= 0 || n > 16384 || pairs <= 0) {
    fprintf(stderr, "sgemm-pairs: N must be in 1..16384 and PAIRS positive (got N=%s, PAIRS=%d)\n", argv[2], pairs);
    return 1;
  }
  int threads = 1;
  if (strncmp(device_name, "cpu-task", 8) == 0) {
    const char* option = strstr(device_name, "threads=");
    if (!option) {
      fprintf(stderr, "sgemm-pairs: name the threads of cpu-task (cpu-task?threads=T), got '%s'\n", device_name);
      return 1;
    }
    threads = atoi(option + 8);
  } else if (strcmp(device_name, "cpu-sync") != 0) {
    fprintf(stderr, "sgemm-pairs: DEVICE must be cpu-sync or cpu-task?threads=T, got '%s'\n", device_name);
    return 1;
  }
  /* oneDNN's OpenMP reads its thread count when it starts. */
  char count[16];
  snprintf(count, sizeof(count), "%d", threads);
  setenv("OMP_NUM_THREADS", count, 1);
  void* dnnl = dlopen("libdnnl.so.3", RTLD_NOW | RTLD_LOCAL);
  if (!dnnl) dnnl = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
  dnnl_sgemm_fn dnnl_sgemm = dnnl ? (dnnl_sgemm_fn)dlsym(dnnl, "dnnl_sgemm") : NULL;
  if (!dnnl_sgemm) {
    fprintf(stderr, "sgemm-pairs: oneDNN not found (libdnnl.so.3 or libdnnl.so.2 with dnnl_sgemm; apt-get install "
                    "libdnnl-dev)\n");
    return 1;
  }

  const size_t elements = (size_t)(n * n), bytes = elements * sizeof(float);
  /* Aligned as the runtime aligns its own buffers (64 bytes). */
  float* a = aligned_alloc(64, (bytes + 63) / 64 * 64);
  float* b = aligned_alloc(64, (bytes + 63) / 64 * 64);
  float* c_dnnl = calloc(elements, sizeof(float));
  float* c_strata = calloc(elements, sizeof(float));
  if (!a || !b || !c_dnnl || !c_strata) {
    fprintf(stderr, "sgemm-pairs: out of memory for 4 matrices of %zu bytes\n", bytes);
    return 1;
  }
  uint32_t state = 2026;
  for (size_t i = 0; i < elements; ++i) {
    state = state * 1664525u + 1013904223u;
    a[i] = (float)(state >> 8) / 16777216.0f - 0.5f;
    state = state * 1664525u + 1013904223u;
    b[i] = (float)(state >> 8) / 16777216.0f - 0.5f;
  }

  strata_instance* instance = NULL;
  strata_device* device = NULL;
  strata_module* module = NULL;
  strata_side side = {NULL, {NULL, NULL}, c_strata, bytes};
  const int64_t shape[2] = {n, n};
  int good = ok(strata_instance_create(&instance), "creating the instance") &&
             ok(strata_device_open(instance, device_name, NULL, &device), "opening the device") &&
             ok(strata_module_load_file(device, module_path, &module), "loading the module") &&
             ok(strata_module_lookup_function(module, "sgemm", &side.function), "finding @sgemm") &&
             ok(strata_tensor_wrap(device, STRATA_ELEMENT_TYPE_F32, shape, 2, a, bytes, NULL, NULL, &side.inputs[0]),
                "wrapping A") &&
             ok(strata_tensor_wrap(device, STRATA_ELEMENT_TYPE_F32, shape, 2, b, bytes, NULL, NULL, &side.inputs[1]),
                "wrapping B") &&
             strata_call(&side, /*keep=*/1);
  if (good) {
    const int status = dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c_dnnl, n);
    if (status != 0) {
      fprintf(stderr, "sgemm-pairs: dnnl_sgemm returned %d\n", status);
      good = 0;
    }
  }
  if (good) {
    /* Each of the n terms of a dot product rounds; both sum in their own order. */
    double worst = 0.0;
    for (size_t i = 0; i < elements; ++i) worst = fmax(worst, fabs((double)c_strata[i] - (double)c_dnnl[i]));
    const double allowed = 1e-5 * (double)n;
    if (!(worst <= allowed)) {
      fprintf(stderr, "sgemm-pairs: the results differ by up to %g (allowed %g)\n", worst, allowed);
      good = 0;
    }
  }

  double* strata_times = malloc(sizeof(double) * pairs);
  double* dnnl_times = malloc(sizeof(double) * pairs);
  double* ratios = malloc(sizeof(double) * pairs);
  for (int pair = 0; good && pair < pairs; ++pair) {
    for (int turn = 0; good && turn < 2; ++turn) {
      const int strata_turn = (turn == 0) == (pair % 2 == 0);
      if (threads > 1) {
        /* Idle between turns, so that the other side's threads have stopped
         * spinning for work (libgomp's spin before sleeping is long): a
         * helper thread sharing its core with them made Strata's split
         * look slower than running alone, which it then chose. */
        const struct timespec gap = {0, kTurnGapNanos};
        nanosleep(&gap, NULL);
      }
      double calls[kBurst - 1];
      for (int call = 0; good && call < kBurst; ++call) {
        const double begin = now_s();
        if (strata_turn) {
          good = strata_call(&side, /*keep=*/0);
        } else if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c_dnnl, n) != 0) {
          fprintf(stderr, "sgemm-pairs: dnnl_sgemm failed\n");
          good = 0;
        }
        if (call > 0) calls[call - 1] = now_s() - begin;
      }
      if (!good) break;
      qsort(calls, kBurst - 1, sizeof(double), compare_doubles);
      const double median = 0.5 * (calls[(kBurst - 2) / 2] + calls[(kBurst - 1) / 2]);
      (strata_turn ? strata_times : dnnl_times)[pair] = median;
    }
    ratios[pair] = dnnl_times[pair] / strata_times[pair];
  }

  if (good) {
    qsort(strata_times, pairs, sizeof(double), compare_doubles);
    qsort(dnnl_times, pairs, sizeof(double), compare_doubles);
    qsort(ratios, pairs, sizeof(double), compare_doubles);
    const double flops = 2.0 * (double)n * (double)n * (double)n;
    printf("SGEMM %lld on %s, oneDNN on %d thread%s: %d pairs of bursts of %d calls (medians of the last %d)\n",
           (long long)n, device_name, threads, threads == 1 ? "" : "s", pairs, kBurst, kBurst - 1);
    printf("%-8s %10s %10s %10s %10s %14s\n", "", "min ms", "25 %", "median", "75 %", "GFLOP/s median");
    for (int side_index = 0; side_index < 2; ++side_index) {
      const double* times = side_index == 0 ? strata_times : dnnl_times;
      printf("%-8s %10.3f %10.3f %10.3f %10.3f %14.1f\n", side_index == 0 ? "strata" : "oneDNN", times[0] * 1e3,
             quantile(times, pairs, 0.25) * 1e3, quantile(times, pairs, 0.5) * 1e3,
             quantile(times, pairs, 0.75) * 1e3, flops / quantile(times, pairs, 0.5) * 1e-9);
    }
    printf("strata GFLOP/s over oneDNN's, pair by pair: 25 %% %.3f  median %.3f  75 %% %.3f\n",
           quantile(ratios, pairs, 0.25), quantile(ratios, pairs, 0.5), quantile(ratios, pairs, 0.75));
  }

  free(ratios);
  free(dnnl_times);
  free(strata_times);
  strata_tensor_release(side.inputs[0]);
  strata_tensor_release(side.inputs[1]);
  strata_module_release(module);
  strata_device_release(device);
  strata_instance_release(instance);
  free(c_strata);
  free(c_dnnl);
  free(b);
  free(a);
  return good ? 0 : 1;
}
