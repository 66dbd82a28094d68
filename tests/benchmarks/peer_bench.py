#!/usr/bin/env python3
"""Strata against ONNX Runtime and PyTorch eager on the CPU, 1 and 2 threads, in one run.

    build/venv/bin/python tests/benchmarks/peer_bench.py [--build-dir build]
        [--processes 3] [--paired-rounds 15] [--only NAME ...] [--no-sgemm]
    ninja -C build bench-peers          # the same, after building what it needs

Run it with the Python of tools/dev/setup-python.sh (build/venv: PyTorch, torch-mlir,
torchvision, transformers from PyPI). ONNX Runtime (PyPI, pinned below) is installed
into BUILD/bench-packages on first use, outside the test venv; oneDNN is Debian's
libdnnl (apt-get install libdnnl-dev, done here when run as root).

Models: the samples (MLP 784-512-512-10 at batch 1 and 32, the encoder block, the
CNN; weights read from the .mlir files) and the real-model suite's families
(tests/models/zoo.py, batch 1, first size), exported by tests/models/check_models.py
(linalg, through torch-mlir) for Strata and with torch.onnx.export for ONNX Runtime,
all with the same weights. Every engine's result is checked against PyTorch's (or the
NumPy reference of the samples) before it is timed.

Timing: each figure is the median over --processes separate processes of each
process's median over repetitions; microseconds per call (ms for the real models). The
processes of the engines compared in one row alternate (Strata, ONNX Runtime, PyTorch
on 1 thread, the same on 2, Strata on 1 again, ...), so that a slow spell of the machine
falls on all of them alike, Strata's own 1 and 2 threads included.
Strata: benchmark-module on cpu-sync (1 thread) and cpu-task?threads=2. PyTorch:
torch.set_num_threads(N), no_grad. ONNX Runtime: intra_op_num_threads=N, sequential.

Each model is then also run in one process (--paired-rounds, 15 by default; 0: not):
Strata through its C API (ctypes, libstrata.so), ONNX Runtime and PyTorch, at 1 and 2
threads, take turns in bursts of calls (about 20 ms, the first not timed, each turn after
50 ms idle), the order rotating from round to round; printed are the quartiles over the
rounds of Strata's time over the best peer's and of Strata's 2 threads over 1, which a slow
spell of the machine lengthening a whole round leaves alone. All three are called from
Python there.

SGEMM (row-major, f32) at 256, 1024 and 2048: Strata (a module holding one
linalg.matmul) against oneDNN's dnnl_sgemm (called through ctypes, OMP_NUM_THREADS=N),
in GFLOP/s and in % of the FMA peak this script measures (a loop of independent
vector FMAs compiled here with clang -O2 -march=native, per core; 2 threads: twice it).
Then the same modules against dnnl_sgemm in one process, bursts of calls alternating
(sgemm-pairs): the quartiles of the pairs' ratios, which a slow spell of the machine
lengthening both sides of a pair leaves alone.
"""
import argparse
import ctypes
import ctypes.util
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ORT_PACKAGES = ["onnxruntime==1.32.0", "flatbuffers==25.12.19"]
RTOL, ATOL = 1e-3, 1e-4
SGEMM_SIZES = [256, 1024, 2048]
THREADS = [1, 2]


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError("%s failed:\n%s%s" % (" ".join(cmd), result.stdout[-2000:],
                                                 result.stderr[-4000:]))
    return result.stdout


def verify(actual, expected):
    import numpy as np
    actual = np.asarray(actual, dtype=np.float64).reshape(expected.shape)
    error = np.abs(actual - expected)
    if not (error <= ATOL + RTOL * np.abs(expected)).all():
        raise RuntimeError("wrong result: max abs error %.3g" % error.max())
    return float(error.max())


# ---------------------------------------------------------------------------------------
# Workers: one process times one engine at one thread count and prints a JSON line.

def time_calls(call, target_seconds=0.1, repetitions=7):
    for _ in range(3):
        call()
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-7)
    calls = max(1, int(target_seconds / once))
    seconds = []
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        seconds.append((time.perf_counter() - start) / calls)
    return statistics.median(seconds)


