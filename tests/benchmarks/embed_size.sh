#!/usr/bin/env bash
# The size of a minimal embedding: libstrata.so with the VM, the HAL, the
# cpu-sync driver, the CPU executable loader and the C API -- no compiler, no
# tools, no oneTBB (cpu-task off) -- stripped, for x86_64 and for aarch64
# (cross-built with cmake/aarch64-linux-gnu.cmake), in the Release and
# MinSizeRel configurations.
#   tests/benchmarks/embed_size.sh [WORK_DIR]      (default /tmp/strata-embed-size)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/strata-embed-size}
mkdir -p "$work"

minimal=(-DSTRATA_BUILD_COMPILER=OFF -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_FUZZERS=OFF
         -DSTRATA_BUILD_BENCHMARKS=OFF -DSTRATA_DRIVER_CPU_TASK=OFF)

size_of() {  # size_of ARCH CONFIG STRIP [cmake args...]
  local arch=$1 config=$2 strip=$3; shift 3
  local dir=$work/$arch-$config
  cmake -G Ninja -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE="$config" "${minimal[@]}" "$@" > "$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" --target strata > "$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
  "$strip" --strip-all -o "$dir/libstrata.stripped.so" "$dir/lib/libstrata.so"
  local bytes needed
  bytes=$(stat -c %s "$dir/libstrata.stripped.so")
  needed=$(readelf -d "$dir/lib/libstrata.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  printf "  %-8s %-10s %8d bytes (%4d KiB)   needs: %s\n" "$arch" "$config" "$bytes" "$(( (bytes + 512) / 1024 ))" "$needed"
}

echo "libstrata.so, stripped: VM + HAL + cpu-sync + CPU executable loader + C API"
for config in Release MinSizeRel; do
  size_of x86_64 "$config" strip
  if command -v aarch64-linux-gnu-g++ > /dev/null; then
    size_of aarch64 "$config" aarch64-linux-gnu-strip -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake"
  else
    echo "  aarch64  skipped: aarch64-linux-gnu-g++ not found (apt-get install g++-aarch64-linux-gnu)"
  fi
done
