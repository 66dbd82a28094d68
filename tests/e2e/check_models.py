#!/usr/bin/env python3
"""End-to-end checks of the sample models against NumPy.

    check_models.py --bin=DIR --models=DIR --work=DIR MODEL...

For each model: compile it with compile-module, run each entry point with
run-module on cpu-sync and cpu-task (random inputs, several batch sizes for
dynamic ones), and compare the results with the same model computed in NumPy
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
DEVICES = ["cpu-sync", "cpu-task"]


def read_resources(path):
    """The dense_resource blobs of an .mlir file, as raw bytes by name."""
    text = open(path).read()
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


# model -> list of (function, input shapes, reference(blobs, *inputs))
CASES = {
    "mlp": [
        ("predict", [(1, 784)], mlp_reference),
        ("predict_batch32", [(32, 784)], mlp_reference),
    ],
    "mlp_dynamic": [
        ("predict", [(n, 784)], mlp_reference) for n in (1, 7, 32, 100)
    ],
}


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
    parser.add_argument("model", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(2026)
    checks = 0
    for model in args.model:
        source = os.path.join(args.models, model + ".mlir")
        module = os.path.join(args.work, model + ".smod")
        run([os.path.join(args.bin, "compile-module"), source, "-o", module])
        blobs = read_resources(source)
        for function, shapes, reference in CASES[model]:
            inputs = []
            for i, shape in enumerate(shapes):
                x = rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)
                path = os.path.join(args.work, "%s.%s.in%d.npy" % (model, function, i))
                np.save(path, x)
                inputs.append((path, x))
            expected = reference(blobs, *[x for _, x in inputs])
            for device in DEVICES:
                out = os.path.join(args.work, "%s.%s.%s.out.npy" % (model, function, device))
                cmd = [os.path.join(args.bin, "run-module"), "--module=" + module,
                       "--function=" + function, "--device=" + device]
                cmd += ["--input=@" + path for path, _ in inputs]
                cmd += ["--output=@" + out]
                run(cmd)
                actual = np.load(out)
                shape_text = "x".join(str(d) for d in shapes[0])
                if actual.shape != expected.shape or actual.dtype != np.float32:
                    print("FAIL %s.%s(%s) on %s: got %s %s, expected %s float32" % (
                        model, function, shape_text, device, actual.shape, actual.dtype, expected.shape))
                    sys.exit(1)
                error = np.abs(actual - expected)
                bound = ATOL + RTOL * np.abs(expected)
                if (error > bound).any():
                    index = np.unravel_index(np.argmax(error - bound), error.shape)
                    print("FAIL %s.%s(%s) on %s: element %s is %r, expected %r (rtol %g, atol %g)" % (
                        model, function, shape_text, device, list(index), float(actual[index]),
                        float(expected[index]), RTOL, ATOL))
                    sys.exit(1)
                print("ok %s.%s(%s) on %s: max abs error %.3g" % (
                    model, function, shape_text, device, error.max()))
                checks += 1
    print("%d checks passed" % checks)


if __name__ == "__main__":
    main()
