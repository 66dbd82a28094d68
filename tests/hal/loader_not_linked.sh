#!/usr/bin/env bash
# Checks that none of the given ELF binaries lists a GPU stack's library among
# its NEEDED libraries: the Vulkan driver opens libvulkan.so.1, the CUDA
# driver libcuda.so.1 and the ROCm driver libamdhip64 at run time, so a
# runtime with those drivers built in starts on machines without them.
# usage: loader_not_linked.sh LIBRARY BINARY...   (LIBRARY: libvulkan, libcuda, libamdhip64)
set -euo pipefail
library=$1
shift
for binary in "$@"; do
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  # readelf read the dynamic section: every binary here needs libc.
  if ! grep -q '^libc\.so' <<<"$needed"; then
    echo "FAIL: no NEEDED entries read from $binary"; exit 1
  fi
  if grep -i "^$library" <<<"$needed"; then
    echo "FAIL: $binary links $library"; exit 1
  fi
  echo "$(basename "$binary"): $(tr '\n' ' ' <<<"$needed")"
done
