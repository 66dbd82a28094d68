// Every code object of a module compiled for the three ROCm archs reads back,
// with AMD's code-object library where it can (Debian's comgr 5.2 reads
// gfx90a code objects of version 4) and with LLVM's object reader for all,
// as the executable's metadata says: ISA, kernels, explicit arguments and
// their bytes, code object version.
// REQUIRES: rocm-code-objects
// RUN: compile-module %S/rocm.mlir --target=rocm --rocm-arch=gfx90a,gfx942,gfx1100 -o %t.smod
// RUN: rocm-code-objects %t.smod | FileCheck %s

// CHECK: gfx90a (code object v4): matches (LLVM and comgr: amdgcn-amd-amdhsa--gfx90a, 2 kernels)
// CHECK: gfx942 (code object v5): matches (LLVM
// CHECK: gfx1100 (code object v5): matches (LLVM
// CHECK: 3 code objects checked, 1 also by comgr, 0 failed
