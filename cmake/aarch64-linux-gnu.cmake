# Cross-builds the runtime and its tests for aarch64 Linux with Debian's GNU
# cross toolchain, and runs the tests under qemu-user:
#
#   apt-get install g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
#   cmake -G Ninja -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DSTRATA_BUILD_COMPILER=OFF -DSTRATA_BUILD_FUZZERS=OFF -DSTRATA_BUILD_BENCHMARKS=OFF \
#         -DSTRATA_DRIVER_CPU_TASK=OFF
#
# (Debian ships oneTBB for the build machine only, so the cross build has
# cpu-sync alone.) tests/portability/aarch64_qemu.sh does all of this under CTest.
#   ctest --test-dir build-aarch64        # each test runs through qemu-aarch64
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The target's libraries and headers live here; tools (flatc, clang-22 and
# ld.lld-22 for the test kernels) are the build machine's own.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Header-only packages (doctest) are installed once, for the build machine;
# their CMake configs are found there.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# Header-only libraries (flatbuffers, doctest) sit in the build machine's
# /usr/include, which the cross compiler does not search. -idirafter looks
# there last, so every header the target's sysroot has still comes from it.
set(CMAKE_C_FLAGS_INIT "-idirafter /usr/include")
set(CMAKE_CXX_FLAGS_INIT "-idirafter /usr/include")

# CTest and add_test run target binaries through qemu with the target's
# dynamic loader and libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
