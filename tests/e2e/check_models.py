#!/usr/bin/env python3
"""End-to-end checks of the sample models against NumPy.

    check_models.py --bin=DIR --models=DIR --work=DIR [--target=cpu,vulkan,cuda,rocm]
                    [--compile-only | --run-only]
                    [--devices=vulkan,cpu-sync] MODEL...

For each model: compile it with compile-module (for --target, default cpu),
run each entry point with run-module on each of --devices (default cpu-sync
and cpu-task; random inputs, several sizes for dynamic ones), and compare the results with the same model computed in NumPy (float64)
from the weights read back out of the .mlir file (its dense_resource blobs).
Prints one line per check; exits 1 on the first mismatch.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

RTOL = 1e-4
ATOL = 1e-4
# cpu-task also with every command buffer run as it is recorded (stream=always;
# by default it streams only where that has been faster).
DEVICES = ["cpu-sync", "cpu-task", "cpu-task?threads=2&stream=always"]


def read_resources(path):
    """The dense_resource blobs of an .mlir file, as raw bytes by name."""
    text = open(path).read()
    if "dialect_resources" not in text:
        return {}
    section = text[text.index("dialect_resources"):]
    blobs = {}
    for name, hexdata in re.findall(r'(\w+): "0x([0-9A-Fa-f]+)"', section):
        data = bytes.fromhex(hexdata)
        blobs[name] = data[4:]  # after the alignment word
    return blobs


def f32(blobs, name, shape):
    return np.frombuffer(blobs[name], dtype="<f4").reshape(shape)


def mlp_reference(blobs, x):
    sizes = [784, 512, 512, 10]
    h = x.astype(np.float64)
    for i in range(3):
        w = f32(blobs, "w%d" % (i + 1), (sizes[i], sizes[i + 1])).astype(np.float64)
        b = f32(blobs, "b%d" % (i + 1), (sizes[i + 1],)).astype(np.float64)
        h = h @ w + b
        if i < 2:
            h = np.maximum(h, 0.0)
    return h


def conv3x3(x, w, b):
    """Valid 3x3 convolution, NHWC input and HWCF weights, plus bias."""
    n, h, wd, _ = x.shape
    out = np.zeros((n, h - 2, wd - 2, w.shape[3]))
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("nhwc,cf->nhwf", x[:, dy:dy + h - 2, dx:dx + wd - 2, :], w[dy, dx])
    return out + b


def cnn_reference(blobs, x):
    g = lambda name, shape: f32(blobs, name, shape).astype(np.float64)
    h = np.maximum(conv3x3(x.astype(np.float64), g("conv1_w", (3, 3, 1, 8)), g("conv1_b", (8,))), 0)
    h = np.maximum(conv3x3(h, g("conv2_w", (3, 3, 8, 16)), g("conv2_b", (16,))), 0)
    n = h.shape[0]
    h = h.reshape(n, 12, 2, 12, 2, 16).max(axis=(2, 4))
    h = h.mean(axis=(1, 2))
    return h @ g("dense_w", (16, 10)) + g("dense_b", (10,))


def layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


def encoder_reference(blobs, x):
    g = lambda name, *shape: f32(blobs, name, shape).astype(np.float64)
    S, D, H, E, F = 128, 256, 4, 64, 1024
    x = x.astype(np.float64)
    ln1 = layer_norm(x, g("ln1_g", D), g("ln1_b", D))
    heads = lambda t: t.reshape(S, H, E).transpose(1, 0, 2)
    q = heads(ln1 @ g("wq", D, D) + g("bq", D))
    k = heads(ln1 @ g("wk", D, D) + g("bk", D))
    v = heads(ln1 @ g("wv", D, D) + g("bv", D))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(E)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs = scores / scores.sum(axis=-1, keepdims=True)
    attn = (probs @ v).transpose(1, 0, 2).reshape(S, D)
    h = x + attn @ g("wo", D, D) + g("bo", D)
    ln2 = layer_norm(h, g("ln2_g", D), g("ln2_b", D))
    f = ln2 @ g("w1", D, F) + g("b1", F)
    f = 0.5 * f * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (f + 0.044715 * f ** 3)))
    return h + f @ g("w2", F, D) + g("b2", D)


class Within:
    """An expected scalar result in [low, high] (low == high: exactly that)."""

    def __init__(self, low, high):
        self.low, self.high = low, high


def sqrt_reference(blobs, a):
    # The roots to within the model's stopping rule (a relative residual below
    # 1e-6, so a relative error below about 5e-7), and an iteration count that
    # Newton's quadratic convergence from max(a, 1) keeps under 20 for inputs
    # up to 1e4 (a cap of 100 would mean it never converged).
    return [np.sqrt(a.astype(np.float64)), Within(1, 20)]


sqrt_reference.rtol, sqrt_reference.atol = 2e-6, 0.0


def positive(shape, rng):
    """Inputs for sqrt: positive, spread over seven orders of magnitude."""
    return (10.0 ** rng.uniform(-3.0, 4.0, size=shape)).astype(np.float32)


def classify_reference(blobs, x):
    scores = mlp_reference(blobs, x)
    best = int(np.argmax(scores[0]))
    return [scores, Within(best, best)]


# model -> list of (function, input shapes, reference(blobs, *inputs)[, input maker])
CASES = {
    "mlp": [
        ("predict", [(1, 784)], mlp_reference),
        ("predict_batch32", [(32, 784)], mlp_reference),
        ("classify", [(1, 784)], classify_reference),
    ],
    "mlp_dynamic": [
        ("predict", [(n, 784)], mlp_reference) for n in (1, 7, 32, 100)
    ],
    "mlp_tosa": [
        ("predict", [(1, 784)], mlp_reference),
        ("predict_batch32", [(32, 784)], mlp_reference),
    ],
    "cnn": [
        ("classify", [(1, 28, 28, 1)], cnn_reference),
        ("classify_batch4", [(4, 28, 28, 1)], cnn_reference),
    ],
    "encoder_block": [
        ("encode", [(128, 256)], encoder_reference),
    ],
    "newton": [
        ("sqrt", [(n,)], sqrt_reference, positive) for n in (1, 7, 13, 1000)
    ],
}


def check(name, index, actual, expected, rtol, atol):
    """Compares one result; returns its max abs error or exits on a mismatch."""
    label = "%s result %d" % (name, index)
    if isinstance(expected, Within):
        value = actual.item() if actual.ndim == 0 else None
        if value is None or not (expected.low <= value <= expected.high):
            print("FAIL %s: got %r, expected a scalar in [%g, %g]" % (
                label, actual, expected.low, expected.high))
            sys.exit(1)
        return 0.0
    if actual.shape != expected.shape or actual.dtype != np.float32:
        print("FAIL %s: got %s %s, expected %s float32" % (
            label, actual.shape, actual.dtype, expected.shape))
        sys.exit(1)
    error = np.abs(actual - expected)
    bound = atol + rtol * np.abs(expected)
    if (error > bound).any():
        where = np.unravel_index(np.argmax(error - bound), error.shape)
        print("FAIL %s: element %s is %r, expected %r (rtol %g, atol %g)" % (
            label, list(where), float(actual[where]), float(expected[where]), rtol, atol))
        sys.exit(1)
    return float(error.max())


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write("FAILED: %s\n%s%s" % (" ".join(cmd), result.stdout, result.stderr))
        sys.exit(1)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--devices", default=",".join(DEVICES))
    parser.add_argument("--compile-only", action="store_true",
                        help="compile each model (for a target with no device here) without running it")
    parser.add_argument("--run-only", action="store_true",
                        help="run the modules an earlier --compile-only left in --work (on a machine "
                             "with the device and no compiler)")
    parser.add_argument("model", nargs="+")
    args = parser.parse_args()
    devices = [] if args.compile_only else args.devices.split(",")
    suffix = "" if args.target == "cpu" else "." + args.target.replace(",", "_")
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(2026)
    checks = 0
    for model in args.model:
        source = os.path.join(args.models, model + ".mlir")
        module = os.path.join(args.work, model + suffix + ".smod")
        executables = os.path.join(args.work, model + suffix + ".executables")
        if not args.run_only:
            run([os.path.join(args.bin, "compile-module"), source, "-o", module,
                 "--target=" + args.target, "--dump-executables=" + executables])
        if "cuda" in args.target.split(",") and not args.run_only:
            # ptxas, where found, made a cubin of each PTX image.
            print("ok %s: compiles for cuda%s" % (model, " (ptxas accepts every image)" if os.path.exists(
                os.path.join(executables, "kernels.sm_90.cubin")) else " (no ptxas: PTX unchecked)"))
        if "rocm" in args.target.split(",") and not args.run_only:
            # Every code object reads back (comgr, LLVM) as the metadata says.
            run([os.path.join(args.bin, "rocm-code-objects"), module])
            print("ok %s: its ROCm code objects match their metadata" % model)
        if "vulkan" in args.target.split(",") and not args.run_only:
            # Every SPIR-V kernel must validate for the Vulkan 1.3 environment.
            run(["spirv-val", "--target-env", "vulkan1.3",
                 os.path.join(executables, "kernels.vulkan-spirv.spv")])
            print("ok %s: spirv-val accepts its SPIR-V" % model)
        blobs = read_resources(source)
        for case in CASES[model]:
            function, shapes, reference = case[:3]
            make = case[3] if len(case) > 3 else lambda shape, rng: rng.uniform(
                -1.0, 1.0, size=shape).astype(np.float32)
            inputs = []
            for i, shape in enumerate(shapes):
                x = make(shape, rng)
                path = os.path.join(args.work, "%s.%s.in%d.npy" % (model, function, i))
                np.save(path, x)
                inputs.append((path, x))
            expected = reference(blobs, *[x for _, x in inputs])
            if not isinstance(expected, list):
                expected = [expected]
            rtol = getattr(reference, "rtol", RTOL)
            atol = getattr(reference, "atol", ATOL)
            shape_text = "x".join(str(d) for d in shapes[0])
            for device in devices:
                cmd = [os.path.join(args.bin, "run-module"), "--module=" + module,
                       "--function=" + function, "--device=" + device]
                cmd += ["--input=@" + path for path, _ in inputs]
                outs = [os.path.join(args.work, "%s.%s.%s.out%d.npy" % (model, function, device, i))
                        for i in range(len(expected))]
                cmd += ["--output=@" + out for out in outs]
                run(cmd)
                name = "%s.%s(%s) on %s" % (model, function, shape_text, device)
                errors = [check(name, i, np.load(out), want, rtol, atol)
                          for i, (out, want) in enumerate(zip(outs, expected))]
                print("ok %s: max abs error %.3g" % (name, max(errors)))
                checks += 1
    print("%d checks passed" % checks)


if __name__ == "__main__":
    main()
