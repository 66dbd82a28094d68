#!/usr/bin/python3
"""HAL dispatch overhead and scaling on the CPU drivers, beside PyTorch eager's
per-op time, in one run: runs build/bin/hal-bench (Google Benchmark, medians of
repetitions) and tests/benchmarks/torch_chained_adds.py, then prints the
figures the HAL issue sets bars for.

  /usr/bin/python3 tests/benchmarks/hal_vs_torch.py [--build-dir build]
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()

    out = subprocess.run([os.path.join(args.build_dir, "bin", "hal-bench"), "--benchmark_format=json",
                          f"--benchmark_repetitions={args.repetitions}",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    medians = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            medians[b["run_name"]] = b

    def ns(name):
        return medians[name]["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[medians[name]["time_unit"]]

    def per_dispatch(name):
        # A rate counter inverted: seconds per dispatch.
        return medians[name]["ns_per_dispatch"] * 1e9

    torch_out = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "torch_chained_adds.py"), "--repeats", "2000"],
                               capture_output=True, text=True)
    torch_ns = {}
    for line in torch_out.stdout.splitlines():
        m = re.match(r"\s+(out-of-place|in-place)\s.*?([\d.]+) ns/op", line)
        if m:
            torch_ns[m.group(1)] = float(m.group(2))
    torch_note = (f"PyTorch eager {torch_ns['in-place']:.0f} ns/op in place, {torch_ns['out-of-place']:.0f} out of place"
                  if torch_ns else "PyTorch unavailable: " + (torch_out.stderr.strip().splitlines() or ["?"])[-1])

    rows = [
        ("cpu-sync ns/dispatch, 100-dispatch chain (replayed)", per_dispatch("DispatchChain/cpu-sync/replay/real_time"), "<= 200"),
        ("cpu-sync ns/dispatch, chain recorded every time", per_dispatch("DispatchChain/cpu-sync/record/real_time"), "<= 200"),
        ("cpu-task ns/dispatch, chain (replayed)", per_dispatch("DispatchChain/cpu-task/replay/real_time"), ""),
        ("cpu-task ns/dispatch, chain recorded every time", per_dispatch("DispatchChain/cpu-task/record/real_time"), ""),
        ("cpu-task submit-and-wait round trip, ns", ns("SubmitRoundTrip/cpu-task/real_time"), "<= 5000"),
    ]
    sync16 = ns("Elementwise16M/cpu-sync/add/real_time")
    task16 = ns("Elementwise16M/cpu-task?threads=2/add/real_time")
    print(f"hal-bench medians of {args.repetitions}; {torch_note}")
    for name, value, bar in rows:
        print(f"  {name:<55}{value:>12.1f}   {bar}")
    print(f"  {'16M-element add: cpu-sync ms':<55}{sync16 / 1e6:>12.2f}")
    print(f"  {'16M-element add: cpu-task, 2 threads ms':<55}{task16 / 1e6:>12.2f}")
    print(f"  {'  speed-up over cpu-sync':<55}{sync16 / task16:>12.2f}x  >= 1.7")
    split1 = per_dispatch("SplitChain/cpu-sync/real_time")
    split2 = per_dispatch("SplitChain/cpu-task?threads=2/real_time")
    print(f"  {'16-workgroup chain: cpu-sync ns/dispatch':<55}{split1:>12.1f}")
    print(f"  {'16-workgroup chain: cpu-task, 2 threads ns/dispatch':<55}{split2:>12.1f}")
    print(f"  {'  2 threads over 1':<55}{split2 / split1:>12.2f}   <= 1.00")
    print(f"  {'  what a split costs a dispatch (2t - 1t/2), ns':<55}{split2 - split1 / 2:>12.1f}")
    if torch_ns:
        print(f"  {'cpu-sync recorded chain vs PyTorch in place':<55}"
              f"{per_dispatch('DispatchChain/cpu-sync/record/real_time') / torch_ns['in-place']:>12.2f}x")


if __name__ == "__main__":
    sys.exit(main())
