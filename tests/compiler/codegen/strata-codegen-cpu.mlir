// strata-codegen-cpu end to end: metadata, LLVM dialect, machine code for
// both architectures, the shared object's symbols.
// RUN: strata-codegen-cpu %s --codegen-options=approximate-math=none --triple=x86_64-linux-gnu --cpu=skylake-avx512 --dump-metadata | FileCheck %s --check-prefix=META
// RUN: strata-codegen-cpu %s --codegen-options=approximate-math=none --triple=x86_64-linux-gnu --cpu=skylake-avx512 --emit=llvm -o - | FileCheck %s --check-prefix=LLVM
// RUN: strata-codegen-cpu %s --codegen-options=approximate-math=none --triple=x86_64-linux-gnu --cpu=skylake-avx512 --emit=asm -o - | FileCheck %s --check-prefix=X86
// RUN: strata-codegen-cpu %s --codegen-options=approximate-math=none --triple=aarch64-linux-gnu --emit=asm -o - | FileCheck %s --check-prefix=ARM
// RUN: strata-codegen-cpu %s --codegen-options=approximate-math=none --triple=x86_64-linux-gnu --cpu=x86-64-v3 --emit=asm -o - | FileCheck %s --check-prefix=AVX2
// RUN: strata-codegen-cpu %s --codegen-options=approximate-math=none --triple=x86_64-linux-gnu --cpu=x86-64-v3 -o %t.so
// RUN: llvm-readelf --file-header --dyn-syms %t.so | FileCheck %s --check-prefix=ELF
// RUN: strata-codegen-cpu %s --codegen-options=approximate-math=none --triple=aarch64-linux-gnu -o %t.arm.so
// RUN: llvm-readelf --file-header %t.arm.so | FileCheck %s --check-prefix=ELF-ARM

// 1000 elements are one workgroup's share (a whole loop: not rounded past it); 64 rows of
// 64 x 64 multiply-adds make 4 workgroups of 16 rows; the length of a
// dynamic vector is push constant 1 (after the scalar), the host dispatches
// ceil(constants[1] / 65536) workgroups.
// META: entry_point exp binding_count 2 constant_count 0 binding_read_only [1, 0] workgroup_size [1000, 1, 1] workgroup_count [1, 1, 1]
// META: entry_point matmul binding_count 3 constant_count 0 binding_read_only [1, 1, 0] workgroup_size [16, 1, 1] workgroup_count [4, 1, 1]
// META: entry_point scale binding_count 2 constant_count 3 binding_read_only [1, 0] workgroup_size [65536, 1, 1] workgroup_count_constant 1

// Entry points are exported; bodies are internal.
// LLVM-DAG: llvm.func @exp(%{{.*}}: !llvm.ptr {llvm.noalias, llvm.nonnull, llvm.readonly}) -> i32
// LLVM-DAG: llvm.func internal @exp.body(
// LLVM-DAG: llvm.intr.exp(%{{.*}}) : (vector<16xf32>) -> vector<16xf32>

// exp of a vector becomes calls to the runtime's expf (approximate-math=none;
// by default it is a polynomial, see approximate-math.mlir).
// X86-LABEL: exp:
// X86: expf@PLT
// The matmul's inner loop: 8 x 2 fused multiply-adds on 16-lane registers
// for each of the 4 steps of k it runs (unrolled).
// X86-LABEL: matmul:
// X86-COUNT-64: vfmadd231ps {{.*}}zmm
// X86-NOT: vfmadd231ps
// X86: .Lfunc_end
// With AVX2's 16 registers the tile is 6 x 2 (12 accumulators, 2 registers
// of the right-hand side, a broadcast), all in registers (8 x 2 would
// spill), for each of 4 steps of k.
// AVX2-LABEL: matmul:
// AVX2-COUNT-48: vfmadd231ps {{.*}}ymm
// AVX2-NOT: vfmadd231ps
// AVX2: .Lfunc_end
// ARM-LABEL: exp:
// ARM: bl expf
// ARM-LABEL: matmul:
// ARM: fmla v{{[0-9]+}}.4s

// ELF: Type: DYN (Shared object file)
// ELF: Machine: Advanced Micro Devices X86-64
// ELF-DAG: UND expf
// ELF-DAG: FUNC GLOBAL DEFAULT {{.*}} exp{{$}}
// ELF-DAG: FUNC GLOBAL DEFAULT {{.*}} matmul{{$}}
// ELF-DAG: FUNC GLOBAL DEFAULT {{.*}} scale{{$}}
// ELF-NOT: .body
// ELF-ARM: Machine: AArch64

func.func @exp(%in: memref<1000xf32>, %out: memref<1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%in : memref<1000xf32>) outs(%out : memref<1000xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

func.func @matmul(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

func.func @scale(%in: memref<?xf32>, %out: memref<?xf32>, %s: f32) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%in : memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %s : f32
    linalg.yield %m : f32
  }
  return
}
