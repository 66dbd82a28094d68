#!/usr/bin/python3
"""PyTorch eager's time per op for 100 chained 16-element float adds.

The peer figure for hal-bench's DispatchChain benchmarks (100 dependent
16-element add dispatches in one command buffer): how long an eager framework
takes per tiny op, where dispatch overhead is everything. Two forms:

  out-of-place   x = x + ones             (a new tensor per op, as a graph would)
  in-place       torch.add(x, ones, out=x)

Runs under the system Python, which has Debian's python3-torch:
  /usr/bin/python3 tests/benchmarks/torch_chained_adds.py [--repeats N]
"""
import argparse
import statistics
import time

import torch

CHAIN = 100
ELEMENTS = 16


def time_chain(step, repeats):
    """Median nanoseconds per op over `repeats` chains of CHAIN ops."""
    per_op = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        step()
        per_op.append((time.perf_counter_ns() - start) / CHAIN)
    return statistics.median(per_op)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=2000, help="chains to time (median is reported)")
    args = parser.parse_args()

    ones = torch.ones(ELEMENTS, dtype=torch.float32)

    def out_of_place():
        x = torch.zeros(ELEMENTS, dtype=torch.float32)
        for _ in range(CHAIN):
            x = x + ones
        return x

    x = torch.zeros(ELEMENTS, dtype=torch.float32)

    def in_place():
        for _ in range(CHAIN):
            torch.add(x, ones, out=x)

    with torch.inference_mode():
        for step in (out_of_place, in_place):  # warm up allocator and dispatcher caches
            time_chain(step, 50)
        assert out_of_place()[0].item() == CHAIN
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
              f"{CHAIN} chained {ELEMENTS}-element f32 adds, median of {args.repeats}")
        print(f"  out-of-place  x = x + ones               {time_chain(out_of_place, args.repeats):8.1f} ns/op")
        print(f"  in-place      torch.add(x, ones, out=x)  {time_chain(in_place, args.repeats):8.1f} ns/op")


if __name__ == "__main__":
    main()
