#!/usr/bin/env python3
"""The importers' own checks: what they produce, what they do with bad input.

    build/venv/bin/python check_importers.py --bin=DIR --work=DIR

Run with build/venv's Python (tools/dev/setup-python.sh). Checks:

- strata-import-onnx, with torch made unimportable: a small ONNX model built
  with onnx.helper imports, compiles and runs on both CPU drivers against
  NumPy; a missing file, a folder, a text file, an empty file, an op torch-mlir
  cannot lower (onnx.DFT) and one of a domain it does not know each end with
  one line on stderr naming the problem, status 1 and no traceback;
- strata-import-torch: --input-shape, --dynamic-batch (the signature says
  tensor<?x...>) and --tosa exports compile and run against PyTorch; bad
  MODULE:FACTORY targets, a failing factory, a model without example inputs,
  a bad --input-shape, --dynamic-batch on a model that fixes its batch and an
  op torch-mlir cannot lower (torch.special.zeta) are one line and status 1;
- the cumsum decomposition against torch.cumsum (static and dynamic lengths,
  float, int and bool), and a model with a cumsum exported without tm_tensor,
  compiled and run against PyTorch at several batch sizes (a cumsum along the
  dynamic batch dimension too).

One line per check; exits 1 on any failure, listing them, after
`N passed, N failed`.
"""
import argparse
import os
import subprocess
import sys
import textwrap

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IMPORT_DIR = os.path.join(ROOT, "tools", "import")
sys.path.insert(0, IMPORT_DIR)
TORCH_TOOL = os.path.join(IMPORT_DIR, "strata-import-torch")
ONNX_TOOL = os.path.join(IMPORT_DIR, "strata-import-onnx")
WITHOUT_TORCH = ("import runpy, sys; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
                 "runpy.run_path(sys.argv[0], run_name='__main__')")
DEVICES = ["cpu-sync", "cpu-task"]

# A small PyTorch model file for strata-import-torch, written into --work.
MODELS_PY = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return self.fc(h)

def net():
    torch.manual_seed(0)
    return Net()

def net_with_inputs():
    return net(), (torch.randn(2, 3, 8, 8),)

class Prefix(torch.nn.Module):
    # Along the sequence (static length) and along the batch (dynamic).
    def forward(self, x, mask):
        return torch.cumsum(x, 1) + torch.cumsum(mask, -1).to(x.dtype) + torch.cumsum(x, 0)

def prefix():
    return Prefix(), (torch.randn(2, 11), torch.ones(2, 11, dtype=torch.int64))

class Zeta(torch.nn.Module):
    def forward(self, x):
        return torch.special.zeta(x, x)

def zeta():
    return Zeta(), (torch.randn(4, 8),)

class FixedBatch(torch.nn.Module):
    def forward(self, x):
        return x.reshape(2, -1) * 2

def fixed_batch():
    return FixedBatch(), (torch.randn(2, 8),)

def broken():
    raise RuntimeError("no weights here")

def not_a_model():
    return 42
