#!/usr/bin/python3
"""Strata on an NVIDIA GPU (the cuda and vulkan drivers) against PyTorch CUDA on the same
GPU, in the same run: GEMM 4096^3 in f32, bf16 and f16 (cuBLAS through torch.matmul; bf16
and f16 on cuda only: SPIR-V has no bf16 here; each compiled with the tensor-core tiles' three
workgroup buffers filled by cp.async, the default, with four, with two, with one filled
through registers (--gpu-codegen-options=mma-stages=N), and in wide tiles of 128x256
(mma-wide-tiles) with three and four buffers, and for sm_90a on wgmma with three, four
and two buffers and in wide tiles, run on a GPU of compute capability 9.0), the sample models (PyTorch eager with the same
weights, as tests/benchmarks/model_bench.py builds them; on cuda also with graphs=0 and pipelined=0), and ResNet-18's convolutions at batch
1 and 8 (cuDNN through torch.nn.functional.conv2d, channels-last), each compiled twice: as
compile-module does by default (f32 convolutions in workgroup-memory tiles from 128 tiles on,
else one output element per invocation) and with --gpu-codegen-options=fma-tiles-from=1 (every
convolution in tiles), the figures that say where the threshold belongs.

The modules are compiled where the compiler is (the GPU machine has none):

  tests/benchmarks/gpu_bench.py --compile --bin build/bin --models build/samples/models --work WORK

then, on the GPU machine, with a runtime-only build (STRATA_BUILD_COMPILER=OFF):

  python3 tests/benchmarks/gpu_bench.py --bin BUILD/bin --models MODELS --work WORK

Strata: benchmark-module --device=cuda or vulkan (Google Benchmark repetitions; the median of the
real time, which includes the wait for the GPU). PyTorch: CUDA events around each call
after warm-up, median of 20. Before timing, the f32 GEMM's result for random inputs is
compared with torch.matmul in full f32 (TF32 off), and the bf16 and f16 GEMMs', for random
small integers (exact in both types and in the f32 sums), with the exact product, element by
element. Times in milliseconds; ratio = Strata / PyTorch.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
N = 4096
SAMPLES = ["mlp", "encoder_block", "cnn"]
# ResNet-18's convolutions on their padded inputs: (name, batch, input side, channels,
# filter side, output channels, stride, element type of input and filter). The output is f32.
CONVS = [("stem", 1, 230, 3, 7, 64, 2, "f32"), ("56", 1, 58, 64, 3, 64, 1, "f32"),
         ("28", 1, 30, 128, 3, 128, 1, "f32"), ("14", 1, 16, 256, 3, 256, 1, "f32"),
         ("7", 1, 9, 512, 3, 512, 1, "f32"), ("56", 8, 58, 64, 3, 64, 1, "f32"),
         ("14", 8, 16, 256, 3, 256, 1, "f32"), ("56", 1, 58, 64, 3, 64, 1, "bf16"),
         ("14", 8, 16, 256, 3, 256, 1, "bf16")]
CONV_VARIANTS = {"default": [], "tiles": ["--gpu-codegen-options=fma-tiles-from=1"]}


def conv_shapes(conv):
    name, n, side, c, k, f, stride, t = conv
    out = (side - k) // stride + 1
    return (n, side, side, c), (k, k, c, f), (n, out, out, f)


def conv_function(conv):
    return "conv_%s_b%d_%s" % (conv[0], conv[1], conv[7])


def conv_source():
    """One function per layer: a fill, the convolution, its output returned."""
    lines = []
    for conv in CONVS:
        x, w, o = conv_shapes(conv)
        t = conv[7]
        xt = "tensor<%sx%s>" % ("x".join(map(str, x)), t)
        wt = "tensor<%sx%s>" % ("x".join(map(str, w)), t)
        ot = "tensor<%sxf32>" % "x".join(map(str, o))
        lines += ["func.func @%s(%%x: %s, %%w: %s) -> %s {" % (conv_function(conv), xt, wt, ot),
                  "  %z = arith.constant 0.0 : f32",
                  "  %e = tensor.empty() : " + ot,
                  "  %%o = linalg.fill ins(%%z : f32) outs(%%e : %s) -> %s" % (ot, ot),
                  "  %%r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, "
                  "strides = dense<%d> : tensor<2xi64>} ins(%%x, %%w : %s, %s) outs(%%o : %s) -> %s"
                  % (conv[6], xt, wt, ot, ot),
                  "  return %%r : %s" % ot, "}"]
    return "\n".join(lines) + "\n"


class Failed(Exception):
    pass


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise Failed("%s failed (%d):\n%s" % (" ".join(cmd), result.returncode, result.stderr[-3000:]))
    return result.stdout


DRIVERS = ["cuda", "vulkan"]


def module(args, name, driver="cuda"):
    # The name tests/e2e/check_models.py --target=cuda (or vulkan) gives its modules:
    # one work folder serves both.
    return os.path.join(args.work, "%s.%s.smod" % (name, driver))


# The 16-bit GEMMs (on the tensor cores), on cuda only, each compiled ten times: by default
# (128x128 tiles, workgroup memory filled by cp.async into three buffers), with four buffers
# (in dynamic shared memory), with two, with one filled through registers (mma-stages=1), and
# in 128x256 tiles of eight warps (mma-wide-tiles) with three and four buffers; and for
# sm_90a alone, on wgmma with three, four and two buffers and in wide tiles (run only on a GPU of compute
# capability 9.0): the figures that say which to keep.
HALVES = ("bf16", "f16")
MMA_VARIANTS = {"": [], "_stages4": ["--gpu-codegen-options=mma-stages=4"],
                "_stages2": ["--gpu-codegen-options=mma-stages=2"],
                "_stages1": ["--gpu-codegen-options=mma-stages=1"],
                "_wide": ["--gpu-codegen-options=mma-wide-tiles=1"],
                "_wide4": ["--gpu-codegen-options=mma-wide-tiles=1 mma-stages=4"],
                "_wgmma": ["--cuda-arch=sm_90a"],
                "_wgmma4": ["--cuda-arch=sm_90a", "--gpu-codegen-options=mma-stages=4"],
                "_wgmma2": ["--cuda-arch=sm_90a", "--gpu-codegen-options=mma-stages=2"],
                "_wgmma_wide": ["--cuda-arch=sm_90a", "--gpu-codegen-options=mma-wide-tiles=1"]}


def mma_variants():
    """The variants this GPU runs: the sm_90a ones on compute capability 9.0 alone."""
    import torch
    sm90 = torch.cuda.get_device_capability() == (9, 0)
    return [v for v in MMA_VARIANTS if sm90 or not v.startswith("_wgmma")]


def has_halves(driver):
    return driver == "cuda"


def compile_modules(args):
    os.makedirs(args.work, exist_ok=True)
    sources = [os.path.join(HERE, "gpu", "gemm_%s.mlir" % t) for t in ("f32",) + HALVES]
    sources += [os.path.join(args.models, s + ".mlir") for s in args.samples]
    convs = os.path.join(args.work, "convs.mlir")
    with open(convs, "w") as f:
        f.write(conv_source())
    for driver in args.drivers:
        for variant, flags in CONV_VARIANTS.items():
            run([os.path.join(args.bin, "compile-module"), convs, "--target=" + driver, "-o",
                 module(args, "convs_" + variant, driver)] + flags)
            print("compiled ResNet-18's convolutions (%s) for %s" % (variant, driver))
        for source in sources:
            name = os.path.splitext(os.path.basename(source))[0]
            half = name in ("gemm_" + t for t in HALVES)
            if half and not has_halves(driver):
                continue
            for suffix, flags in (MMA_VARIANTS.items() if half else [("", [])]):
                run([os.path.join(args.bin, "compile-module"), source, "--target=" + driver,
                     "-o", module(args, name + suffix, driver)] + flags)
                print("compiled", name + suffix, "for", driver)


def strata_ms(args, module, function, inputs, driver):
    """function None: the module's only export."""
    out = run([os.path.join(args.bin, "benchmark-module"), "--module=" + module]
              + ([] if function is None else ["--function=" + function])
              + ["--device=" + driver, "--benchmark_repetitions=5", "--benchmark_format=json"]
              + ["--input=" + i for i in inputs])
    report = json.loads(out)
    times = [b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
             for b in report["benchmarks"] if b.get("run_type") == "iteration"]
    return statistics.median(times)


