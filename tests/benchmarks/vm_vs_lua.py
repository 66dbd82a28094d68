#!/usr/bin/env python3
"""Strata's VM against Lua 5.4 on the same two programs, in the same run.

loop(n): sum 1..n with a counted loop  (samples/vm/loop.mlir; lua/loop_for.lua with
         Lua's numeric for, and lua/loop_while.lua with an explicit counter)
fib(n):  recursive Fibonacci            (samples/vm/fib.mlir, lua/fib.lua)

The bars compare against the faster Lua variant (numeric for).

Wall time: in-process timing of each call (vm-bench; os.clock() in Lua),
several repetitions, medians reported. Instructions: valgrind --tool=callgrind
at two sizes, so that start-up cancels out of the difference.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def fib_calls(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1  # calls made by fib(n) = 2 * fib(n + 1) - 1


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def timings(cmd, expected):
    seconds = []
    for line in run(cmd).stdout.split("\n"):
        if not line.strip():
            continue
        result, t = line.split()
        value = result.split("=")[-1]
        if value != str(expected):
            sys.exit(f"wrong result from {' '.join(cmd)}: expected {expected}, got {value}")
        seconds.append(float(t))
    return statistics.median(seconds)


def instructions(cmd):
    out = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd).stderr
    return int(re.search(r"Collected : (\d+)", out).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--loop-n", type=int, default=100_000_000)
    parser.add_argument("--fib-n", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    bin_dir = os.path.join(args.build_dir, "bin")
    out_dir = os.path.join(args.build_dir, "bench")
    os.makedirs(out_dir, exist_ok=True)
    smod = {}
    for name in ("loop", "fib"):
        smod[name] = os.path.join(out_dir, name + ".smod")
        run([os.path.join(bin_dir, "compile-module"), os.path.join(ROOT, "samples", "vm", name + ".mlir"),
             "-o", smod[name]])
    bench = os.path.join(bin_dir, "vm-bench")
    lua = ["lua5.4"]

    def strata_cmd(name, arg, repeats):
        return [bench, smod[name], name, arg, str(repeats)]

    def lua_cmd(name, n, repeats):
        return lua + [os.path.join(HERE, "lua", name + ".lua"), str(n), str(repeats)]

    n, fn = args.loop_n, args.fib_n
    loop_sum = n * (n + 1) // 2
    a, b = 0, 1
    for _ in range(fn):
        a, b = b, a + b
    fib_value = a

    s_loop = timings(strata_cmd("loop", f"i64={n}", args.repeats), loop_sum) / n * 1e9
    l_loop = timings(lua_cmd("loop_for", n, args.repeats), loop_sum) / n * 1e9
    l_loop_while = timings(lua_cmd("loop_while", n, args.repeats), loop_sum) / n * 1e9
    calls = fib_calls(fn)
    s_fib = timings(strata_cmd("fib", f"i32={fn}", args.repeats), fib_value) / calls * 1e9
    l_fib = timings(lua_cmd("fib", fn, args.repeats), fib_value) / calls * 1e9

    n1, n2 = 200_000, 400_000
    s_loop_ir = (instructions(strata_cmd("loop", f"i64={n2}", 1)) -
                 instructions(strata_cmd("loop", f"i64={n1}", 1))) / (n2 - n1)
    l_loop_ir = (instructions(lua_cmd("loop_for", n2, 1)) - instructions(lua_cmd("loop_for", n1, 1))) / (n2 - n1)
    l_loop_while_ir = (instructions(lua_cmd("loop_while", n2, 1)) -
                       instructions(lua_cmd("loop_while", n1, 1))) / (n2 - n1)
    f1, f2 = 18, 21
    dcalls = fib_calls(f2) - fib_calls(f1)
    s_fib_ir = (instructions(strata_cmd("fib", f"i32={f2}", 1)) -
                instructions(strata_cmd("fib", f"i32={f1}", 1))) / dcalls
    l_fib_ir = (instructions(lua_cmd("fib", f2, 1)) - instructions(lua_cmd("fib", f1, 1))) / dcalls

    lua_version = run(lua + ["-v"]).stdout.strip()
    print(f"Strata VM vs {lua_version}; wall: median of {args.repeats} runs; instructions: callgrind")
    print(f"{'measure':<34}{'strata':>10}{'lua':>10}{'strata/lua':>12}   bar")
    rows = [
        (f"loop({n}) ns/iteration", s_loop, l_loop, "ratio <= 0.50"),
        (f"  vs lua while-loop", s_loop, l_loop_while, ""),
        (f"fib({fn}) ns/call", s_fib, l_fib, ""),
        ("loop instructions/iteration", s_loop_ir, l_loop_ir, "strata <= 35"),
        ("  vs lua while-loop", s_loop_ir, l_loop_while_ir, ""),
        ("fib instructions/call", s_fib_ir, l_fib_ir, "strata <= 150"),
    ]
    for name, s, l, bar in rows:
        print(f"{name:<34}{s:>10.2f}{l:>10.2f}{s / l:>12.2f}   {bar}")


if __name__ == "__main__":
    main()
