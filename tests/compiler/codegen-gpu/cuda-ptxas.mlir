// Where ptxas is found, compile-module makes a cubin of each PTX image with
// it, so a kernel ptxas refuses fails the compile; and ptxas run on its own
// accepts the PTX for both archs.
// REQUIRES: ptxas
// RUN: rm -rf %t && compile-module %S/cuda.mlir --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=ptxas --dump-executables=%t -o %t.smod
// RUN: ptxas -arch=sm_80 %t/kernels.sm_80.ptx -o %t/check80.cubin
// RUN: ptxas -arch=sm_90 %t/kernels.sm_90.ptx -o %t/check90.cubin
// RUN: ls %t/kernels.sm_80.cubin %t/kernels.sm_90.cubin
// The tensor-core kernels (mma.sync, ldmatrix) assemble for both archs too.
// RUN: rm -rf %t.tc && compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=ptxas --dump-executables=%t.tc -o %t.tc.smod
// RUN: ls %t.tc/kernels.sm_80.cubin %t.tc/kernels.sm_90.cubin
// And with four cp.async buffers, in dynamic shared memory.
// RUN: compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_80,sm_90 --cuda-ptxas=ptxas --gpu-codegen-options=mma-stages=4 -o %t.tc4.smod
// And sm_90a's wgmma kernels, three and four buffers.
// RUN: rm -rf %t.wg && compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_90a --cuda-ptxas=ptxas --dump-executables=%t.wg -o %t.wg.smod
// RUN: ls %t.wg/kernels.sm_90a.cubin
// RUN: compile-module %S/cuda-tensor-cores.mlir --target=cuda --cuda-arch=sm_90a --cuda-ptxas=ptxas --gpu-codegen-options=mma-stages=4 -o %t.wg4.smod
// And the zero-filled copies of a K past the last full step (cp.async's src-size).
// RUN: compile-module %S/cuda-k-tail.mlir --target=cuda --cuda-arch=sm_80,sm_90,sm_90a --cuda-ptxas=ptxas -o %t.tail.smod
// RUN: not compile-module %S/cuda.mlir --target=cuda --cuda-ptxas=/bin/false -o %t.bad 2>&1 | FileCheck %s
// CHECK: ptxas (/bin/false) failed for sm_80 with exit code 1
