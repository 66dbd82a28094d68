#!/usr/bin/env bash
# Cross-builds the runtime and its VM and HAL tests for aarch64, with GCC and
# (where clang-22 is installed) with clang, and runs them under qemu-user. With a compiler build, also compiles the sample MLP once for
# both x86_64 and aarch64 and checks that the aarch64 run-module, under qemu,
# gives the host's results from the same file. Skips (exit 0 with one line)
# when the cross tools are absent.
# usage: aarch64_qemu.sh SOURCE_DIR WORK_DIR [BIN_DIR MODELS_DIR]
set -euo pipefail
src=$1 work=$2 bin=${3:-} models=${4:-}
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found (apt-get install g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"
    exit 0
  fi
done
# The GCC build runs the VM's portable driver loop; the clang build (the
# compiler of Android's and Apple's toolchains) its tail-call dispatch under
# AArch64's preserve_none. Both run the VM and HAL tests.
configure() {  # BUILD_DIR TOOLCHAIN_FILE
  cmake -G Ninja -S "$src" -B "$1" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/$2" \
    -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_COMPILER=OFF -DSTRATA_BUILD_FUZZERS=OFF \
    -DSTRATA_BUILD_BENCHMARKS=OFF -DSTRATA_DRIVER_CPU_TASK=OFF > "$1.configure.log" 2>&1 \
    || { cat "$1.configure.log"; exit 1; }
  # vulkan_tests, cuda_tests, rocm_tests and libstrata too: there is no
  # Vulkan loader, CUDA driver or HIP library for aarch64 here, so those
  # drivers must report themselves unavailable and link nothing.
  cmake --build "$1" --target vm_unit_tests hal_tests elf_loader_test run-module vulkan_tests cuda_tests \
    rocm_tests strata
  ctest --test-dir "$1" -L "vm|hal" -E "build\." --output-on-failure
}
configure "$work" aarch64-linux-gnu.cmake
if command -v clang++-22 >/dev/null; then
  configure "$work-clang" aarch64-linux-gnu-clang.cmake
fi

if [[ -n "$bin" ]]; then
  module=$work/mlp.both.smod
  "$bin/compile-module" "$models/mlp.mlir" -o "$module" \
    --cpu-triple=x86_64-linux-gnu,aarch64-linux-gnu
  "$bin/run-module" --module="$module" --function=predict_batch32 --device=cpu-sync \
    --input=32x784xf32=0.25 --output=@"$work/mlp.host.npy"
  for build in "$work" "$work-clang"; do
    [[ -x "$build/bin/run-module" ]] || continue
    qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/bin/run-module" --module="$module" \
      --function=predict_batch32 --device=cpu-sync --input=32x784xf32=0.25 \
      --expected-output=@"$work/mlp.host.npy" --atol=1e-5 --rtol=1e-5
    echo "mlp.predict_batch32 on aarch64 (qemu, $(basename "$build")) matches x86_64 from the same module file"
  done
fi
