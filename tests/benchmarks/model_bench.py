#!/usr/bin/python3
"""The sample models on one thread, in the same run: Strata against PyTorch eager and
against upstream MLIR's own tiled and vectorized lowering.

  MLP 784-512-512-10 batch 1 and batch 32   (samples/models: mlp.mlir, predict and
  encoder block, seq 128, width 256          predict_batch32; encoder_block.mlir, encode)

Strata:   compile-module, then build/bin/benchmark-module on cpu-sync (Google Benchmark
          repetitions; its median).
PyTorch:  the same models in torch (1.13) eager with the same weights, read from the
          .mlir files' dense_resource blobs; torch.set_num_threads(1), no_grad, warm-up.
Upstream: the sample function and a timing main (upstream/driver.mlir.in) lowered by
          mlir-opt with a transform-dialect schedule (upstream/schedules.mlir: register
          tiles for the contractions, vectorize, one-shot bufferize, hoist, outer-product
          contraction lowering) and the standard passes to LLVM, run by mlir-runner -O3.

Every engine's result for one random input is first compared with the NumPy reference of
tests/e2e/check_models.py, so that what is timed is a correct program. Medians over
repetitions, microseconds per call.

  /usr/bin/python3 tests/benchmarks/model_bench.py [--build-dir build] [--repetitions 7]
"""
import argparse
import json
import os
import re
import statistics
import string
import subprocess
import sys
import time

# One thread in PyTorch's BLAS too, whichever libblas.so.3 it loads (OpenBLAS starts a
# thread per core unless told; torch.set_num_threads does not reach a generic BLAS).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import check_models  # noqa: E402  (weights out of the .mlir files, NumPy references)

RTOL = 1e-4
ATOL = 1e-4


class Case:
    def __init__(self, name, sample, function, input_shape, result_shape, schedule, reference, torch_model,
                 calls, bar):
        self.name, self.sample, self.function = name, sample, function
        self.input_shape, self.result_shape = input_shape, result_shape
        self.schedule, self.reference, self.torch_model = schedule, reference, torch_model
        self.calls = calls  # per timed repetition in PyTorch and upstream: about 0.1 s
        self.bar = bar  # (peer, limit): Strata's time at most limit times the peer's


def torch_mlp(blobs):
    import torch
    sizes = [784, 512, 512, 10]
    layers = [(torch.from_numpy(check_models.f32(blobs, "w%d" % (i + 1), (sizes[i], sizes[i + 1])).copy()),
               torch.from_numpy(check_models.f32(blobs, "b%d" % (i + 1), (sizes[i + 1],)).copy()))
              for i in range(3)]

    def predict(x):
        h = x
        for i, (w, b) in enumerate(layers):
            h = torch.addmm(b, h, w)
            if i < 2:
                h = torch.relu(h)
        return h
    return predict


def torch_encoder(blobs):
    import torch
    import torch.nn.functional as F
    S, D, H, E, FF = 128, 256, 4, 64, 1024
    g = lambda name, *shape: torch.from_numpy(check_models.f32(blobs, name, shape).copy())
    ln1_g, ln1_b, ln2_g, ln2_b = g("ln1_g", D), g("ln1_b", D), g("ln2_g", D), g("ln2_b", D)
    wq, wk, wv, wo = g("wq", D, D), g("wk", D, D), g("wv", D, D), g("wo", D, D)
    bq, bk, bv, bo = g("bq", D), g("bk", D), g("bv", D), g("bo", D)
    w1, b1, w2, b2 = g("w1", D, FF), g("b1", FF), g("w2", FF, D), g("b2", D)

    def encode(x):
        ln1 = F.layer_norm(x, (D,), ln1_g, ln1_b, 1e-5)
        q = torch.addmm(bq, ln1, wq).view(S, H, E).transpose(0, 1)
        k = torch.addmm(bk, ln1, wk).view(S, H, E).permute(1, 2, 0)
        v = torch.addmm(bv, ln1, wv).view(S, H, E).transpose(0, 1)
        probs = torch.softmax(torch.bmm(q, k) * (1.0 / E ** 0.5), dim=-1)
        attn = torch.bmm(probs, v).transpose(0, 1).reshape(S, D)
        h = torch.addmm(bo, attn, wo) + x
        ln2 = F.layer_norm(h, (D,), ln2_g, ln2_b, 1e-5)
        f = F.gelu(torch.addmm(b1, ln2, w1), approximate="tanh")
        return torch.addmm(b2, f, w2) + h
    return encode


