#!/usr/bin/env bash
# The size of a minimal embedding: libstrata.so with the VM, the HAL, the
# cpu-sync driver, the CPU executable loader and the C API -- no compiler, no
# tools, no oneTBB (cpu-task off), no Vulkan or CUDA driver -- stripped, for x86_64
# and for aarch64 (cross-built with cmake/aarch64-linux-gnu*.cmake), in three
# configurations:
#   Release      every feature, -O2
#   MinSizeRel   every feature, -Os
#   smallest     clang -Oz with the embedder's switches (docs/embedding.md):
#                STRATA_SIZE_OPTIMIZED (no exceptions, no RTTI, section GC,
#                LTO, identical code folding, the machine outliner), STRATA_STATUS_MESSAGES=OFF
#                (error codes without messages), STRATA_TRACING=OFF
# and, for the smallest, the bytes of each part of the runtime (from the
# symbols of the unstripped library).
#   tests/benchmarks/embed_size.sh [WORK_DIR]      (default /tmp/strata-embed-size)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/strata-embed-size}
mkdir -p "$work"

minimal=(-DSTRATA_BUILD_COMPILER=OFF -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_FUZZERS=OFF
         -DSTRATA_BUILD_BENCHMARKS=OFF -DSTRATA_DRIVER_CPU_TASK=OFF -DSTRATA_DRIVER_VULKAN=OFF
         -DSTRATA_DRIVER_CUDA=OFF)
smallest=(-DCMAKE_BUILD_TYPE=MinSizeRel "-DCMAKE_CXX_FLAGS_MINSIZEREL=-Oz -DNDEBUG"
          -DSTRATA_SIZE_OPTIMIZED=ON -DSTRATA_STATUS_MESSAGES=OFF -DSTRATA_TRACING=OFF)

size_of() {  # size_of ARCH NAME STRIP [cmake args...]
  local arch=$1 name=$2 strip=$3; shift 3
  local dir=$work/$arch-$name
  cmake -G Ninja -S "$src" -B "$dir" "${minimal[@]}" "$@" > "$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" --target strata > "$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
  "$strip" --strip-all -o "$dir/libstrata.stripped.so" "$dir/lib/libstrata.so"
  local bytes needed
  bytes=$(stat -c %s "$dir/libstrata.stripped.so")
  needed=$(readelf -d "$dir/lib/libstrata.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  printf "  %-8s %-11s %8d bytes (%4d KiB)   needs: %s\n" "$arch" "$name" "$bytes" "$(( (bytes + 512) / 1024 ))" "$needed"
}

have_aarch64=1
command -v aarch64-linux-gnu-g++ > /dev/null || have_aarch64=0

echo "libstrata.so, stripped: VM + HAL + cpu-sync + CPU executable loader + C API"
for config in Release MinSizeRel; do
  size_of x86_64 "$config" strip -DCMAKE_BUILD_TYPE="$config"
  if [ $have_aarch64 = 1 ]; then
    size_of aarch64 "$config" aarch64-linux-gnu-strip -DCMAKE_BUILD_TYPE="$config" \
      -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake"
  fi
done
size_of x86_64 smallest strip -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 "${smallest[@]}"
if [ $have_aarch64 = 1 ]; then
  size_of aarch64 smallest aarch64-linux-gnu-strip "${smallest[@]}" \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu-clang.cmake"
else
  echo "  aarch64  skipped: aarch64-linux-gnu-g++ not found (apt-get install g++-aarch64-linux-gnu)"
fi

echo
echo "the bar: 150 KB (150,000 bytes) smallest, on both; before this work (MinSizeRel, no switches):"
echo "  x86_64 383,736 bytes, aarch64 396,056 bytes"

echo
echo "x86_64 smallest, by part (bytes of code and data in the library's symbols):"
nm -C -S --size-sort "$work/x86_64-smallest/lib/libstrata.so" | python3 "$src/tests/benchmarks/size_by_part.py"
