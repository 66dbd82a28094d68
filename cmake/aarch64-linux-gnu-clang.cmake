# The aarch64 cross build of cmake/aarch64-linux-gnu.cmake, compiled with
# clang instead of GCC: clang is what Android's and Apple's toolchains use, and
# with it the VM's handlers take the tail-call dispatch (preserve_none +
# musttail) rather than GCC's driver loop. Links against the same GNU cross
# sysroot and runs under the same qemu-user.
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)
set(CMAKE_C_COMPILER clang-22)
set(CMAKE_CXX_COMPILER clang++-22)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
