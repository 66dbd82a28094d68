#!/usr/bin/env python3
"""Real models (zoo.py) exported, compiled and run on both CPU drivers against PyTorch.

    build/venv/bin/python check_models.py --bin=DIR --work=DIR [--only NAME ...]
                                          [--devices=cpu-sync,cpu-task] [--keep-modules]
                                          [--target=cpu,vulkan]
    python3 check_models.py --run-only --bin=DIR --work=DIR --target=cuda,vulkan
                            --devices=cuda,vulkan [--only NAME ...]

--run-only runs, on a machine without the compiler or torch-mlir (a GPU machine),
the modules an earlier `--keep-modules --devices=` run compiled for the same
--target into --work, with the inputs and references kept there; variants whose
module is not there are skipped with one line.

Run it with the Python that tools/dev/setup-python.sh makes (build/venv): it
needs torch, torch-mlir, torchvision, transformers and onnx. For each model
family in zoo.FAMILIES (or those --only names) and each way in:

- linalg: strata_import.export_torch to linalg-on-tensors, batch 1;
- tosa (the CNNs): the same export to TOSA;
- onnx (ResNet-18, MobileNetV2, BERT): torch.onnx.export, then
  tools/import/strata-import-onnx run with torch made unimportable, to prove
  ONNX users need no PyTorch;
- BERT and GPT-2 (linalg, batch 1) also with a token id one past the
  vocabulary, which must fail with OUT_OF_RANGE naming the model's bounds
  check and its location;
- the transformers (BERT, GPT-2, ViT) also at their second size (a longer
  sequence, a larger image: a separate export), and exported with a dynamic
  batch (--dynamic-batch) and run at batches 1, 3 and 8;

it exports the model into --work together with seeded inputs and PyTorch's own
outputs as .npy files (kept, and reused while they are newer than zoo.py, this
script, the importer's sources and the venv's package list; each export runs
in a child process, so that a crash in torch-mlir fails that check alone),
compiles it with compile-module (time and module size printed), runs it with
run-module on each device and compares the result with PyTorch's (rtol 1e-3,
atol 1e-4; the max abs error is printed).

One line per check: an export, a compile, or one run on one device. A failing
check prints what failed (compile-module's own error text) and the rest go on;
the runs of a model that did not export or compile count as skipped. Ends with
the failures listed and `N passed, N failed, N skipped`; exits 1 on any
failure.
"""
import argparse
import glob
import importlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
IMPORT_DIR = os.path.join(ROOT, "tools", "import")
sys.path.insert(0, HERE)
sys.path.insert(0, IMPORT_DIR)

RTOL = 1e-3
ATOL = 1e-4
# cpu-task also with every command buffer run as it is recorded (stream=always;
# by default it streams only where that has been faster).
DEVICES = ["cpu-sync", "cpu-task", "cpu-task?threads=2&stream=always"]
DYNAMIC_BATCHES = [1, 3, 8]
ONNX_FAMILIES = ["resnet18", "mobilenet_v2", "bert"]
# The text models' vocabulary sizes (zoo.py's): a token id this large must be refused.
VOCABULARY = {"bert": "BERT_VOCAB", "gpt2": "GPT2_VOCAB"}
# Seconds a tool may take before its check fails (the rest go on).
IMPORT_TIMEOUT, COMPILE_TIMEOUT, RUN_TIMEOUT = 600, 300, 120
# Runs strata-import-onnx with torch unimportable: 'import torch' raises ImportError.
WITHOUT_TORCH = ("import runpy, sys; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
                 "runpy.run_path(sys.argv[0], run_name='__main__')")


class Variant:
    """One export of one family: how it comes in, at which size, run at which batches."""

    def __init__(self, work, family, way, size, dynamic=False):
        self.work = work
        self.family, self.way, self.size, self.dynamic = family, way, size, dynamic
        self.batches = DYNAMIC_BATCHES if dynamic else [1]
        parts = [family.name, way]
        if size != family.sizes[0]:
            parts.append(str(size))
        if dynamic:
            parts.append("dynamic")
        self.stem = "-".join(parts)
        self.label = "%s.%s(%s%s)" % (family.name, way, family.describe(size),
                                      ", dynamic batch" if dynamic else "")

    def path(self, suffix):
        return os.path.join(self.work, self.stem + suffix)

    def inputs_path(self, batch, index):
        return self.path(".b%d.in%d.npy" % (batch, index))

    def reference_path(self, batch):
        return self.path(".b%d.expected.npy" % batch)


