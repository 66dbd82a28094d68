#!/usr/bin/env bash
# Cross-builds the runtime and its VM and HAL tests for aarch64 and runs them
# under qemu-user. Skips (exit 0 with one line) when the cross tools are
# absent.
# usage: aarch64_qemu.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found (apt-get install g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"
    exit 0
  fi
done
cmake -G Ninja -S "$src" -B "$work" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_COMPILER=OFF -DSTRATA_BUILD_FUZZERS=OFF \
  -DSTRATA_BUILD_BENCHMARKS=OFF -DSTRATA_DRIVER_CPU_TASK=OFF > "$work.configure.log" 2>&1 \
  || { cat "$work.configure.log"; exit 1; }
cmake --build "$work" --target vm_unit_tests hal_tests elf_loader_test
ctest --test-dir "$work" -L "vm|hal" -E "build\." --output-on-failure
