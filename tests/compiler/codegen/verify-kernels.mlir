// strata-cpu-verify-kernels rejects what CPU code generation cannot compile,
// at the op the user wrote, before any lowering.
// RUN: strata-opt %s --strata-cpu-verify-kernels --split-input-file --verify-diagnostics

// Kernels on memrefs and tensors, scalars, helpers, runtime imports and
// constant globals are fine.
memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
func.func private @expf(f32) -> f32
func.func private @helper(%x: f32) -> f32 {
  %e = func.call @expf(%x) : (f32) -> f32
  return %e : f32
}
func.func @kernel(%a: memref<?x4xf32>, %t: tensor<4xf32>, %n: i32, %s: f32,
                  %i: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0, %c0] : memref<?x4xf32>
  %y = func.call @helper(%x) : (f32) -> f32
  memref.store %y, %a[%c0, %c0] : memref<?x4xf32>
  %g = memref.get_global @table : memref<2xf32>
  %buffer = memref.alloca() : memref<4xf32>
  return %t : tensor<4xf32>
}

// -----

func.func @heap(%a: memref<4xf32>) {
  // expected-error @+1 {{'memref.alloc' op allocates on the heap, which a CPU kernel cannot; use memref.alloca or a buffer argument}}
  %m = memref.alloc() : memref<4xf32>
  return
}

// -----

// expected-error @+1 {{'func.func' op declares 'malloc', which the runtime does not provide to CPU executables}}
func.func private @malloc(i64) -> !llvm.ptr

// -----

// expected-error @+1 {{'func.func' op argument 1 has type 'f64'; a kernel takes memrefs (bindings), ranked tensors, and i32, i64, f32 or index scalars (push constants)}}
func.func @wide(%a: memref<4xf32>, %n: f64) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: expected a memref with the identity layout, got 'memref<4xf32, strided<[2]>>'}}
func.func @strided(%a: memref<4xf32, strided<[2]>>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: expected integer or float elements, got 'memref<4xindex>'}}
func.func @indices(%a: memref<4xindex>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result 0 has type 'f32'; a kernel writes its results to memref arguments (or returns ranked tensors)}}
func.func @scalar_result(%a: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  return %x : f32
}

// -----

func.func @gpu(%a: memref<4xf32>) {
  // expected-error @+1 {{'gpu.barrier' op is not supported in a CPU kernel (supported dialects: affine, arith, bufferization, cf, func, linalg, math, memref, scf, tensor, ub, vector)}}
  gpu.barrier
  return
}

// -----

func.func @softmax(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{'linalg.softmax' op is not supported in a CPU kernel: only structured linalg ops (linalg.generic, named ops) are}}
  %s = linalg.softmax dimension(0) ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @other(%a: memref<4xf32>) {
  return
}
func.func @caller(%a: memref<4xf32>) {
  // expected-error @+1 {{'func.call' op calls the kernel 'other'; make the callee private to use it as a helper}}
  func.call @other(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// expected-error @+1 {{'memref.global' op is mutable; CPU kernels are stateless and take only constant globals}}
memref.global "private" @state : memref<4xf32> = uninitialized

// -----

// expected-error @+1 {{'llvm.func' op is not supported at the top level of a CPU executable (expected func.func and constant memref.global)}}
llvm.func @raw() {
  llvm.return
}
