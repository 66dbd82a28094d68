#!/usr/bin/env bash
# Checks that none of the given ELF binaries lists the Vulkan loader among its
# NEEDED libraries: the Vulkan driver opens libvulkan.so.1 at run time, so a
# runtime with the driver built in starts on machines without Vulkan.
# usage: loader_not_linked.sh BINARY...
set -euo pipefail
for binary in "$@"; do
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  # readelf read the dynamic section: every binary here needs libc.
  if ! grep -q '^libc\.so' <<<"$needed"; then
    echo "FAIL: no NEEDED entries read from $binary"; exit 1
  fi
  if grep -i 'libvulkan' <<<"$needed"; then
    echo "FAIL: $binary links the Vulkan loader"; exit 1
  fi
  echo "$(basename "$binary"): $(tr '\n' ' ' <<<"$needed")"
done
