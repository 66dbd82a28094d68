#!/usr/bin/env python3
"""Checks the runtime's layering: every quoted #include in a runtime folder
must name a folder that its layer may use (docs/ARCHITECTURE.md, "Layers").

    check_layers.py SOURCE_DIR

Prints one line per include that crosses a rule ("file:line: hal/ may not
include vm/context.h (allowed: ...)") and exits 1, or prints a summary and
exits 0. No runtime file may include LLVM, MLIR or clang headers.
"""
import pathlib
import re
import sys

# Layers, the most specific folder first: (folder, the folders a file in it
# may include from, the narrower folders among those it still may not).
# "schemas/" covers the FlatBuffers headers generated from schemas/
# ("strata/schemas/...").
BASE = ("vm/base/",)
SCHEMAS = ("schemas/", "strata/schemas/")
VM = BASE + SCHEMAS + ("vm/",)
HAL = BASE + SCHEMAS + ("hal/",)
GLUE = ("hal/module/",)
TOP = VM + HAL + ("drivers/registry.", "drivers/runtime/")
LAYERS = [
    ("vm/base/", BASE, ()),
    ("vm/", VM, ()),                          # nothing of hal/
    ("hal/module/", VM + HAL, ()),            # the VM <-> HAL glue
    ("hal/", HAL, GLUE),                      # nothing of vm/ but its base
    ("drivers/cpu/", HAL + ("drivers/cpu/",), GLUE),
    ("drivers/vulkan/", HAL + ("drivers/vulkan/",), GLUE),
    ("drivers/stream/", HAL + ("drivers/stream/",), GLUE),  # shared by the drivers below
    ("drivers/cuda/", HAL + ("drivers/stream/", "drivers/cuda/"), GLUE),
    ("drivers/rocm/", HAL + ("drivers/stream/", "drivers/rocm/"), GLUE),
    ("drivers/registry.", HAL + ("drivers/registry.", "drivers/cpu/", "drivers/vulkan/", "drivers/cuda/",
                                 "drivers/rocm/"), GLUE),
    ("drivers/runtime/", TOP, ()),
    ("schemas/", SCHEMAS, ()),
    ("tools/common/", TOP + ("tools/common/",), ()),
]
SOURCES = {".h", ".hpp", ".cc", ".cpp", ".c", ".def", ".inc"}
QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
FORBIDDEN = re.compile(r'^\s*#\s*include\s*[<"](llvm|mlir|clang)/')


def layer_of(path):
    for layer in LAYERS:
        if path.startswith(layer[0]):
            return layer
    return None


def may_include(allowed, forbidden, target):
    return (any(target.startswith(p) for p in allowed)
            and not any(target.startswith(p) for p in forbidden))


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1]).resolve()
    violations, files, includes = [], 0, 0
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        layer = layer_of(rel)
        if layer is None:
            continue
        folder, allowed, forbidden = layer
        files += 1
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if FORBIDDEN.match(line):
                violations.append(f"{rel}:{number}: the runtime may not include LLVM, MLIR or clang: {line.strip()}")
                continue
            match = QUOTED.match(line)
            if not match:
                continue
            includes += 1
            target = match.group(1)
            if "/" not in target:   # a file beside it
                continue
            if not may_include(allowed, forbidden, target):
                violations.append(f"{rel}:{number}: {folder} may not include {target} "
                                  f"(allowed: {', '.join(allowed)}"
                                  + (f"; not {', '.join(forbidden)})" if forbidden else ")"))
    for violation in violations:
        print(violation)
    if violations:
        print(f"FAIL: {len(violations)} include(s) cross a layer rule (docs/ARCHITECTURE.md)")
        return 1
    if files == 0:
        print(f"FAIL: no runtime sources under {root}")
        return 1
    print(f"layers OK: {includes} includes in {files} runtime files keep to the rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