def variants(work, family):
    first = family.sizes[0]
    out = [Variant(work, family, "linalg", first)]
    if not family.transformer:
        out.append(Variant(work, family, "tosa", first))
    if family.name in ONNX_FAMILIES:
        out.append(Variant(work, family, "onnx", first))
    if family.transformer:
        out += [Variant(work, family, "linalg", size) for size in family.sizes[1:]]
        out.append(Variant(work, family, "linalg", first, dynamic=True))
    return out


def sources():
    """The files whose change makes a cached export stale: the zoo, this script, the
    importer, and the venv's package list (tools/dev/setup-python.sh's stamp)."""
    files = [os.path.join(HERE, "zoo.py"), os.path.abspath(__file__),
             os.path.join(IMPORT_DIR, "strata-import-onnx"),
             os.path.join(sys.prefix, "strata-packages.txt")]
    files += glob.glob(os.path.join(IMPORT_DIR, "strata_import", "*.py"))
    return [f for f in files if os.path.exists(f)]


def cached(variant):
    """The export record when the .mlir, inputs and references are all newer than the sources."""
    record_path = variant.path(".export.json")
    if not os.path.exists(record_path):
        return None
    with open(record_path) as f:
        record = json.load(f)
    newest_source = max(os.path.getmtime(p) for p in sources())
    files = [record_path, variant.path(".mlir")]
    for batch in variant.batches:
        files.append(variant.reference_path(batch))
        files += [variant.inputs_path(batch, i) for i in range(record["inputs"])]
    if not all(os.path.exists(f) and os.path.getmtime(f) > newest_source for f in files):
        return None
    return record


def one_line(text, limit=300):
    return " ".join(str(text).split())[:limit]


def run_tool(cmd, timeout):
    """Runs cmd: (None, seconds) when it succeeds, else (its first error line, its output)."""
    start = time.time()
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "%s timed out after %d s" % (os.path.basename(cmd[0]), timeout), ""
    except OSError as error:  # not there, not executable (being rebuilt, say)
        return "cannot run %s: %s" % (cmd[0], error.strerror), ""
    seconds = time.time() - start
    if result.returncode == 0:
        return None, seconds
    text = (result.stderr + result.stdout).strip()
    if result.returncode < 0:
        first = "%s died of %s" % (os.path.basename(cmd[0]),
                                   signal.Signals(-result.returncode).name)
    else:
        first = text.splitlines()[0] if text else "%s exited with status %d" % (
            os.path.basename(cmd[0]), result.returncode)
    return first, text