def worker(spec):
    import numpy as np
    inputs = [np.load(p) for p in spec["inputs"]]
    expected = np.load(spec["expected"])
    threads = spec["threads"]
    if spec["engine"] == "torch":
        import torch
        torch.set_num_threads(threads)
        model = build_torch(spec)
        tensors = [torch.from_numpy(x) for x in inputs]
        with torch.no_grad():
            error = verify(model(*tensors).numpy(), expected)
            seconds = time_calls(lambda: model(*tensors))
    elif spec["engine"] == "ort":
        sys.path.insert(0, spec["packages"])
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        session = ort.InferenceSession(spec["onnx"], options, providers=["CPUExecutionProvider"])
        feed = {i.name: x for i, x in zip(session.get_inputs(), inputs)}
        error = verify(session.run(None, feed)[0], expected)
        seconds = time_calls(lambda: session.run(None, feed))
    elif spec["engine"] == "dnnl":
        seconds, error = time_dnnl(spec["n"], inputs, expected)
    else:
        raise ValueError(spec["engine"])
    print(json.dumps({"seconds": seconds, "error": error}))


def build_torch(spec):
    if spec["kind"] == "sample":
        model_bench = load("model_bench", os.path.join(HERE, "model_bench.py"))
        case = next(c for c in model_bench.CASES if c.name == spec["case"])
        blobs = model_bench.check_models.read_resources(spec["mlir"])
        return case.torch_model(blobs)
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    import zoo
    family = zoo.FAMILIES[spec["family"]]
    return family.build(family.sizes[0])


def time_dnnl(n, inputs, expected):
    import numpy as np
    library = ctypes.CDLL(ctypes.util.find_library("dnnl") or "libdnnl.so.2")
    sgemm = library.dnnl_sgemm
    f32p = ctypes.POINTER(ctypes.c_float)
    sgemm.argtypes = [ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_int64,
                      ctypes.c_int64, ctypes.c_float, f32p, ctypes.c_int64, f32p,
                      ctypes.c_int64, ctypes.c_float, f32p, ctypes.c_int64]
    a, b = (np.ascontiguousarray(x) for x in inputs)
    c = np.zeros((n, n), dtype=np.float32)
    pa, pb, pc = (x.ctypes.data_as(f32p) for x in (a, b, c))

    def call():
        status = sgemm(b"N", b"N", n, n, n, 1.0, pa, n, pb, n, 0.0, pc, n)
        if status != 0:
            raise RuntimeError("dnnl_sgemm returned %d" % status)
    call()
    error = verify(c, expected)
    return time_calls(call, repetitions=5), error


# ---------------------------------------------------------------------------------------
# The paired worker: Strata (through its C API), ONNX Runtime and PyTorch in one process,
# taking turns, so that each round compares them on the machine of the same moment.