def torch_cnn(blobs):
    import torch
    import torch.nn.functional as F
    g = lambda name, *shape: torch.from_numpy(check_models.f32(blobs, name, shape).copy())
    # HWCF weights as PyTorch's OIHW.
    k1 = g("conv1_w", 3, 3, 1, 8).permute(3, 2, 0, 1).contiguous()
    k2 = g("conv2_w", 3, 3, 8, 16).permute(3, 2, 0, 1).contiguous()
    c1, c2, wd, bd = g("conv1_b", 8), g("conv2_b", 16), g("dense_w", 16, 10), g("dense_b", 10)

    def classify(x):  # NHWC in, as the sample takes it
        h = x.permute(0, 3, 1, 2)
        h = F.relu(F.conv2d(h, k1, c1))
        h = F.relu(F.conv2d(h, k2, c2))
        h = F.max_pool2d(h, 2).mean(dim=(2, 3))
        return torch.addmm(bd, h, wd)
    return classify


CASES = [
    Case("mlp batch 1", "mlp", "predict", (1, 784), (1, 10), "mlp_batch1", check_models.mlp_reference, torch_mlp,
         2000, ("upstream", 1.5)),
    Case("mlp batch 32", "mlp", "predict_batch32", (32, 784), (32, 10), "mlp_batch32", check_models.mlp_reference,
         torch_mlp, 200, ("upstream", 1.5)),
    Case("encoder block", "encoder_block", "encode", (128, 256), (128, 256), "encoder",
         check_models.encoder_reference, torch_encoder, 50, ("pytorch", 1.0)),
    # No upstream schedule for convolutions, and no bar: for comparison only.
    Case("cnn batch 1", "cnn", "classify", (1, 28, 28, 1), (1, 10), None, check_models.cnn_reference,
         torch_cnn, 1000, None),
]

# After the transform schedule: vector polynomials for tanh and exp (LLVM would call libm
# once per element), deallocation of the buffers one-shot bufferize allocates, and the
# standard conversions to the LLVM dialect.
UPSTREAM_PASSES = [
    "test-math-polynomial-approximation",
    "buffer-deallocation-pipeline",
    "convert-bufferization-to-memref",
    "canonicalize",
    "cse",
    "convert-vector-to-scf",
    "lower-affine",
    "convert-scf-to-cf",
    "expand-strided-metadata",
    "lower-affine",
    "convert-vector-to-llvm",
    "finalize-memref-to-llvm",
    "convert-math-to-llvm",
    "convert-arith-to-llvm",
    "convert-cf-to-llvm",
    "convert-func-to-llvm",
    "convert-index-to-llvm",
    "convert-ub-to-llvm",
    "reconcile-unrealized-casts",
]


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("FAILED: %s\n%s%s" % (" ".join(cmd), result.stdout, result.stderr[-4000:]))
    return result.stdout


def verify(engine, case, actual, expected):
    actual = np.asarray(actual, dtype=np.float64).reshape(expected.shape)
    error = np.abs(actual - expected)
    if not (error <= ATOL + RTOL * np.abs(expected)).all():  # NaN fails too
        sys.exit("%s on %s: wrong result, max abs error %.3g (rtol %g, atol %g)" % (
            engine, case.name, error.max(), RTOL, ATOL))
    return float(error.max())


