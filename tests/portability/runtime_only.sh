#!/usr/bin/env bash
# Proves the runtime stands alone: configures and builds the tree with the
# compiler switched off and with every switch that makes the runtime smaller
# (STRATA_SIZE_OPTIMIZED, STRATA_STATUS_MESSAGES=OFF, STRATA_TRACING=OFF;
# docs/embedding.md), checks that the runtime tools and libstrata.so link
# nothing of LLVM or MLIR nor the Vulkan loader, and that `cmake --install`
# installs the embedding package. Given the full build's tools and the sample
# models, it runs a model on that runtime against the full runtime's result,
# and checks that a bad input still fails with its error code; where a Vulkan
# device is, it reads results back through staging as on a discrete GPU.
# CTest builds it with GCC where installed (the main build uses clang), so
# that code which only one compiler's choices hide (the order in which a
# call's arguments are evaluated, say) fails one of the two builds.
# (check_layers.py proves that no runtime source includes an LLVM or MLIR
# header.)
# usage: runtime_only.sh SOURCE_DIR WORK_DIR C_COMPILER CXX_COMPILER [BIN_DIR MODELS_DIR]
set -euo pipefail
src=$1 work=$2 cc=$3 cxx=$4 bin=${5:-} models=${6:-}

# A build made with other compilers starts again (CMake keeps the first ones).
if [[ -f "$work/CMakeCache.txt" ]] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$cxx" "$work/CMakeCache.txt"; then
  rm -rf "$work"
fi

cmake -G Ninja -S "$src" -B "$work" -DSTRATA_BUILD_COMPILER=OFF -DSTRATA_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DSTRATA_SIZE_OPTIMIZED=ON -DSTRATA_STATUS_MESSAGES=OFF -DSTRATA_TRACING=OFF > "$work.configure.log" 2>&1 \
  || { cat "$work.configure.log"; exit 1; }
if grep -qE '^(MLIR_DIR|LLVM_DIR)' "$work/CMakeCache.txt"; then
  echo "FAIL: the runtime-only configuration looked for LLVM or MLIR"; exit 1
fi
cmake --build "$work" --target run-module dump-module strata
for tool in bin/run-module bin/dump-module lib/libstrata.so; do
  if ldd "$work/$tool" | grep -iE 'libLLVM|libMLIR'; then
    echo "FAIL: $tool links LLVM/MLIR"; exit 1
  fi
  # The Vulkan driver opens the loader at run time.
  if readelf -d "$work/$tool" | grep -i 'NEEDED.*libvulkan'; then
    echo "FAIL: $tool links the Vulkan loader"; exit 1
  fi
done
# The embedding package installs as from a full build.
rm -rf "$work/install"
cmake --install "$work" --prefix "$work/install" > "$work.install.log"
for file in include/strata/strata.h lib/libstrata.so lib/cmake/Strata/StrataConfig.cmake lib/pkgconfig/strata.pc; do
  [ -e "$work/install/$file" ] || { echo "FAIL: cmake --install did not install $file"; cat "$work.install.log"; exit 1; }
done
if [[ -n "$bin" ]]; then
  module=$work/mlp.smod
  "$bin/compile-module" "$models/mlp.mlir" -o "$module"
  "$bin/run-module" --module="$module" --function=predict_batch32 --device=cpu-sync \
    --input=32x784xf32=0.25 --output=@"$work/mlp.full.npy"
  "$work/bin/run-module" --module="$module" --function=predict_batch32 --device=cpu-sync \
    --input=32x784xf32=0.25 --expected-output=@"$work/mlp.full.npy" --atol=0 --rtol=0
  # Without messages an error is its code alone, and still an error.
  if out=$("$work/bin/run-module" --module="$module" --function=predict_batch32 --device=cpu-sync \
             --input=2x784xf32=0.25 2>&1); then
    echo "FAIL: a 2x784 input to predict_batch32 (32x784) succeeded: $out"; exit 1
  fi
  grep -q "INVALID_ARGUMENT" <<< "$out" || { echo "FAIL: expected INVALID_ARGUMENT, got: $out"; exit 1; }
  echo "mlp.predict_batch32 on the smallest runtime matches the full runtime; a wrong shape fails: $out"
  # Where a Vulkan device is (lavapipe in CI): results in device-local memory
  # the host cannot map, read back through staging (the class index of
  # mlp.classify by hal.buffer.map), as on a discrete GPU.
  if XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp} "$work/bin/run-module" --list-devices 2>&1 |
       grep -A1 '^vulkan' | grep -q 'available'; then
    gpu_module=$work/mlp.vulkan.smod
    "$bin/compile-module" "$models/mlp.mlir" --target=cpu,vulkan -o "$gpu_module"
    "$bin/run-module" --module="$gpu_module" --function=classify --device=cpu-sync \
      --input=1x784xf32=0.25 --output=@"$work/classify.scores.npy" --output=@"$work/classify.class.npy"
    XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp} "$work/bin/run-module" --module="$gpu_module" --function=classify \
      "--device=vulkan?unified_memory=0" --input=1x784xf32=0.25 \
      --expected-output=@"$work/classify.scores.npy" --expected-output=@"$work/classify.class.npy"
    echo "mlp.classify on vulkan?unified_memory=0 (staged reads) matches cpu-sync"
  fi
fi
echo "runtime-only build OK: $(ls "$work/bin" | tr '\n' ' ')"
