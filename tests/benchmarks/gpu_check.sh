#!/bin/bash
# The checks and figures of the GPU drivers on a machine with an NVIDIA GPU, no
# compiler and no network: a runtime-only build and modules compiled on the build
# machine travel in one folder, made there with
#
#   tests/benchmarks/gpu_check.sh --prepare BUILD RUNTIME_BUILD DIR
#
# (BUILD: a full build; RUNTIME_BUILD: one with -DSTRATA_BUILD_COMPILER=OFF), and run
# on the GPU machine, from the source tree, with
#
#   tests/benchmarks/gpu_check.sh DIR [LOG_DIR]
#
# It runs the HAL conformance suite and the driver tests on cuda and vulkan, the sample
# models on both against NumPy (tests/e2e/check_models.py), the real models that fit a
# GPU machine's transfer (REAL_MODELS below, compiled --target=cuda,vulkan) on both
# against PyTorch's outputs (tests/models/check_models.py --run-only), the op coverage
# suite on vulkan (tests/e2e/check_ops.py --run-only, 8 shards side by side; cuda's
# ran before) and its matmul and convolution tile families on cuda (CUDA_OPS_FAMILIES),
# compiled for the default archs and, on a GPU of compute capability 9.0, for sm_90a
# (wgmma), and (in gpu_bench.py) the carried real models against PyTorch eager where the machine's
# Python has torchvision and transformers, then tests/benchmarks/gpu_bench.py (GEMM 4096^3, the samples and ResNet-18's
# convolutions, in two builds, against PyTorch CUDA). Each step has its own time limit; the summary names the steps that
# failed. STEPS="models real-models ..." runs only the steps it names; BENCH_ARGS passes
# gpu_bench.py options (--samples= times the GEMMs alone, --drivers=vulkan one driver);
# OPS_SHARDS (8) and OPS_SECONDS (180) size the op suite's step (16 and 330 run it whole on
# an H100, where each run-module call compiles its module's pipelines anew); OPS_FAMILIES
# (prefixes of family names, as check_ops.py takes them) narrows it, in --prepare too.
#
# --prepare takes the real models' exports from MODEL_WORK (default
# BUILD/tests/models/work, where the model suite leaves them).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
models="cnn encoder_block mlp mlp_dynamic newton"
# The real-model exports whose modules (with inputs and references) stay under the
# 64 MiB a GPU machine here takes with everything else: ViT at its three shapes and
# MobileNetV2. GPT-2 (2 layers, a 59 MB module), ResNet-18 (46 MB of weights) and BERT
# (90 MB) do not fit beside them; REAL_MODELS names others.
REAL_MODELS=${REAL_MODELS:-"vit-linalg vit-linalg-48 vit-linalg-dynamic mobilenet_v2-linalg"}
# The op families whose kernels take the workgroup-memory and tensor-core tiles: convolutions
# read in place, partial tiles of K and N, f16 matmuls.
CUDA_OPS_FAMILIES=${CUDA_OPS_FAMILIES:-"linalg.conv_2d_nhwc_hwcf_tiles convolution linalg.matmul_partial_tiles linalg.matmul_f16"}

if [ "${1:-}" = --prepare ]; then
  build=$2 runtime=$3 dir=$4
  set -e
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/models"
  for tool in run-module benchmark-module hal_tests cuda_tests vulkan_tests; do
    cp "$runtime/bin/$tool" "$dir/bin/"
  done
  # The shared libraries a Debian build links that the GPU machine may lack.
  for lib in libbenchmark.so.1debian libtbb.so.12; do
    cp "$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')" "$dir/bin/"
  done
  strip "$dir/bin/"* 2>/dev/null || true
  for model in $models; do cp "$build/samples/models/$model.mlir" "$dir/models/"; done
  python=${PYTHON:-$build/venv/bin/python}
  "$python" "$root/tests/e2e/check_models.py" --bin "$build/bin" --models "$dir/models" \
    --work "$dir/e2e" --target=cuda,vulkan --compile-only $models
  rm -rf "$dir/e2e/"*.executables
  "$python" "$here/gpu_bench.py" --compile --bin "$build/bin" --models "$dir/models" --work "$dir/bench"
  exports=${MODEL_WORK:-$build/tests/models/work}
  mkdir -p "$dir/real-models"
  for stem in $REAL_MODELS; do
    # The name tests/models/check_models.py gives a module for --target=cuda,vulkan.
    "$build/bin/compile-module" "$exports/$stem.mlir" --target=cuda,vulkan \
      -o "$dir/real-models/$stem.cuda_vulkan.smod"
    cp "$exports/$stem.export.json" "$exports/$stem".b*.in*.npy "$exports/$stem".b*.expected.npy \
      "$dir/real-models/"
  done
  "$python" "$root/tests/e2e/check_ops.py" --bin "$build/bin" --work "$dir/ops" --target=vulkan \
    --compile-only ${OPS_FAMILIES:-} > "$dir/ops-compile.log"
  "$python" "$root/tests/e2e/check_ops.py" --bin "$build/bin" --work "$dir/ops-cuda" --target=cuda \
    --compile-only $CUDA_OPS_FAMILIES > "$dir/ops-cuda-compile.log"
  # The same for sm_90a alone: its f16 matmuls and convolutions on wgmma.
  "$python" "$root/tests/e2e/check_ops.py" --bin "$build/bin" --work "$dir/ops-cuda-wgmma" --target=cuda \
    --compile-flag=--cuda-arch=sm_90a --compile-only $CUDA_OPS_FAMILIES > "$dir/ops-cuda-wgmma-compile.log"
  rm -rf "$dir/ops-cuda/"*.executables "$dir/ops-cuda-wgmma/"*.executables
  exit 0