def torch_ms(call, repetitions=20):
    import torch
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repetitions):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def row(name, ours, theirs, unit="ms"):
    print("%-24s %10.3f %10.3f %8.2f" % (name, ours, theirs, ours / theirs), flush=True)


REAL_SUFFIX = ".cuda_vulkan.smod"


def real_models(args, drivers):
    """The real models gpu_check.sh carries (tests/models/check_models.py's exports, compiled
    --target=cuda,vulkan as <stem>.cuda_vulkan.smod beside their batch-1 inputs): Strata on each
    driver against PyTorch eager on the GPU with the same seeded weights and inputs
    (tests/models/zoo.py, which needs torchvision and transformers; without them the PyTorch
    column says why)."""
    import numpy as np
    import torch
    stems = sorted(f[:-len(REAL_SUFFIX)] for f in os.listdir(args.real_models) if f.endswith(REAL_SUFFIX))
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    for stem in stems:
        # check_models.py's stem: family-way[-size][-dynamic].
        parts = stem.split("-")
        size = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else None
        inputs = sorted(os.path.join(args.real_models, f) for f in os.listdir(args.real_models)
                        if f.startswith(stem + ".b1.in") and f.endswith(".npy"))
        theirs, why = None, ""
        try:
            import zoo
            family = zoo.FAMILIES[parts[0]]
            model = family.build(size or family.sizes[0]).cuda().eval()
            tensors = [torch.from_numpy(np.load(p)).cuda() for p in inputs]
            with torch.no_grad():
                theirs = torch_ms(lambda: model(*tensors))
        except Exception as error:  # ImportError for torchvision or transformers, mostly
            why = "%s: %s" % (type(error).__name__, str(error).splitlines()[0][:60])
        for driver in drivers:
            ours = strata_ms(args, os.path.join(args.real_models, stem + REAL_SUFFIX), None,
                             ["@" + p for p in inputs], driver)
            if theirs is None:
                print("%-24s %10.3f %10s   (PyTorch: %s)" % ("%s %s" % (stem, driver), ours, "-", why),
                      flush=True)
            else:
                row("%s %s" % (stem, driver), ours, theirs)