'''


class Checks:
    def __init__(self, args):
        self.args, self.passed, self.failures = args, 0, []

    def ok(self, line):
        self.passed += 1
        print("ok   " + line, flush=True)

    def fail(self, what, why):
        self.failures.append("%s: %s" % (what, why))
        print("FAIL %s: %s" % (what, why), flush=True)

    def work(self, name):
        return os.path.join(self.args.work, name)

    def tool_error(self, label, cmd, expected):
        """cmd must end with status 1 and exactly one stderr line containing expected."""
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=self.args.work)
        lines = result.stderr.strip().splitlines()
        tool = "strata-import-onnx" if ONNX_TOOL in cmd else "strata-import-torch"
        if result.returncode != 1:
            self.fail(label, "status %d, expected 1; stderr: %s" % (
                result.returncode, result.stderr[-500:]))
        elif "Traceback" in result.stderr or len(lines) != 1:
            self.fail(label, "expected one line on stderr, got %d:\n%s" % (
                len(lines), result.stderr[-2000:]))
        elif not lines[0].startswith(tool + ": ") or expected not in lines[0]:
            self.fail(label, "expected '%s: ...%s...', got: %s" % (tool, expected, lines[0]))
        else:
            self.ok("%s: %s" % (label, lines[0]))

    def tool(self, label, cmd):
        """Runs an importer that must succeed; returns its stdout or None."""
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=self.args.work)
        if result.returncode != 0:
            self.fail(label, "status %d: %s" % (
                result.returncode, (result.stderr or result.stdout)[-1000:]))
            return None
        return result.stdout

    def compile_and_run(self, label, mlir, inputs, expected, rtol=1e-4, atol=1e-5):
        """Compiles mlir, runs main on every device with each input set, compares."""
        module = mlir[:-len(".mlir")] + ".smod"
        result = subprocess.run([os.path.join(self.args.bin, "compile-module"), mlir, "-o", module],
                                capture_output=True, text=True)
        if result.returncode != 0:
            self.fail(label + " compile", (result.stderr or result.stdout).strip()[:2000])
            return
        for index, (arrays, want) in enumerate(zip(inputs, expected)):
            paths = []
            for i, x in enumerate(arrays):
                paths.append(self.work("%s.%d.in%d.npy" % (os.path.basename(module), index, i)))
                np.save(paths[-1], x)
            for device in DEVICES:
                out = self.work("%s.%d.%s.out.npy" % (os.path.basename(module), index, device))
                cmd = [os.path.join(self.args.bin, "run-module"), "--module=" + module,
                       "--function=main", "--device=" + device, "--output=@" + out]
                cmd += ["--input=@" + p for p in paths]
                name = "%s %s on %s" % (label, "x".join(map(str, arrays[0].shape)), device)
                result = subprocess.run(cmd, capture_output=True, text=True)
                if result.returncode != 0:
                    self.fail(name, (result.stderr or result.stdout).strip()[:1000])
                    continue
                got = np.load(out)
                if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
                    error = (np.abs(got - want).max() if got.shape == want.shape
                             else "shape %s" % (got.shape,))
                    self.fail(name, "differs from the reference (max abs error %s)" % error)
                else:
                    self.ok("%s: max abs error %.3g" % (name, float(np.abs(got - want).max())))


def onnx_checks(c):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    py = sys.executable
    onnx_cmd = [py, "-c", WITHOUT_TORCH, ONNX_TOOL]

    # A small model: y = relu(x @ w + b) then a softmax, with a dynamic batch.
    rng = np.random.default_rng(7)
    w = rng.standard_normal((6, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"]),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("Softmax", ["r"], ["y"], axis=-1)],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, c.work("small.onnx"))
    out = c.tool("strata-import-onnx small.onnx (torch unimportable)",
                 onnx_cmd + ["small.onnx", "-o", "small.mlir"])
    if out is not None:
        text = open(c.work("small.mlir")).read()
        body = text.split("{-#")[0]
        if "func.func @main(%arg0: tensor<?x6xf32>)" not in body or "torch." in body:
            c.fail("strata-import-onnx small.onnx", "unexpected output: " + text[:300])
        else:
            c.ok("strata-import-onnx small.onnx: " + out.strip())

            def reference(x):
                r = np.maximum(x @ w + b, 0)
                e = np.exp(r - r.max(-1, keepdims=True))
                return e / e.sum(-1, keepdims=True)
            xs = [rng.standard_normal((n, 6)).astype(np.float32) for n in (1, 5)]
            c.compile_and_run("onnx small", c.work("small.mlir"), [[x] for x in xs],
                              [reference(x) for x in xs])

    # Bad input.
    with open(c.work("notes.onnx"), "w") as f:
        f.write("these are notes, not a model\n")
    open(c.work("empty.onnx"), "w").close()

    def op_model(name, op, domain=""):
        node = helper.make_node(op, ["x"], ["y"], domain=domain)
        opsets = [helper.make_opsetid("", 17)]
        if domain:
            opsets.append(helper.make_opsetid(domain, 1))
        graph = helper.make_graph(
            [node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])])
        onnx.save(helper.make_model(graph, opset_imports=opsets), c.work(name + ".onnx"))
    op_model("dft", "DFT")
    op_model("custom", "Frobnicate", "com.example")
    cases = [
        ("a missing file", "missing.onnx", "missing.onnx: no such file"),
        ("a folder", ".", ". is a directory, not an ONNX model"),
        ("a text file", "notes.onnx", "notes.onnx is not an ONNX model: Error parsing message"),
        ("an empty file", "empty.onnx", "empty.onnx is not an ONNX model"),
        ("an op torch-mlir cannot lower", "dft.onnx", "ops left unconverted: onnx.DFT"),
        ("an op of an unknown domain", "custom.onnx", "ops left unconverted: onnx.Frobnicate"),
    ]
    for label, path, expected in cases:
        c.tool_error("strata-import-onnx on %s" % label, onnx_cmd + [path, "-o", "bad.mlir"],
                     expected)


def torch_checks(c):
    import torch

    py = sys.executable
    with open(c.work("models.py"), "w") as f:
        f.write(textwrap.dedent(MODELS_PY))
    sys.path.insert(0, c.args.work)
    import models  # the file just written

    # --input-shape, --dynamic-batch, --tosa.
    x = torch.randn(3, 3, 8, 8, generator=torch.Generator().manual_seed(3))
    model = models.net().eval()
    with torch.no_grad():
        want = model(x).numpy()
        want1 = model(x[:1]).numpy()
    exports = [
        # label, flags, the signature expected, inputs, PyTorch's outputs
        ("static", ["--input-shape", "1x3x8x8xf32"], "(%arg0: tensor<1x3x8x8xf32>)",
         [x[:1]], [want1]),
        ("dynamic batch", ["--dynamic-batch"], "(%arg0: tensor<?x3x8x8xf32>)",
         [x[:1], x], [want1, want]),
        ("tosa", ["--tosa", "--input-shape", "3x3x8x8xf32"], "(%arg0: tensor<3x3x8x8xf32>)",
         [x], [want]),
    ]
    for label, flags, signature, inputs, expected in exports:
        target = "models.py:net" if "--input-shape" in flags else "models.py:net_with_inputs"
        mlir = "net-%s.mlir" % label.replace(" ", "-")
        out = c.tool("strata-import-torch %s %s" % (target, " ".join(flags)),
                     [py, TORCH_TOOL, target, "-o", mlir] + flags)
        if out is None:
            continue
        text = open(c.work(mlir)).read()
        if signature not in out or (label == "tosa" and "tosa." not in text):
            c.fail("strata-import-torch " + label, "unexpected output: %s" % out.strip())
            continue
        c.ok("strata-import-torch %s: %s" % (label, out.strip()))
        c.compile_and_run("torch net " + label, c.work(mlir), [[t.numpy()] for t in inputs],
                          expected)

    # A module name on the path, rather than a file.
    out = c.tool("strata-import-torch models:net_with_inputs",
                 [py, TORCH_TOOL, "models:net_with_inputs", "-o", "net-by-name.mlir"])
    if out is not None:
        c.ok("strata-import-torch models:net_with_inputs (a module name): " + out.strip())

    # Bad input.
    cases = [
        ("no colon", ["models.py", "-o", "bad.mlir"], "'models.py' is not MODULE:FACTORY"),
        ("a missing file", ["nothere.py:net", "-o", "bad.mlir"], "nothere.py: no such file"),
        ("a missing module", ["nothere:net", "-o", "bad.mlir"],
         "cannot import nothere: No module named 'nothere'"),
        ("a missing factory", ["models.py:resnet", "-o", "bad.mlir"], "models.py has no resnet"),
        ("a failing factory", ["models.py:broken", "-o", "bad.mlir"],
         "models.py:broken() failed: RuntimeError: no weights here"),
        ("a factory returning no model", ["models.py:not_a_model", "-o", "bad.mlir"],
         "models.py:not_a_model() returned int"),
        ("no example inputs", ["models.py:net", "-o", "bad.mlir"], "give them with --input-shape"),
        ("a bad --input-shape", ["models.py:net", "-o", "bad.mlir", "--input-shape", "3x8xq9"],
         "bad --input-shape '3x8xq9'"),
        ("--dynamic-batch with a batch the model fixes",
         ["models.py:fixed_batch", "-o", "bad.mlir", "--dynamic-batch"],
         "Constraints violated (batch): You marked batch as dynamic but your code specialized it"),
        ("an op torch-mlir cannot lower", ["models.py:zeta", "-o", "bad.mlir"],
         "ops left unconverted: torch.aten.special_zeta (models.py:"),
    ]
    for label, argv, expected in cases:
        c.tool_error("strata-import-torch on %s" % label, [py, TORCH_TOOL] + argv, expected)

    # cumsum without tm_tensor.
    from strata_import.torch_import import _cumsum
    generator = torch.Generator().manual_seed(5)
    mismatches = []
    shapes = [((1,), 0), ((7,), 0), ((3, 16), 1), ((3, 33), -1), ((4, 5, 6), 1), ((2, 9), 0)]
    for shape, dim in shapes:
        for dtype in (torch.float32, torch.int64, torch.bool):
            t = torch.randn(shape, generator=generator)
            if dtype == torch.bool:
                t = t > 0
            elif dtype == torch.int64:
                t = (t * 5).to(dtype)
            got, want = _cumsum(t, dim), torch.cumsum(t, dim)
            same = torch.allclose(got.double(), want.double(), atol=1e-5)
            if got.dtype != want.dtype or not same:
                mismatches.append("%s %s dim %d" % (shape, dtype, dim))
    if mismatches:
        c.fail("cumsum decomposition", "differs from torch.cumsum for " + ", ".join(mismatches))
    else:
        c.ok("cumsum decomposition equals torch.cumsum (6 shapes x float, int64, bool)")
    out = c.tool("strata-import-torch models.py:prefix --dynamic-batch",
                 [py, TORCH_TOOL, "models.py:prefix", "-o", "prefix.mlir", "--dynamic-batch"])
    if out is not None:
        text = open(c.work("prefix.mlir")).read()
        if "tm_tensor" in text:
            c.fail("cumsum export", "prefix.mlir still has tm_tensor ops")
        else:
            c.ok("cumsum exported without tm_tensor: " + out.strip())
            prefix = models.Prefix()
            g = torch.Generator().manual_seed(11)
            inputs, expected = [], []
            for n in (1, 4, 9):
                xs = torch.randn(n, 11, generator=g)
                mask = (torch.rand(n, 11, generator=g) > 0.3).to(torch.int64)
                inputs.append([xs.numpy(), mask.numpy()])
                expected.append(prefix(xs, mask).numpy())
            c.compile_and_run("cumsum model", c.work("prefix.mlir"), inputs, expected)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True,
                        help="the folder with compile-module and run-module")
    parser.add_argument("--work", required=True, help="where models and results go")
    args = parser.parse_args()
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    c = Checks(args)
    onnx_checks(c)
    torch_checks(c)
    if c.failures:
        print("\nfailures:")
        for failure in c.failures:
            print("  " + failure.splitlines()[0])
    print("%d passed, %d failed" % (c.passed, len(c.failures)))
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    from strata_import import cli
    cli.quiet_torch_logs()
    main()