fi

dir=$(cd "$1" && pwd)
logs=${2:-/tmp}
export LD_LIBRARY_PATH="$dir/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# NVIDIA's Vulkan driver where the loader does not find it by itself.
if [ -z "${VK_DRIVER_FILES:-}" ]; then
  icd=$(find /usr/local/nvidia /usr/share/vulkan /etc/vulkan /usr/lib /usr/local/share -name 'nvidia_icd*.json' \
        2>/dev/null | head -n 1)
  if [ -n "$icd" ]; then export VK_DRIVER_FILES=$icd; fi
fi
echo "Vulkan driver files: ${VK_DRIVER_FILES:-found by the loader}"
failed=()
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  if [ -n "${STEPS:-}" ] && [[ " $STEPS " != *" $name "* ]]; then return; fi
  echo "=== $name"
  timeout "$limit" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  tail -n 6 "$logs/$name.log"
  [ $rc -eq 0 ] || { echo "=== $name FAILED ($rc)"; failed+=("$name"); }
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step list-devices 30 "$dir/bin/run-module" --list-devices
step conformance.cuda 90 "$dir/bin/hal_tests" --hal-driver=cuda "--test-case=conformance: *"
step cuda_tests 90 "$dir/bin/cuda_tests" "--test-case=cuda: *"
step conformance.vulkan 90 "$dir/bin/hal_tests" --hal-driver=vulkan "--test-case=conformance: *"
step conformance.vulkan.discrete 90 "$dir/bin/hal_tests" "--hal-driver=vulkan?unified_memory=0&robust_buffer_access=0" \
  "--test-case=conformance: *,hal module: *"
step vulkan_tests 90 "$dir/bin/vulkan_tests"
step models 150 python3 "$root/tests/e2e/check_models.py" --bin "$dir/bin" --models "$dir/models" \
  --work "$dir/e2e" --target=cuda,vulkan --run-only --devices=cuda,vulkan $models
step real-models 150 python3 "$root/tests/models/check_models.py" --run-only --bin "$dir/bin" \
  --work "$dir/real-models" --target=cuda,vulkan --devices=cuda,vulkan
ops_shards() {
  # Each shard stops a little before the step's limit, so that the summary below is
  # always written: per shard its last line, or that it gave no result in time, and every
  # failing check, in ops.vulkan.summary (printed at the end of the run).
  local pids=() rc=0 shards=${OPS_SHARDS:-8} limit=$(( ${OPS_SECONDS:-180} - 15 )) i
  for ((i = 0; i < shards; i++)); do
    PYTHONUNBUFFERED=1 timeout "$limit" python3 "$root/tests/e2e/check_ops.py" --run-only \
      --bin "$dir/bin" --work "$dir/ops" --target=vulkan --devices=vulkan --shard=$i/$shards \
      ${OPS_FAMILIES:-} > "$logs/ops.vulkan.$i.log" 2>&1 &
    pids+=($!)
  done
  local summary="$logs/ops.vulkan.summary"
  : > "$summary"
  for ((i = 0; i < shards; i++)); do
    local shard_rc=0
    wait "${pids[$i]}" || { shard_rc=$?; rc=1; }
    if [ $shard_rc -eq 124 ]; then
      echo "shard $i: no result within ${limit} s; last check: $(grep -E '^(ok|FAIL)' \
        "$logs/ops.vulkan.$i.log" | tail -n 1)" >> "$summary"
    else
      echo "shard $i: $(tail -n 1 "$logs/ops.vulkan.$i.log")" >> "$summary"
    fi
  done
  grep -h '^FAIL' "$logs"/ops.vulkan.*.log >> "$summary"
  tail -n 3 "$summary"
  return $rc
}
export dir root logs
export -f ops_shards
step ops.vulkan ${OPS_SECONDS:-180} bash -c ops_shards
step ops.cuda 150 python3 "$root/tests/e2e/check_ops.py" --run-only --bin "$dir/bin" \
  --work "$dir/ops-cuda" --target=cuda --devices=cuda $CUDA_OPS_FAMILIES
# sm_90a's wgmma kernels run only on compute capability 9.0 (H100, H200).
if nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | grep -q '^9\.0'; then
  step ops.cuda.wgmma 150 python3 "$root/tests/e2e/check_ops.py" --run-only --bin "$dir/bin" \
    --work "$dir/ops-cuda-wgmma" --target=cuda --devices=cuda $CUDA_OPS_FAMILIES
fi
step bench 240 python3 "$here/gpu_bench.py" --bin "$dir/bin" --models "$dir/models" --work "$dir/bench" \
  --real-models "$dir/real-models" ${BENCH_ARGS:-}
[ -f "$logs/ops.vulkan.summary" ] && head -n 60 "$logs/ops.vulkan.summary"
[ -f "$logs/bench.log" ] && cat "$logs/bench.log"
echo "failed steps: ${failed[*]:-none}"
[ ${#failed[@]} -eq 0 ]