def in_child(function, *args):
    """function(*args) run in a forked child; its result (JSON), or RuntimeError saying why not.

    A crash inside torch or torch-mlir then fails this check alone, and the
    memory an export takes (gigabytes for BERT) goes back when the child ends.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            payload = {"result": function(*args)}
        except BaseException as error:
            payload = {"error": one_line(error, 600)}
        with os.fdopen(write, "w") as f:
            json.dump(payload, f)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise RuntimeError("the export crashed with %s" % signal.Signals(os.WTERMSIG(status)).name)
    payload = json.loads(data) if data else {"error": "the export ended without a result"}
    if "error" in payload:
        raise RuntimeError(payload["error"])
    return payload["result"]


def export(variant):
    """Exports the variant and writes its inputs and references; returns the export record."""
    import torch
    from strata_import import ImportFailure, export_torch

    family, size = variant.family, variant.size
    model = family.build(size)
    mlir = variant.path(".mlir")
    start = time.time()
    example = family.inputs(1, size, seed=1)
    if variant.way == "onnx":
        onnx_path = variant.path(".onnx")
        # The TorchScript-based exporter (dynamo=False): the dynamo one needs onnxscript.
        # Its deprecation and tracer warnings say nothing about this model's check.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, example, onnx_path, dynamo=False, opset_version=17)
        error, detail = run_tool([sys.executable, "-c", WITHOUT_TORCH,
                                  os.path.join(IMPORT_DIR, "strata-import-onnx"), onnx_path,
                                  "-o", mlir], IMPORT_TIMEOUT)
        if error:
            raise ImportFailure(one_line(detail or error, 600))
    else:
        export_torch(model, example, mlir, dynamic_batch=variant.dynamic,
                     output="tosa" if variant.way == "tosa" else "linalg")
    seconds = time.time() - start
    for batch in variant.batches:
        inputs = family.inputs(batch, size, seed=100 + batch)
        with torch.no_grad():
            expected = model(*inputs)
        if expected.numel() > 1 and float(expected.std()) == 0.0:
            raise ImportFailure("PyTorch's output is the same number everywhere (%g): a check "
                                "against it would prove nothing" % float(expected.flatten()[0]))
        for i, x in enumerate(inputs):
            np.save(variant.inputs_path(batch, i), x.numpy())
        np.save(variant.reference_path(batch), expected.numpy())
    record = {"seconds": round(seconds, 2), "inputs": len(example),
              "mlir_bytes": os.path.getsize(mlir)}
    with open(variant.path(".export.json"), "w") as f:
        json.dump(record, f)
    return record


def compare(actual, expected):
    """None when actual matches expected, else why not; and the max abs error."""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return "got %s %s, expected %s %s" % (actual.shape, actual.dtype,
                                              expected.shape, expected.dtype), float("nan")
    if not np.isfinite(actual).all():
        bad = int((~np.isfinite(actual)).sum())
        return "the result holds %d non-finite values" % bad, float("nan")
    error = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    bound = ATOL + RTOL * np.abs(expected.astype(np.float64))
    worst = float(error.max()) if error.size else 0.0
    if (error > bound).any():
        where = np.unravel_index(np.argmax(error - bound), error.shape)
        return ("%d of %d elements off; element %s is %r, expected %r (rtol %g, atol %g)" % (
            int((error > bound).sum()), error.size, [int(i) for i in where], float(actual[where]),
            float(expected[where]), RTOL, ATOL)), worst
    return None, worst


class Report:
    def __init__(self):
        self.passed, self.skipped, self.failures = 0, 0, []

    def ok(self, line):
        self.passed += 1
        print("ok   " + line, flush=True)

    def fail(self, what, why, detail=None):
        self.failures.append("%s: %s" % (what, why))
        print("FAIL %s: %s" % (what, why), flush=True)
        if detail:
            lines = detail.rstrip().splitlines()
            if lines and one_line(lines[0]) in why:
                lines = lines[1:]  # the line just printed
            for line in lines[:40]:
                print("       | " + line)
            sys.stdout.flush()

    def skip(self, count):
        self.skipped += count


def check(variant, args, report):
    runs = len(variant.batches) * len(args.devices)
    module = variant.path(".smod" if args.target == "cpu" else "." + args.target.replace(",", "_") + ".smod")
    if args.run_only:
        if not os.path.exists(module) or not os.path.exists(variant.path(".export.json")):
            print("skip %s: no module %s here" % (variant.label, os.path.basename(module)), flush=True)
            report.skip(runs)
            return
        with open(variant.path(".export.json")) as f:
            record = json.load(f)
        run_variant(variant, module, record, args, report)
        return
    # Export (or reuse the cached export).
    record = cached(variant)
    try:
        if record is None:
            record = in_child(export, variant)
            how = "%.1f s" % record["seconds"]
        else:
            how = "cached, took %.1f s" % record["seconds"]
    except RuntimeError as error:  # ImportFailure, torch.onnx's own errors, a crash
        report.fail(variant.label + " export", one_line(error, 600))
        report.skip(1 + runs)
        return
    report.ok("%s export: %s, %.1f MB of MLIR" % (variant.label, how, record["mlir_bytes"] / 1e6))

    # Compile.
    if os.path.exists(module):
        os.remove(module)
    cmd = [os.path.join(args.bin, "compile-module"), variant.path(".mlir"), "-o", module,
           "--target=" + args.target]
    if args.gpu_codegen_options:
        cmd.append("--gpu-codegen-options=" + args.gpu_codegen_options)
    error, detail = run_tool(cmd, COMPILE_TIMEOUT)
    if error:
        report.fail(variant.label + " compile", one_line(error, 400), detail)
        report.skip(runs)
        return
    size = os.path.getsize(module)
    report.ok("%s compile: %.1f s, module %.1f MB" % (variant.label, detail, size / 1e6))
    if "rocm" in args.target.split(","):
        # Every code object reads back (comgr, LLVM) as the metadata says.
        error, detail = run_tool([os.path.join(args.bin, "rocm-code-objects"), module], COMPILE_TIMEOUT)
        if error:
            report.fail(variant.label + " ROCm code objects", one_line(error, 400), detail)
        else:
            report.ok("%s: its ROCm code objects match their metadata" % variant.label)

    run_variant(variant, module, record, args, report)


def run_variant(variant, module, record, args, report):
    """Runs the module at each batch on each device against the references."""
    failed = False
    for batch in variant.batches:
        inputs = [variant.inputs_path(batch, i) for i in range(record["inputs"])]
        expected = np.load(variant.reference_path(batch))
        for device in args.devices:
            name = "%s batch %d on %s" % (variant.label, batch, device)
            out = variant.path(".b%d.%s.out.npy" % (batch, device))
            if os.path.exists(out):
                os.remove(out)
            cmd = [os.path.join(args.bin, "run-module"), "--module=" + module,
                   "--function=main", "--device=" + device]
            cmd += ["--input=@" + p for p in inputs] + ["--output=@" + out]
            error, detail = run_tool(cmd, RUN_TIMEOUT)
            if error:
                report.fail(name, "run-module: " + one_line(error, 400), detail)
                failed = True
                continue
            why, worst = compare(np.load(out), expected)
            if why:
                report.fail(name, why + "; max abs error %.3g" % worst)
                failed = True
            else:
                report.ok("%s: max abs error %.3g (%.2f s)" % (name, worst, detail))
    if variant.family.name in VOCABULARY and variant.way == "linalg" and not variant.dynamic:
        check_token_bounds(variant, module, record, args, report)
    if not failed and not args.keep_modules and not args.run_only:
        os.remove(module)


def check_token_bounds(variant, module, record, args, report):
    """A token id one past the vocabulary: an OUT_OF_RANGE error naming the
    model's bounds check and its location, on every device; no result."""
    inputs = [variant.inputs_path(1, i) for i in range(record["inputs"])]
    import zoo
    vocabulary = getattr(zoo, VOCABULARY[variant.family.name])
    ids = np.load(inputs[0])
    ids[0, ids.shape[1] // 2] = vocabulary
    bad = variant.path(".b1.bad_ids.npy")
    np.save(bad, ids)
    for device in args.devices:
        name = "%s token id %d out of range on %s" % (variant.label, vocabulary, device)
        cmd = [os.path.join(args.bin, "run-module"), "--module=" + module,
               "--function=main", "--device=" + device, "--input=@" + bad]
        cmd += ["--input=@" + p for p in inputs[1:]]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        wanted = ["OUT_OF_RANGE", "failed a check of the model",
                  os.path.basename(variant.path(".mlir")) + ":",
                  "index must be smaller than dim size"]
        missing = [w for w in wanted if w not in result.stderr]
        if result.returncode == 0 or result.returncode < 0 or missing or result.stdout.strip():
            report.fail(name, "expected exit 1 and an error naming the bounds check (%s); got "
                        "exit %d, stdout %r, stderr %r" % (", ".join(missing) or "all there",
                                                           result.returncode, result.stdout[:200],
                                                           one_line(result.stderr, 400)))
        else:
            report.ok("%s: %s" % (name, one_line(result.stderr.splitlines()[0], 200)))


def main():
    from zoo import FAMILIES
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True,
                        help="the folder with compile-module and run-module")
    parser.add_argument("--work", required=True, help="where exports, inputs and results go")
    parser.add_argument("--only", nargs="+", choices=sorted(FAMILIES), metavar="NAME",
                        help="these families only (%s)" % ", ".join(FAMILIES))
    parser.add_argument("--devices", default=",".join(DEVICES),
                        help="comma-separated (default %(default)s)")
    parser.add_argument("--target", default="cpu",
                        help="compile-module --target (cpu, vulkan, cuda, rocm, cpu,vulkan); with "
                             "--devices= (none) the models are compiled and not run")
    parser.add_argument("--gpu-codegen-options", default="",
                        help="compile-module --gpu-codegen-options (e.g. fma-tiles-from=1)")
    parser.add_argument("--keep-modules", action="store_true",
                        help="keep the .smod files of models that passed (failures' are kept)")
    parser.add_argument("--run-only", action="store_true",
                        help="run the modules compiled into --work earlier; no export, no compile")
    args = parser.parse_args()
    args.devices = [d for d in args.devices.split(",") if d]
    for tool in ("run-module",) if args.run_only else ("compile-module", "run-module"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            sys.exit("check_models.py: no %s in %s" % (tool, args.bin))
    os.makedirs(args.work, exist_ok=True)
    if not args.run_only:
        importlib.import_module("torch")  # once, before the exports fork

    report = Report()
    for name in args.only or list(FAMILIES):
        for variant in variants(args.work, FAMILIES[name]):
            check(variant, args, report)
    if report.failures:
        print("\nfailures:")
        for failure in report.failures:
            print("  " + failure)
    print("%d passed, %d failed, %d skipped" % (
        report.passed, len(report.failures), report.skipped))
    sys.exit(1 if report.failures else 0)


if __name__ == "__main__":
    if "--run-only" not in sys.argv:
        from strata_import import cli
        cli.quiet_torch_logs()
    main()
