#!/usr/bin/env python3
"""Sums `nm -C -S --size-sort` output (stdin) by part of the runtime, from the
symbols' namespaces and names. With link-time optimization, code inlined into
a function counts for that function's part."""
import collections
import sys

# (part, what a symbol's demangled name contains), first match wins.
PARTS = [
    ("C API and session (drivers/runtime)", ("strata_", "strata::api", "strata::runtime")),
    ("hal module (hal/module)", ("AddFunctions", "CreateHalModule", "strata::hal::(anonymous namespace)::")),
    ("interpreter (vm)", ("vm::(anonymous namespace)::Op_", "vm::(anonymous namespace)::Interp", "kHandlers")),
    ("verifier + decoder (vm)", ("Verif", "Decode", "kOpInfo")),
    ("integrity: XXH3, Ed25519 (vm)", ("ntegrity", "XXH", "Hash(")),
    ("module loader (vm)", ("BytecodeModule", "flatbuffers", "strata::schema::")),
    ("ELF loader (drivers/cpu)", ("Loader", "ElfLibrary")),
    ("cpu-sync driver (drivers/cpu)", ("strata::cpu", "cpu_indicator", "cpu_feature", "cpu_model")),
    ("driver registry (drivers)", ("strata::drivers",)),
    ("VM other (vm)", ("strata::vm",)),
    ("HAL (hal)", ("strata::hal",)),
    ("base layer (vm/base)", ("strata::",)),
    ("C++ library templates", ("std::", "__gnu_cxx")),
]


def main():
    totals = collections.Counter()
    for line in sys.stdin:
        fields = line.split(None, 3)
        if len(fields) < 4:
            continue
        size, name = int(fields[1], 16), fields[3].strip()
        part = next((p for p, keys in PARTS if any(k in name for k in keys)), "other")
        totals[part] += size
    grand = sum(totals.values())
    for part, size in totals.most_common():
        print(f"  {part:36s} {size:8d} bytes  {100.0 * size / grand:5.1f} %")
    print(f"  {'all symbols':36s} {grand:8d} bytes")


if __name__ == "__main__":
    main()