class StrataLibrary:
    """The C API of build/lib/libstrata.so through ctypes: enough to load a module and call
    one function on numpy arrays."""
    TYPES = {"float32": 0x0320, "int64": 0x0140, "int32": 0x0120, "float16": 0x0310,
             "float64": 0x0340, "int8": 0x0108, "uint8": 0x0208, "bool": 0x0508}

    def __init__(self, path):
        c = ctypes
        self.lib = lib = c.CDLL(path)
        void_pp = c.POINTER(c.c_void_p)
        for name, args in (("strata_instance_create", [void_pp]),
                           ("strata_device_open", [c.c_void_p, c.c_char_p, c.c_char_p, void_pp]),
                           ("strata_module_load_file", [c.c_void_p, c.c_char_p, void_pp]),
                           ("strata_module_lookup_function", [c.c_void_p, c.c_char_p, void_pp]),
                           ("strata_tensor_wrap", [c.c_void_p, c.c_int, c.POINTER(c.c_int64),
                                                   c.c_size_t, c.c_void_p, c.c_size_t, c.c_void_p,
                                                   c.c_void_p, void_pp]),
                           ("strata_function_call", [c.c_void_p, void_pp, c.c_size_t, void_pp,
                                                     c.c_size_t]),
                           ("strata_tensor_copy_out", [c.c_void_p, c.c_void_p, c.c_size_t])):
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = c.c_void_p
        lib.strata_status_message.argtypes = [c.c_void_p]
        lib.strata_status_message.restype = c.c_char_p
        lib.strata_status_free.argtypes = [c.c_void_p]
        lib.strata_tensor_release.argtypes = [c.c_void_p]
        lib.strata_function_output_count.argtypes = [c.c_void_p]
        lib.strata_function_output_count.restype = c.c_size_t
        self.instance = self.make("strata_instance_create")

    def check(self, status, what):
        if status:
            message = self.lib.strata_status_message(status).decode()
            self.lib.strata_status_free(status)
            raise RuntimeError("strata: %s: %s" % (what, message))

    def make(self, name, *args):
        out = ctypes.c_void_p()
        self.check(getattr(self.lib, name)(*args, ctypes.byref(out)), name)
        return out

    def function(self, device_name, module, function, arrays, result_shape):
        """Returns call(keep) for `function` of `module` on a new device, its inputs wrapped
        (the arrays must outlive it); call(True) returns the first result, of f32 elements
        and `result_shape`, as numpy."""
        import numpy as np
        device = self.make("strata_device_open", self.instance, device_name.encode(), None)
        loaded = self.make("strata_module_load_file", device, module.encode())
        fn = self.make("strata_module_lookup_function", loaded, (function or "main").encode())
        outputs = self.lib.strata_function_output_count(fn)
        inputs = (ctypes.c_void_p * len(arrays))()
        for i, x in enumerate(arrays):
            shape = (ctypes.c_int64 * max(1, x.ndim))(*x.shape)
            inputs[i] = self.make("strata_tensor_wrap", device, self.TYPES[str(x.dtype)], shape,
                                  x.ndim, x.ctypes.data, x.nbytes, None, None)
        results = (ctypes.c_void_p * outputs)()
        keep_alive = (device, loaded, fn, inputs)

        def call(keep=False):
            self.check(self.lib.strata_function_call(fn, inputs, len(arrays), results, outputs),
                       "calling %s" % function)
            first = None
            if keep:
                first = np.empty(result_shape, dtype=np.float32)
                self.check(self.lib.strata_tensor_copy_out(results[0], first.ctypes.data,
                                                           first.nbytes), "reading the result")
            for r in range(outputs):
                self.lib.strata_tensor_release(results[r])
            return first
        call.keep_alive = keep_alive
        return call


TURN_GAP_SECONDS = 0.05


