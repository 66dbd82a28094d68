// Kernels that e2e.cpu_codegen_aarch64 compiles for aarch64 and runs under
// qemu with aarch64_runner.cc, which knows their shapes.
func.func @matmul(%a: memref<7x5xf32>, %b: memref<5x13xf32>, %c: memref<7x13xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<7x13xf32>)
  linalg.matmul ins(%a, %b : memref<7x5xf32>, memref<5x13xf32>) outs(%c : memref<7x13xf32>)
  return
}

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