def strata(case, x_path, expected, args, work, compiled):
    """Median seconds per call from benchmark-module (None when it is not built)."""
    bin_dir = os.path.join(args.build_dir, "bin")
    module = os.path.join(work, case.sample + ".smod")
    if case.sample not in compiled:
        run([os.path.join(bin_dir, "compile-module"), os.path.join(args.models, case.sample + ".mlir"), "-o", module])
        compiled.add(case.sample)
    flags = ["--module=" + module, "--function=" + case.function, "--input=@" + x_path, "--device=cpu-sync"]
    out_path = os.path.join(work, case.function + ".strata.npy")
    run([os.path.join(bin_dir, "run-module")] + flags + ["--output=@" + out_path])
    error = verify("strata", case, np.load(out_path), expected)
    bench = os.path.join(bin_dir, "benchmark-module")
    if not os.path.exists(bench):
        return None, error
    out = run([bench] + flags + ["--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
                                 "--benchmark_report_aggregates_only=true"])
    return benchmark_median(out), error


def benchmark_median(out):
    """Seconds per call: the median of benchmark-module's JSON output (--benchmark_format=json)."""
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            return b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
    sys.exit("benchmark-module printed no median:\n" + out)


def pytorch(case, blobs, x, expected, args):
    import torch
    torch.set_num_threads(1)
    model = case.torch_model(blobs)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        error = verify("pytorch", case, model(xt).numpy(), expected)
        for _ in range(max(1, case.calls // 10)):
            model(xt)
        seconds = []
        for _ in range(args.repetitions):
            t0 = time.perf_counter()
            for _ in range(case.calls):
                model(xt)
            seconds.append((time.perf_counter() - t0) / case.calls)
    return statistics.median(seconds), error


def upstream(case, x, expected, args, work):
    """Builds the driver module, lowers it, runs it; median seconds per call."""
    source = open(os.path.join(args.models, case.sample + ".mlir")).read()
    body, resources = source.split("{-#", 1)
    # Only the benchmarked function: the others would be compiled for nothing.
    functions = re.findall(r"^func\.func @(\w+)\(.*?^}\n", body, re.M | re.S)
    for name in functions:
        if name != case.function:
            body = re.sub(r"^func\.func @%s\(.*?^}\n" % name, "", body, flags=re.M | re.S)
    shape_text = lambda shape: "x".join(str(d) for d in shape) + "xf32"
    driver = string.Template(open(os.path.join(HERE, "upstream", "driver.mlir.in")).read()).substitute(
        function=case.function, calls=case.calls, repetitions=args.repetitions,
        input_type="tensor<%s>" % shape_text(case.input_shape),
        result_type="tensor<%s>" % shape_text(case.result_shape),
        result_memref_type="memref<%s>" % shape_text(case.result_shape))
    blob = '      bench_input: "0x04000000%s",\n' % x.tobytes().hex().upper()
    resources = re.sub(r"(builtin: \{\n)", lambda m: m.group(1) + blob, resources, count=1)
    path = os.path.join(work, case.function + ".upstream.mlir")
    with open(path, "w") as f:
        f.write(body + driver + "\n{-#" + resources)

    llvm_bin = os.path.join(args.llvm_dir, "bin")
    llvm_lib = os.path.join(args.llvm_dir, "lib")
    lowered = os.path.join(work, case.function + ".upstream.llvm.mlir")
    run([os.path.join(llvm_bin, "mlir-opt"), path,
         "--transform-preload-library=transform-library-paths=" + os.path.join(HERE, "upstream", "schedules.mlir"),
         "--transform-interpreter=entry-point=" + case.schedule] +
        ["--" + p for p in UPSTREAM_PASSES] + ["-o", lowered])
    out = run([os.path.join(llvm_bin, "mlir-runner"), "-O3", "-e", "main", "--entry-point-result=void",
               "--shared-libs=%s,%s" % (os.path.join(llvm_lib, "libmlir_c_runner_utils.so"),
                                        os.path.join(llvm_lib, "libmlir_runner_utils.so")), lowered])
    lines = out.split("\n")
    seconds = [float(line) for line in lines[:args.repetitions]]
    data = out[out.index("data =") + len("data ="):]
    result = np.array([float(v) for v in re.findall(r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)", data)])
    error = verify("upstream", case, result, expected)
    return statistics.median(seconds), error


def blas_library():
    """The BLAS that PyTorch's matmuls went to in this process (Debian's python3-torch calls
    whatever libblas.so.3 the alternatives system names: reference BLAS unless OpenBLAS is
    installed), for the header: it decides PyTorch's figures."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if re.search(r"lib(open)?blas", os.path.basename(path)):
                return os.path.realpath(path)
    return "none loaded"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", help="the generated sample models (default BUILD/samples/models)")
    parser.add_argument("--llvm-dir", default="/usr/lib/llvm-22")
    parser.add_argument("--repetitions", type=int, default=7)
    args = parser.parse_args()
    args.models = args.models or os.path.join(args.build_dir, "samples", "models")
    work = os.path.join(args.build_dir, "bench", "models")
    os.makedirs(work, exist_ok=True)

    import torch
    rng = np.random.default_rng(2026)
    rows = []
    compiled = set()
    for case in CASES:
        blobs = check_models.read_resources(os.path.join(args.models, case.sample + ".mlir"))
        x = rng.uniform(-1.0, 1.0, size=case.input_shape).astype(np.float32)
        x_path = os.path.join(work, case.function + ".in.npy")
        np.save(x_path, x)
        expected = case.reference(blobs, x)
        s, s_err = strata(case, x_path, expected, args, work, compiled)
        t, t_err = pytorch(case, blobs, x, expected, args)
        u, u_err = upstream(case, x, expected, args, work) if case.schedule else (None, 0.0)
        rows.append((case, s, t, u, max(s_err, t_err, u_err)))

    bench = os.path.join(args.build_dir, "bin", "benchmark-module")
    llvm_version = re.search(r"LLVM version (\S+)",
                             run([os.path.join(args.llvm_dir, "bin", "mlir-opt"), "--version"]))
    blas = blas_library()
    print(f"Sample models on 1 thread, microseconds per call, medians of {args.repetitions} repetitions")
    print("  strata:   cpu-sync, " +
          ("benchmark-module" if os.path.exists(bench) else "not timed: %s is not built" % bench))
    print(f"  pytorch:  {torch.__version__} eager, BLAS {blas}")
    if "/blas/" in blas:
        print("            (the reference BLAS: Debian's python3-torch runs on OpenBLAS only where "
              "libopenblas0-pthread is installed)")
    print(f"  upstream: mlir-opt + mlir-runner -O3 (LLVM {llvm_version.group(1) if llvm_version else '?'}), "
          "tiled and vectorized by upstream/schedules.mlir")
    print(f"{'model':<15}{'strata':>9}{'pytorch':>9}{'upstream':>10}{'strata/upstream':>17}{'strata/pytorch':>16}"
          f"   {'bar':<25}{'met':<5}{'max abs err':>11}")
    for case, s, t, u, err in rows:
        us = lambda v: f"{v * 1e6:>9.1f}" if v is not None else f"{'-':>9}"
        ratio = lambda b, w: f"{s / b:>{w}.2f}" if s is not None and b is not None else f"{'-':>{w}}"
        if case.bar:
            peer, limit = case.bar
            bar = "strata <= %.1fx %s" % (limit, peer)
            met = "-" if s is None else ("yes" if s / {"upstream": u, "pytorch": t}[peer] <= limit else "NO")
        else:
            bar, met = "-", "-"
        print(f"{case.name:<15}{us(s)}{us(t)}{us(u):>10}{ratio(u, 17)}{ratio(t, 16)}"
              f"   {bar:<25}{met:<5}{err:>11.1e}")


if __name__ == "__main__":
    main()