def paired_worker(spec):
    """Rounds in which every engine at every thread count runs one burst of calls (the first
    not timed), in an order rotating from round to round, each after TURN_GAP_SECONDS idle
    (the other engines' threads stop spinning). Prints, per round, Strata's time over the
    best peer's at each thread count and Strata's 2 threads over 1, as JSON."""
    import numpy as np
    inputs = [np.ascontiguousarray(np.load(p)) for p in spec["inputs"]]
    expected = np.load(spec["expected"])
    strata = StrataLibrary(spec["library"])
    import torch
    model = build_torch(spec)
    tensors = [torch.from_numpy(x) for x in inputs]
    torch.set_grad_enabled(False)
    if spec.get("onnx"):
        sys.path.insert(0, spec["packages"])
        import onnxruntime as ort
    calls = {}
    # What a burst of an engine needs first, outside its timed calls.
    prepare = {}
    for threads in THREADS:
        device = "cpu-sync" if threads == 1 else "cpu-task?threads=%d" % threads
        strata_call = strata.function(device, spec["module"], spec["function"], inputs,
                                      expected.shape)
        verify(strata_call(True), expected)
        calls["strata%d" % threads] = strata_call

        prepare["torch%d" % threads] = (lambda t=threads: torch.set_num_threads(t))
        prepare["torch%d" % threads]()
        verify(model(*tensors).numpy(), expected)
        calls["torch%d" % threads] = (lambda: model(*tensors))
        if spec.get("onnx"):
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            session = ort.InferenceSession(spec["onnx"], options,
                                           providers=["CPUExecutionProvider"])
            feed = {i.name: x for i, x in zip(session.get_inputs(), inputs)}
            verify(session.run(None, feed)[0], expected)
            calls["ort%d" % threads] = (lambda s=session, f=feed: s.run(None, f))
    # Calls per burst: about 20 ms of them, at least 3 timed.
    per_burst = {}
    for key, call in calls.items():
        prepare.get(key, lambda: None)()
        for _ in range(3):
            call()
        start = time.perf_counter()
        call()
        per_burst[key] = 1 + max(3, int(0.02 / max(time.perf_counter() - start, 1e-6)))
    keys = list(calls)
    rounds = {key: [] for key in keys}
    for r in range(spec["rounds"]):
        order = keys[r % len(keys):] + keys[:r % len(keys)]
        for key in order:
            time.sleep(TURN_GAP_SECONDS)
            prepare.get(key, lambda: None)()
            times = []
            for _ in range(per_burst[key]):
                start = time.perf_counter()
                calls[key]()
                times.append(time.perf_counter() - start)
            rounds[key].append(statistics.median(times[1:]))
    result = {"seconds": {key: statistics.median(v) for key, v in rounds.items()}}
    ratios = {}
    for threads in THREADS:
        peers = [k for k in ("ort%d" % threads, "torch%d" % threads) if k in rounds]
        ratios["ratio%d" % threads] = [rounds["strata%d" % threads][r] /
                                       min(rounds[p][r] for p in peers)
                                       for r in range(spec["rounds"])]
    ratios["2t/1t"] = [a / b for a, b in zip(rounds["strata2"], rounds["strata1"])]
    result["ratios"] = {key: quartiles(v) for key, v in ratios.items()}
    print(json.dumps(result))


def quartiles(values):
    values = sorted(values)
    pick = lambda q: values[int(q * (len(values) - 1) + 0.5)]
    return [pick(0.25), pick(0.5), pick(0.75)]


# ---------------------------------------------------------------------------------------
# The parent: prepares models, runs workers and benchmark-module, prints the tables.

def export_onnx(name, path):
    import torch
    import zoo
    family = zoo.FAMILIES[name]
    model = family.build(family.sizes[0])
    example = family.inputs(1, family.sizes[0], seed=1)
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation and tracer warnings
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, path, dynamo=False, opset_version=17)
    return path


