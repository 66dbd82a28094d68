#!/usr/bin/python3
"""Cold start of the sample MLP: Strata beside PyTorch eager, in one run.

For each of N repetitions (interleaved, so a busy moment hurts all alike):
  - run-module, the whole process: start, load, first result printed;
  - api-cold-start (tests/benchmarks/api_cold_start.c, the C API): the whole
    process, and inside it from creating the instance to the first result;
  - PyTorch eager (tests/benchmarks/torch_cold_start.py) on the same weights,
    as TorchScript and as a state dict loaded into nn.Sequential: the whole
    process, the `import torch` alone, and from loading to the first result.
Prints medians and the ratios, and the time to start an empty process
(/bin/true) for scale. The files stay in the page cache between
repetitions (as for a service restarted, or an app launched twice); the
model is the 784-512-512-10 MLP of samples/models/mlp.mlir, batch 1.

  /usr/bin/python3 tests/benchmarks/cold_start.py [--build-dir build] [--repetitions 10]
  (or: ninja -C build bench-cold-start)
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def read_weights(mlir_path):
    """The dense_resource blobs of mlp.mlir as float32 arrays, by name."""
    text = open(mlir_path).read()
    blobs = {}
    for name, hexdata in re.findall(r'^\s*(\w+): "0x([0-9A-Fa-f]+)"', text, re.M):
        blobs[name] = np.frombuffer(bytes.fromhex(hexdata)[4:], dtype="<f4")  # after the alignment word
    sizes = [784, 512, 512, 10]
    return [(blobs["w%d" % (i + 1)].reshape(sizes[i], sizes[i + 1]), blobs["b%d" % (i + 1)]) for i in range(3)]


def export_torch(layers, work):
    """Saves the MLP as TorchScript and as a state dict; returns both paths."""
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                torch.nn.ReLU(), torch.nn.Linear(512, 10))
    with torch.no_grad():
        for linear, (w, b) in zip([model[0], model[2], model[4]], layers):
            linear.weight.copy_(torch.from_numpy(w.T.copy()))
            linear.bias.copy_(torch.from_numpy(b.copy()))
    script = os.path.join(work, "mlp.pt")
    state = os.path.join(work, "mlp_state.pt")
    torch.jit.save(torch.jit.script(model), script)
    torch.save(model.state_dict(), state)
    return script, state


def timed(command):
    """(wall milliseconds of the whole process, its stdout)."""
    start = time.perf_counter()
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return (time.perf_counter() - start) * 1e3, out


def field(out, name):
    return float(re.search(name + r"=([\d.]+)", out).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repetitions", type=int, default=10)
    args = parser.parse_args()
    bin_dir = os.path.join(args.build_dir, "bin")
    mlir = os.path.join(args.build_dir, "samples", "models", "mlp.mlir")

    work = tempfile.mkdtemp(prefix="strata-cold-start-")
    module = os.path.join(work, "mlp.smod")
    subprocess.run([os.path.join(bin_dir, "compile-module"), mlir, "-o", module], check=True)
    script, state = export_torch(read_weights(mlir), work)
    pattern = np.array([((i * 37) % 256) / 255.0 for i in range(784)], dtype="<f4")
    image = os.path.join(work, "image.raw")
    pattern.tofile(image)

    run_module = [os.path.join(bin_dir, "run-module"), "--module=" + module, "--function=predict",
                  "--input=1x784xf32=@" + image]
    api = [os.path.join(bin_dir, "api-cold-start"), module]
    torch_py = ["/usr/bin/python3", os.path.join(HERE, "torch_cold_start.py")]

    # The same answer everywhere, or the timings compare different work.
    strata_scores = np.array(re.search(r"\[\[(.*)\]\]", timed(run_module + ["--device=cpu-sync"])[1]).group(1).split(),
                             dtype=np.float32)
    torch_scores = np.array(timed(torch_py + ["torchscript", script])[1].split("scores=")[1].split(), dtype=np.float32)
    diff = float(np.max(np.abs(strata_scores - torch_scores)))
    if diff > 1e-4:
        sys.exit("the models disagree: max abs diff %g between Strata and PyTorch" % diff)

    rows = {}

    def add(name, value):
        rows.setdefault(name, []).append(value)

    for _ in range(args.repetitions):
        add("an empty process (/bin/true), for scale", timed(["/bin/true"])[0])
        for device in ["cpu-sync", "cpu-task"]:
            add("run-module --device=%s, whole process" % device, timed(run_module + ["--device=" + device])[0])
        for device in ["cpu-sync", "cpu-task"]:
            wall, out = timed(api + [device])
            add("C API on %s, whole process" % device, wall)
            add("C API on %s, load to first result" % device, field(out, "load_to_result_ms"))
        for kind, path in [("torchscript", script), ("state_dict", state)]:
            wall, out = timed(torch_py + [kind, path])
            add("PyTorch %s, whole process" % kind, wall)
            add("PyTorch %s, import torch" % kind, field(out, "import_ms"))
            add("PyTorch %s, load to first result" % kind, field(out, "load_to_result_ms"))

    medians = {name: statistics.median(values) for name, values in rows.items()}
    print("Cold start of the 784-512-512-10 MLP, batch 1: medians of %d runs (ms); Strata and PyTorch agree "
          "within %.1g" % (args.repetitions, diff))
    for name, value in medians.items():
        print("  %-48s %9.2f" % (name, value))
    torch_process = medians["PyTorch torchscript, whole process"]
    torch_load = medians["PyTorch torchscript, load to first result"]
    print("Ratios (Strata / PyTorch; below 1 Strata is faster):")

    def ratio(label, strata, torch_name):
        r = medians[strata] / medians[torch_name]
        print("  %-62s %7.4f  (%.0fx faster)" % (label, r, 1 / r))

    ratio("run-module (cpu-sync) process / PyTorch TorchScript process",
          "run-module --device=cpu-sync, whole process", "PyTorch torchscript, whole process")
    ratio("C API (cpu-sync) process / PyTorch TorchScript process",
          "C API on cpu-sync, whole process", "PyTorch torchscript, whole process")
    ratio("C API load to result / PyTorch TorchScript load to result",
          "C API on cpu-sync, load to first result", "PyTorch torchscript, load to first result")
    ratio("C API load to result / PyTorch state dict load to result",
          "C API on cpu-sync, load to first result", "PyTorch state_dict, load to first result")

if __name__ == "__main__":
    main()
