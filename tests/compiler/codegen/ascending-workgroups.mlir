// A kernel whose register tiles prefetch the next strip of packed weights
// (the one the next workgroup reads) asks for its workgroups in ascending
// order: the CPU drivers otherwise run them in descending order on every
// second run of a command buffer. A matmul without such prefetches does not.
// RUN: strata-codegen-cpu %s --triple=x86_64-linux-gnu --cpu=skylake-avx512 --dump-metadata | FileCheck %s
// CHECK: entry_point packed_few_rows {{.*}} ascending_workgroups{{$}}
// CHECK: entry_point plain {{.*}}workgroup_count [{{[0-9, ]+}}]{{$}}

#packed_a = affine_map<(m, n1, n0, k) -> (m, k)>
#packed_b = affine_map<(m, n1, n0, k) -> (n1, k, n0)>
#packed_c = affine_map<(m, n1, n0, k) -> (m, n1, n0)>
func.func @packed_few_rows(%a: memref<12x64xf32>, %b: memref<4x64x16xf32>, %c: memref<12x4x16xf32>) {
  linalg.generic {indexing_maps = [#packed_a, #packed_b, #packed_c],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<12x64xf32>, memref<4x64x16xf32>) outs(%c : memref<12x4x16xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

func.func @plain(%a: memref<12x64xf32>, %b: memref<64x64xf32>, %c: memref<12x64xf32>) {
  linalg.matmul ins(%a, %b : memref<12x64xf32>, memref<64x64xf32>) outs(%c : memref<12x64xf32>)
  return
}