class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.join(args.build_dir, "bin")
        self.work = os.path.join(args.build_dir, "bench", "peers")
        os.makedirs(self.work, exist_ok=True)
        self.packages = os.path.join(args.build_dir, "bench-packages")
        self.model_bench = load("model_bench", os.path.join(HERE, "model_bench.py"))

    def ensure_ort(self):
        marker = os.path.join(self.packages, "strata-packages.txt")
        wanted = "\n".join(ORT_PACKAGES)
        if os.path.exists(marker) and open(marker).read() == wanted:
            return
        shutil.rmtree(self.packages, ignore_errors=True)
        print("peer_bench: installing %s into %s" % (", ".join(ORT_PACKAGES), self.packages),
              flush=True)
        run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q",
             "--no-deps", "--target", self.packages] + ORT_PACKAGES)
        with open(marker, "w") as f:
            f.write(wanted)

    def peer(self, spec):
        """A function timing one worker process of a peer: its median seconds."""
        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(spec["threads"])

        def one():
            out = run([sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)],
                      env=env)
            return json.loads(out.strip().splitlines()[-1])["seconds"]
        return one

    def strata(self, module, function, inputs, expected, device):
        """Checks Strata's result once; returns a function timing one benchmark-module process."""
        flags = ["--module=" + module, "--device=" + device] + ["--input=@" + p for p in inputs]
        if function:
            flags.append("--function=" + function)
        out_path = os.path.join(self.work, "strata.out.npy")
        run([os.path.join(self.bin, "run-module")] + flags + ["--output=@" + out_path])
        import numpy as np
        verify(np.load(out_path), np.load(expected))

        def one():
            out = run([os.path.join(self.bin, "benchmark-module")] + flags +
                      ["--benchmark_format=json", "--benchmark_repetitions=5",
                       "--benchmark_report_aggregates_only=true"])
            return self.model_bench.benchmark_median(out)
        return one

    def interleaved(self, name, timers):
        """{key: median seconds} over --processes rounds; each round runs one process of every
        engine in turn, so that the machine's slow spells fall on all of them alike. An engine
        that fails is reported and left out."""
        values = {key: [] for key in timers}
        for _ in range(self.args.processes):
            for key, one in list(timers.items()):
                try:
                    values[key].append(one())
                except RuntimeError as error:
                    print("  %s on %s: %s" % (key, name, str(error).strip().splitlines()[-1]))
                    del timers[key]
                    values.pop(key)
        return {key: statistics.median(v) for key, v in values.items() if v}

    def measure(self, name, module, function, inputs, expected, spec, onnx):
        """Returns {engine+threads: seconds or None}. Every engine at every thread count runs in
        each round, so that Strata's 2t/1t compares processes run side by side."""
        timers = {}
        for threads in THREADS:
            device = "cpu-sync" if threads == 1 else "cpu-task?threads=%d" % threads
            try:
                timers["strata%d" % threads] = self.strata(module, function, inputs, expected,
                                                           device)
            except RuntimeError as error:
                print("  strata (%s) on %s: %s" % (device, name, str(error).splitlines()[-1]))
            for engine in ("ort", "torch"):
                if engine == "ort" and not onnx:
                    continue
                timers["%s%d" % (engine, threads)] = self.peer(dict(
                    spec, engine=engine, threads=threads, inputs=inputs, expected=expected,
                    onnx=onnx, packages=self.packages))
        result = self.interleaved(name, timers)
        if self.args.paired_rounds:
            try:
                out = run([sys.executable, os.path.abspath(__file__), "--paired-worker",
                           json.dumps(dict(spec, module=module, function=function, inputs=inputs,
                                           expected=expected, onnx=onnx, packages=self.packages,
                                           library=os.path.join(self.args.build_dir, "lib",
                                                                "libstrata.so"),
                                           rounds=self.args.paired_rounds))])
                result["paired"] = json.loads(out.strip().splitlines()[-1])["ratios"]
            except RuntimeError as error:
                print("  paired run of %s: %s" % (name, str(error).strip().splitlines()[-1]))
        return result

    def samples(self):
        import numpy as np
        import torch
        model_bench = self.model_bench
        models = os.path.join(self.args.build_dir, "samples", "models")
        rng = np.random.default_rng(2026)
        rows = []
        for case in model_bench.CASES:
            stem = case.function
            mlir = os.path.join(models, case.sample + ".mlir")
            blobs = model_bench.check_models.read_resources(mlir)
            x = rng.uniform(-1.0, 1.0, size=case.input_shape).astype(np.float32)
            x_path = os.path.join(self.work, stem + ".in.npy")
            expected_path = os.path.join(self.work, stem + ".expected.npy")
            np.save(x_path, x)
            np.save(expected_path, case.reference(blobs, x).astype(np.float32))
            module = os.path.join(self.work, case.sample + ".smod")
            # Compiled again when the model or the compiler is newer.
            compiler = os.path.join(self.bin, "compile-module")
            if not os.path.exists(module) or os.path.getmtime(module) < max(
                    os.path.getmtime(mlir), os.path.getmtime(compiler)):
                run([compiler, mlir, "-o", module])
            onnx = os.path.join(self.work, stem + ".onnx")
            function = case.torch_model(blobs)

            class Wrapper(torch.nn.Module):
                def forward(self, x):
                    return function(x)
            with warnings.catch_warnings():  # the TorchScript exporter's deprecation
                warnings.simplefilter("ignore")
                torch.onnx.export(Wrapper(), (torch.from_numpy(x),), onnx, dynamo=False,
                                  opset_version=17)
            spec = {"kind": "sample", "case": case.name, "mlir": mlir}
            rows.append((case.name, "us", self.measure(case.name, module, case.function,
                                                       [x_path], expected_path, spec, onnx)))
        return rows

    def zoo_models(self):
        sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
        sys.path.insert(0, os.path.join(ROOT, "tools", "import"))
        check_models = load("check_models_zoo", os.path.join(ROOT, "tests", "models",
                                                             "check_models.py"))
        import zoo
        rows = []
        for name in self.args.only or list(zoo.FAMILIES):
            family = zoo.FAMILIES[name]
            variant = check_models.Variant(self.work, family, "linalg", family.sizes[0])
            try:
                record = check_models.cached(variant) or check_models.in_child(
                    check_models.export, variant)
            except RuntimeError as error:
                print("  %s: export failed: %s" % (name, error))
                continue
            module = variant.path(".smod")
            run([os.path.join(self.bin, "compile-module"), variant.path(".mlir"), "-o", module])
            inputs = [variant.inputs_path(1, i) for i in range(record["inputs"])]
            onnx = variant.path(".onnx")
            try:
                # In a child, like the export: a parent that has run torch cannot fork
                # safely (its thread pool would deadlock the next child).
                check_models.in_child(export_onnx, name, onnx)
            except RuntimeError as error:
                print("  %s: torch.onnx.export failed: %s" % (name, error))
                onnx = None
            spec = {"kind": "zoo", "family": name}
            rows.append((name, "ms", self.measure(name, module, None, inputs,
                                                  variant.reference_path(1), spec, onnx)))
        return rows

    def fma_peak(self):
        """GFLOP/s of one core running independent vector FMAs."""
        source = os.path.join(self.work, "fma_peak.c")
        binary = os.path.join(self.work, "fma_peak")
        with open(source, "w") as f:
            f.write(FMA_PEAK_SOURCE)
        run(["clang-22", "-O2", "-march=native", source, "-o", binary])
        return statistics.median(float(run([binary])) for _ in range(3))

    def sgemm(self):
        import numpy as np
        if os.geteuid() == 0 and not ctypes.util.find_library("dnnl"):
            print("peer_bench: installing Debian's libdnnl-dev", flush=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", "libdnnl-dev"],
                           capture_output=True)
        have_dnnl = bool(ctypes.util.find_library("dnnl"))
        rows = []
        rng = np.random.default_rng(7)
        for n in SGEMM_SIZES:
            mlir = os.path.join(self.work, "sgemm%d.mlir" % n)
            with open(mlir, "w") as f:
                f.write(SGEMM_SOURCE.replace("N", str(n)))
            module = os.path.join(self.work, "sgemm%d.smod" % n)
            run([os.path.join(self.bin, "compile-module"), mlir, "-o", module])
            paths = []
            for name in ("a", "b"):
                path = os.path.join(self.work, "sgemm%d.%s.npy" % (n, name))
                np.save(path, rng.uniform(-1, 1, (n, n)).astype(np.float32))
                paths.append(path)
            expected = os.path.join(self.work, "sgemm%d.expected.npy" % n)
            a, b = (np.load(p).astype(np.float64) for p in paths)
            np.save(expected, (a @ b).astype(np.float32))
            timers = {}
            for threads in THREADS:
                device = "cpu-sync" if threads == 1 else "cpu-task?threads=%d" % threads
                timers["strata%d" % threads] = self.strata(module, "sgemm", paths, expected,
                                                           device)
                if have_dnnl:
                    timers["dnnl%d" % threads] = self.peer(dict(
                        engine="dnnl", n=n, threads=threads, inputs=paths, expected=expected))
            rows.append((n, self.interleaved("sgemm %d" % n, timers)))
        return rows, have_dnnl

    def sgemm_pairs(self):
        """Per size, per thread count: the quartiles of Strata's GFLOP/s over oneDNN's from
        sgemm-pairs, calls alternating in one process (separate processes see the machine at
        different moments; on a noisy machine their medians differ by more than the two do)."""
        rows = []
        for n in SGEMM_SIZES:
            module = os.path.join(self.work, "sgemm%d.smod" % n)
            cells = []
            for threads in THREADS:
                device = "cpu-sync" if threads == 1 else "cpu-task?threads=%d" % threads
                pairs = "30" if n <= 1024 else "10"
                out = run([os.path.join(self.bin, "sgemm-pairs"), module, str(n), device, pairs])
                line = out.strip().splitlines()[-1]
                # "... pair by pair: 25 % Q1  median M  75 % Q3"
                values = [float(v) for v in re.findall(r"\d+\.\d+", line.split(":")[1])]
                cells.append("%.3f (%.3f - %.3f)" % (values[1], values[0], values[2]))
            rows.append((n, cells))
        return rows


