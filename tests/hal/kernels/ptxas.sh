#!/usr/bin/env bash
# Assembles every given PTX file with the CUDA toolkit's ptxas for sm_80 (the
# files' .target) and sm_90, so that a mistake in the hand-written test
# kernels shows here, without a GPU, rather than as a JIT error on one.
# usage: ptxas.sh PTXAS OUT_DIR FILE.ptx...
set -euo pipefail
ptxas=$1 out=$2
shift 2
mkdir -p "$out"
count=0
for file in "$@"; do
  for arch in sm_80 sm_90; do
    "$ptxas" -arch=$arch -o "$out/$(basename "$file" .ptx).$arch.cubin" "$file"
    count=$((count + 1))
  done
done
if [[ $count -eq 0 ]]; then echo "FAIL: no PTX files given"; exit 1; fi
echo "ptxas accepted $count kernel builds ($($ptxas --version | tail -1))"
