// Memref-level matmul kernels in the form strata-gpu-matrix-tiles sees (after
// bufferization), for tests/codegen/matrix_tiles_sim.py.

// f32, dynamic M (masked): fill, matmul, bias and relu.
func.func @layer(%arg0: memref<?x64xf32>, %arg1: memref<64x32xf32>, %arg2: memref<32xf32>, %arg3: memref<?x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg3 : memref<?x32xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<?x64xf32>, memref<64x32xf32>) outs(%arg3 : memref<?x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %arg2 : memref<?x32xf32>, memref<32xf32>) outs(%arg3 : memref<?x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    %1 = arith.cmpf ugt, %0, %cst : f32
    %2 = arith.select %1, %0, %cst : f32
    linalg.yield %2 : f32
  }
  return
}

// f16 inputs, f32 C, static M (unmasked): fill with a non-zero value, matmul.
func.func @half(%arg0: memref<64x128xf16>, %arg1: memref<128x64xf16>, %arg2: memref<64x64xf32>) {
  %cst = arith.constant 2.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<64x64xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<64x128xf16>, memref<128x64xf16>) outs(%arg2 : memref<64x64xf32>)
  return
}

// f32, no fill (C += A * B), static M = 40 (masked), then a residual and
// maximumf with 0 read in the epilogue's output block argument.
func.func @accumulate(%arg0: memref<40x64xf32>, %arg1: memref<64x32xf32>, %arg2: memref<40x32xf32>, %arg3: memref<40x32xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.matmul ins(%arg0, %arg1 : memref<40x64xf32>, memref<64x32xf32>) outs(%arg3 : memref<40x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg2 : memref<40x32xf32>) outs(%arg3 : memref<40x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  return
}

// f16 inputs and f16 C, dynamic M (masked), no fill: C += A * B.
func.func @half_accumulate(%arg0: memref<?x32xf16>, %arg1: memref<32x64xf16>, %arg2: memref<?x64xf16>) {
  linalg.matmul ins(%arg0, %arg1 : memref<?x32xf16>, memref<32x64xf16>) outs(%arg2 : memref<?x64xf16>)
  return
}

// f16 inputs, f32 C, static M: six 64x64 tiles for kind mma (two per
// workgroup of the simulated grid), 2x2 tiles of 32 for the others.
func.func @half_wide(%arg0: memref<192x32xf16>, %arg1: memref<32x128xf16>, %arg2: memref<192x128xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<192x128xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<192x32xf16>, memref<32x128xf16>) outs(%arg2 : memref<192x128xf32>)
  return
}

// f32, static M = 5 (the few-rows body: rows 5-7 of each warp masked), N = 48
// (a second tile of 32 columns, half of it masked), K = 40 (32 in steps of 4
// per warp, the last 8 one per warp): fill, matmul, bias and relu.
func.func @few_rows(%arg0: memref<5x40xf32>, %arg1: memref<40x48xf32>, %arg2: memref<48xf32>, %arg3: memref<5x48xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg3 : memref<5x48xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<5x40xf32>, memref<40x48xf32>) outs(%arg3 : memref<5x48xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg3, %arg2 : memref<5x48xf32>, memref<48xf32>) outs(%arg3 : memref<5x48xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  return
}

// f16 inputs, f32 C, static M = 16 (two rows of C per invocation), no fill:
// C += A * B, K = 72 (64 in steps of 4 per warp, then 8).
func.func @few_rows_half(%arg0: memref<16x72xf16>, %arg1: memref<72x64xf16>, %arg2: memref<16x64xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<16x72xf16>, memref<72x64xf16>) outs(%arg2 : memref<16x64xf32>)
  return
}

// f32, static M = 32: the few-rows body with CUDA's kind (four rows of C per
// invocation), 32x32 tiles with the others; no fill, K = 40.
func.func @few_rows_32(%arg0: memref<32x40xf32>, %arg1: memref<40x64xf32>, %arg2: memref<32x64xf32>) {
  linalg.matmul ins(%arg0, %arg1 : memref<32x40xf32>, memref<40x64xf32>) outs(%arg2 : memref<32x64xf32>)
  return
}

// f16 inputs, f32 C, dynamic M (masked), N = 96 (kind mma: tiles of 64
// columns, the second's last 32 masked), K = 64 (two steps of 32: with three
// cp.async buffers the step the loop copies ahead is past K from the start).
func.func @half_masked(%arg0: memref<?x64xf16>, %arg1: memref<64x96xf16>, %arg2: memref<?x96xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<?x96xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<?x64xf16>, memref<64x96xf16>) outs(%arg2 : memref<?x96xf32>)
  return
}

// A convolution with f16 operands (implicit GEMM: A read in place at
// (n, 2 oh + kh, 2 ow + kw, c)), a dynamic batch, 2x2 taps of 16 channels
// (K = 64, two steps), stride 2, fill, bias and relu. The tiles of kind mma
// only (the others leave convolutions to the general distribution).
func.func @conv_half(%arg0: memref<?x7x7x16xf16>, %arg1: memref<2x2x16x64xf16>, %arg2: memref<64xf32>, %arg3: memref<?x3x3x64xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg3 : memref<?x3x3x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%arg0, %arg1 : memref<?x7x7x16xf16>, memref<2x2x16x64xf16>) outs(%arg3 : memref<?x3x3x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg2 : memref<64xf32>) outs(%arg3 : memref<?x3x3x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    %1 = arith.maximumf %0, %cst : f32
    linalg.yield %1 : f32
  }
  return
}

// f16 inputs, f32 C, dynamic M (masked), N = 256: with mma-wide-tiles one
// tile of 128x256 per workgroup of eight warps.
func.func @half_256(%arg0: memref<?x32xf16>, %arg1: memref<32x256xf16>, %arg2: memref<?x256xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<?x256xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<?x32xf16>, memref<32x256xf16>) outs(%arg2 : memref<?x256xf32>)
  return
}

// K not a multiple of 32: f16, K = 40 (one step and a chunk), dynamic M
// (masked). The tensor-core tiles take it where cp.async copies them (the
// last step's chunks past K zero-filled); with one buffer, and on the
// kinds whose steps are 16 or 4 along K, it is left to the distribution.
func.func @half_ktail(%arg0: memref<?x40xf16>, %arg1: memref<40x64xf16>, %arg2: memref<?x64xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<?x64xf32>)
  linalg.matmul ins(%arg0, %arg1 : memref<?x40xf16>, memref<40x64xf16>) outs(%arg2 : memref<?x64xf32>)
  return
}

// A convolution of 3x3 taps of 8 channels (K = 72: two steps and a chunk),
// stride 1, a dynamic batch.
func.func @conv_ktail(%arg0: memref<?x6x6x8xf16>, %arg1: memref<3x3x8x64xf16>, %arg2: memref<?x4x4x64xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<?x4x4x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%arg0, %arg1 : memref<?x6x6x8xf16>, memref<3x3x8x64xf16>) outs(%arg2 : memref<?x4x4x64xf32>)
  return
}