SGEMM_SOURCE = """
func.func @sgemm(%a: tensor<NxNxf32>, %b: tensor<NxNxf32>) -> tensor<NxNxf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<NxNxf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<NxNxf32>) -> tensor<NxNxf32>
  %r = linalg.matmul ins(%a, %b : tensor<NxNxf32>, tensor<NxNxf32>) outs(%c : tensor<NxNxf32>) -> tensor<NxNxf32>
  return %r : tensor<NxNxf32>
}
"""

FMA_PEAK_SOURCE = r"""
#include <stdio.h>
#include <time.h>
/* Independent FMA chains: enough to cover the FMA latency on both ports,
   few enough that they, x and y stay in registers (AVX2 and SSE have 16:
   16 chains spilled there and read 54 of about 75 GFLOP/s on a Zen 3). */
#if defined(__AVX512F__)
#define LANES 16
#define CHAINS 16
#elif defined(__AVX__)
#define LANES 8
#define CHAINS 12
#else
#define LANES 4
#define CHAINS 12
#endif
typedef float v __attribute__((vector_size(LANES * 4)));
int main(void) {
  v acc[CHAINS], x, y;
  for (int i = 0; i < LANES; ++i) { x[i] = 1.0f; y[i] = 1e-9f; }
  for (int j = 0; j < CHAINS; ++j) acc[j] = x * (float)j;
  const long steps = 20000000;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long s = 0; s < steps; ++s) {
    for (int j = 0; j < CHAINS; ++j) acc[j] = acc[j] * x + y;
    __asm__ volatile("" : "+v"(x));
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  float sink = 0;
  for (int j = 0; j < CHAINS; ++j) sink += acc[j][0];
  double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%.1f\n", steps * (double)CHAINS * LANES * 2 / seconds / 1e9 + 0 * sink);
  return 0;
}
"""


