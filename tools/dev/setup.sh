#!/usr/bin/env bash
# Installs the Debian packages Strata builds with (only those missing), then
# configures and builds into build/. Safe and fast to run again.
set -euo pipefail
cd "$(dirname "$0")/../.."

packages=(
  cmake ninja-build git python3 python3-numpy pkgconf
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libclang-rt-22-dev
  libflatbuffers-dev flatbuffers-compiler doctest-dev libtbb-dev libbenchmark-dev
  libxxhash-dev libsodium-dev
  lua5.4 valgrind
  # Vulkan: headers to build the driver; the loader, Mesa's lavapipe (a CPU
  # Vulkan device), the validation layer and the SPIR-V tools to run and test it
  libvulkan-dev libvulkan1 mesa-vulkan-drivers vulkan-tools vulkan-validationlayers spirv-tools glslc
  # ROCm (Debian's 5.2): the device math library linked into AMD GPU kernels,
  # the code-object library the tests read them back with, and HIP
  rocm-device-libs libamd-comgr-dev libamdhip64-dev
  # aarch64: cross toolchain and qemu, so CTest runs the runtime's tests on aarch64 too
  g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f build/CMakeCache.txt ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
cmake --build build -j"$(nproc)"