def check_gemms(args, driver):
    import numpy as np
    import torch
    rng = np.random.default_rng(2026)
    a = rng.uniform(-1, 1, (N, N)).astype(np.float32)
    b = rng.uniform(-1, 1, (N, N)).astype(np.float32)
    paths = [os.path.join(args.work, "gemm.%s.npy" % n) for n in ("a", "b", "out")]
    np.save(paths[0], a)
    np.save(paths[1], b)
    run([os.path.join(args.bin, "run-module"), "--module=" + module(args, "gemm_f32", driver),
         "--device=" + driver, "--input=@" + paths[0], "--input=@" + paths[1], "--output=@" + paths[2]])
    torch.backends.cuda.matmul.allow_tf32 = False
    want = (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu().numpy()
    error = float(np.abs(np.load(paths[2]) - want).max())
    print("%s gemm f32 %d^3: max abs error %.3g against torch.matmul (f32)" % (driver, N, error))
    if not error < 1e-2:
        raise Failed("%s gemm f32: wrong result" % driver)
    if not has_halves(driver):
        return
    # Small integers: every 16-bit operand and every f32 sum is exact, so any element
    # taken from the wrong lane, row or column of a tensor-core fragment shows.
    ints = [rng.integers(-4, 5, (N, N)) for _ in range(2)]
    want = (torch.from_numpy(ints[0]).cuda().double() @ torch.from_numpy(ints[1]).cuda().double()).cpu().numpy()
    for t in HALVES:
        raw = [os.path.join(args.work, "gemm.%s.%s" % (n, t)) for n in ("a", "b")]
        for values, path in zip(ints, raw):
            bits = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16) if t == "bf16" \
                else values.astype(np.float16).view(np.uint16)
            bits.tofile(path)
        for suffix in mma_variants():
            run([os.path.join(args.bin, "run-module"),
                 "--module=" + module(args, "gemm_" + t + suffix, driver), "--device=" + driver]
                + ["--input=%dx%dx%s=@%s" % (N, N, t, path) for path in raw]
                + ["--output=@" + paths[2]])
            out = np.load(paths[2])
            wrong = int((out != want).sum())
            if wrong:
                where = np.unravel_index(np.argmax(out != want), out.shape)
                raise Failed("gemm %s%s: %d of %d elements wrong; C[%d, %d] is %g, expected %g" % (
                    t, suffix, wrong, out.size, where[0], where[1], out[where], want[where]))
            print("%s gemm %s%s %d^3: every element exact (random integers in [-4, 4])" % (
                driver, t, suffix, N))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--compile", action="store_true", help="compile the modules into --work, then stop")
    parser.add_argument("--models", default=os.path.join(ROOT, "build", "samples", "models"),
                        help="the sample models as the build generates them (PyTorch reads "
                             "their weights)")
    parser.add_argument("--samples", default=",".join(SAMPLES),
                        help="the sample models to compile and time (default: %(default)s; "
                             "empty: the GEMMs alone)")
    parser.add_argument("--drivers", default=",".join(DRIVERS),
                        help="the drivers to compile for and time (default: cuda,vulkan)")
    parser.add_argument("--real-models", default="",
                        help="a folder of real-model modules (gpu_check.sh's real-models) to time")
    args = parser.parse_args()
    args.drivers = args.drivers.split(",")
    args.samples = [s for s in args.samples.split(",") if s]
    if args.compile:
        return compile_modules(args)
    # A driver whose GEMM check fails is reported and left out of the timings.
    failures = []
    drivers = []
    for driver in args.drivers:
        try:
            check_gemms(args, driver)
            drivers.append(driver)
        except Failed as failure:
            print("FAILED:", failure, flush=True)
            failures.append(driver)
    args.drivers = drivers

    import torch
    sys.path.insert(0, HERE)
    import model_bench
    print("GPU: %s; PyTorch %s" % (torch.cuda.get_device_name(), torch.__version__))
    print("%-24s %10s %10s %8s" % ("ms per call", "strata", "pytorch", "ratio"))
    torch.backends.cuda.matmul.allow_tf32 = False
    for t, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16), ("f16", torch.float16)):
        a = torch.rand(N, N, device="cuda", dtype=dtype)
        b = torch.rand(N, N, device="cuda", dtype=dtype)
        for driver in args.drivers:
            if t in HALVES and not has_halves(driver):
                continue
            for suffix in (mma_variants() if t in HALVES else [""]):
                ours = strata_ms(args, module(args, "gemm_" + t + suffix, driver), "gemm",
                                 ["%dx%dx%s=0.5" % (N, N, t)] * 2, driver)
                theirs = torch_ms(lambda: a @ b)
                row("gemm %s%s %d^3 %s" % (t, suffix, N, driver), ours, theirs)
                print("%-24s %10.1f %10.1f   TFLOP/s" % ("", 2 * N ** 3 / ours / 1e9,
                                                         2 * N ** 3 / theirs / 1e9))

    # The sample models: PyTorch eager on the GPU with the weights of the .mlir files.
    from_numpy = torch.from_numpy
    torch.from_numpy = lambda array: from_numpy(array).cuda()
    for case in (c for c in model_bench.CASES if c.sample in args.samples):
        blobs = model_bench.check_models.read_resources(os.path.join(args.models, case.sample + ".mlir"))
        model = case.torch_model(blobs)
        x = torch.rand(*case.input_shape, device="cuda")
        with torch.no_grad():
            theirs = torch_ms(lambda: model(x))
        shape = "x".join(str(d) for d in case.input_shape) + "xf32=0.5"
        for driver in args.drivers:
            ours = strata_ms(args, module(args, case.sample, driver), case.function, [shape], driver)
            row("%s %s" % (case.name, driver), ours, theirs)
            if driver == "cuda":
                # The same calls with CUDA graphs off, and with every submission waited for
                # before the next: what graphs and the pipelined queue bring.
                for spec in ("cuda?graphs=0", "cuda?pipelined=0"):
                    plain = strata_ms(args, module(args, case.sample, driver), case.function, [shape], spec)
                    row("%s %s" % (case.name, spec), plain, theirs)
    torch.from_numpy = from_numpy
    if args.real_models:
        real_models(args, args.drivers)

    # ResNet-18's convolutions: Strata's two builds against cuDNN (TF32 off for f32).
    torch.backends.cudnn.allow_tf32 = False
    print("%-24s %10s %10s %10s %8s" % ("conv, ms per call", "default", "tiles", "pytorch",
                                         "best/pt"))
    for conv in CONVS:
        x, w, o = conv_shapes(conv)
        dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[conv[7]]
        tx = torch.rand(x[0], x[3], x[1], x[2], device="cuda", dtype=dtype).to(
            memory_format=torch.channels_last)
        tw = torch.rand(w[3], w[2], w[0], w[1], device="cuda", dtype=dtype).to(
            memory_format=torch.channels_last)
        with torch.no_grad():
            theirs = torch_ms(lambda: torch.nn.functional.conv2d(tx, tw, stride=conv[6]))
        inputs = ["%sx%s=0.5" % ("x".join(map(str, shape)), conv[7]) for shape in (x, w)]
        for driver in args.drivers:
            if conv[7] in HALVES and not has_halves(driver):
                continue
            ours = [strata_ms(args, module(args, "convs_" + variant, driver), conv_function(conv),
                              inputs, driver) for variant in CONV_VARIANTS]
            print("%-24s %10.3f %10.3f %10.3f %8.2f" % (
                "%s %s" % (conv_function(conv), driver), ours[0], ours[1], theirs,
                min(ours) / theirs), flush=True)
    if failures:
        sys.exit("failed: " + ", ".join(failures))


if __name__ == "__main__":
    main()