def fmt(value, scale, width=9):
    if value is None:
        return f"{'-':>{width}}"
    value *= scale
    return f"{value:>{width}.{2 if value < 10 else 1 if value < 1000 else 0}f}"


def print_models(title, rows):
    print(title)
    print(f"{'model':<20}{'strata':>9}{'ort':>9}{'torch':>9}{'ratio':>7}   "
          f"{'strata':>9}{'ort':>9}{'torch':>9}{'ratio':>7}   {'2t/1t':>6}")
    print(f"{'':<20}{'-- 1 thread ------------------':<37}   {'-- 2 threads -----------------':<37}")
    for name, unit, row in rows:
        scale = 1e6 if unit == "us" else 1e3
        cells = []
        for t in THREADS:
            s = row.get("strata%d" % t)
            peers = [row.get(k) for k in ("ort%d" % t, "torch%d" % t) if row.get(k) is not None]
            ratio = f"{s / min(peers):>7.2f}" if s is not None and peers else f"{'-':>7}"
            cells.append(fmt(s, scale) + fmt(row.get("ort%d" % t), scale) +
                         fmt(row.get("torch%d" % t), scale) + ratio)
        s1, s2 = row.get("strata1"), row.get("strata2")
        scaling = f"{s2 / s1:>6.2f}" if s1 and s2 else f"{'-':>6}"
        print(f"{name + ' (' + unit + ')':<20}{cells[0]}   {cells[1]}   {scaling}")
    print("ratio: Strata's time over the best peer's (the bar: <= 1.00); 2t/1t: Strata on 2 "
          "threads over 1 (the bar: <= 1.00)\n")
    paired = [(name, row["paired"]) for name, _, row in rows if "paired" in row]
    if paired:
        print("The same in one process, engines taking turns (--paired-rounds rounds): per round,")
        print("Strata's time over the best peer's, and Strata's 2 threads over 1; median (25 % - 75 %)")
        print(f"{'model':<20}{'ratio 1 thread':>22}{'ratio 2 threads':>22}{'2t/1t':>22}")
        for name, ratios in paired:
            cells = "".join(f"{'%.2f (%.2f - %.2f)' % (q[1], q[0], q[2]):>22}"
                            for q in (ratios["ratio1"], ratios["ratio2"], ratios["2t/1t"]))
            print(f"{name:<20}{cells}")
        print()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--paired-worker":
        paired_worker(json.loads(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--paired-rounds", type=int, default=15,
                        help="rounds of the one-process comparison per model (0: none)")
    parser.add_argument("--only", nargs="*", help="these real-model families only (none: skip)")
    parser.add_argument("--no-samples", action="store_true")
    parser.add_argument("--no-sgemm", action="store_true")
    args = parser.parse_args()
    bench = Bench(args)
    bench.ensure_ort()
    sys.path.insert(0, bench.packages)
    import onnxruntime
    import torch
    print("Strata against ONNX Runtime %s and PyTorch %s eager; medians of %d processes"
          % (onnxruntime.__version__, torch.__version__, args.processes), flush=True)
    # The real models first: their exports run in forked children, which a parent that
    # has already run torch (the samples' ONNX exports) could deadlock.
    zoo_rows = bench.zoo_models() if args.only is None or args.only else None
    if not args.no_samples:
        print_models("\nSample models, microseconds per call", bench.samples())
    if zoo_rows is not None:
        print_models("Real-model suite (batch 1), milliseconds per call", zoo_rows)
    if not args.no_sgemm:
        peak = bench.fma_peak()
        rows, have_dnnl = bench.sgemm()
        print("SGEMM f32 row-major, GFLOP/s (%% of the measured FMA peak: %.0f GFLOP/s per core)"
              % peak)
        if not have_dnnl:
            print("  (no libdnnl: apt-get install libdnnl-dev)")
        print(f"{'n':<6}{'strata 1t':>16}{'oneDNN 1t':>16}{'ratio':>7}   "
              f"{'strata 2t':>16}{'oneDNN 2t':>16}{'ratio':>7}")
        for n, row in rows:
            flops = 2.0 * n ** 3
            line = f"{n:<6}"
            for t in THREADS:
                cells = []
                for engine in ("strata", "dnnl"):
                    s = row.get("%s%d" % (engine, t))
                    cells.append(f"{flops / s / 1e9:>8.1f} ({100 * flops / s / 1e9 / (peak * t):>3.0f}%)"
                                 if s else f"{'-':>16}")
                d, s = row.get("dnnl%d" % t), row.get("strata%d" % t)
                line += "".join(cells) + (f"{d / s:>7.2f}" if d and s else f"{'-':>7}") + "   "
            print(line)
        print("ratio: Strata's GFLOP/s over oneDNN's (the bar: >= 1.00)")
        if have_dnnl:
            print("\nSGEMM in one process, calls of Strata and oneDNN alternating (sgemm-pairs):")
            print("ratio of Strata's GFLOP/s over oneDNN's, pair by pair: median (25 % - 75 %)")
            print(f"{'n':<6}{'1 thread':>24}{'2 threads':>24}")
            for n, cells in bench.sgemm_pairs():
                print(f"{n:<6}" + "".join(f"{c:>24}" for c in cells))


if __name__ == "__main__":
    main()
