// strata-spirv-vector-access: four adjacent elements of a binding, the first
// at an index the arithmetic shows to be a multiple of 4, move as one
// 4-vector through a second variable on the same binding.
// RUN: strata-opt %s --split-input-file --strata-spirv-vector-access | FileCheck %s
// The shared-memory matmul on the Vulkan target: B's rows and C's are read
// and written as 4-vectors, A (read down its columns) stays scalar, and the
// kernel validates.
// RUN: strata-opt %S/shared-tiles.mlir --split-input-file --strata-gpu-codegen=matrix-tiles=shared --strata-spirv-codegen | FileCheck %s --check-prefix=MATMUL
// RUN: compile-module %S/spirv.mlir --target=vulkan --dump-executables=%t -o %t.smod
// RUN: spirv-val --target-env vulkan1.3 %t/kernels.vulkan-spirv.spv

// MATMUL-LABEL: spirv.module
// MATMUL-DAG: spirv.GlobalVariable @layer_arg_0 bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
// MATMUL-DAG: spirv.GlobalVariable @layer_arg_1_vec4 bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<vector<4xf32>, stride=16> [0])>, StorageBuffer>
// MATMUL-DAG: spirv.GlobalVariable @layer_arg_3_vec4 bind(0, 3) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<vector<4xf32>, stride=16> [0])>, StorageBuffer>
// MATMUL-NOT: spirv.GlobalVariable @layer_arg_1 bind
// MATMUL-NOT: spirv.GlobalVariable @layer_arg_3 bind
// MATMUL: spirv.func @layer
// MATMUL: spirv.Load "StorageBuffer" %{{.*}} : vector<4xf32>
// MATMUL: spirv.Store "StorageBuffer" %{{.*}}, %{{.*}} : vector<4xf32>

!block = !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
!element = !spirv.ptr<f32, StorageBuffer>

// Reads of elements 4x .. 4x + 3 in any order of the loads, then stores of
// elements 8y + 4 .. 8y + 7 with arithmetic and a read of another binding
// between them: one vector load, one vector store; both bindings now have
// only the vector variable.
// CHECK-LABEL: spirv.module @aligned
// CHECK-DAG: spirv.GlobalVariable @in_vec4 bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @out_vec4 bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<vector<4xf32>, stride=16> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @bias bind(0, 2)
// CHECK-NOT: spirv.GlobalVariable @in bind
// CHECK-NOT: spirv.GlobalVariable @out bind
// CHECK: spirv.func @kernel
// CHECK: %[[X4:.*]] = spirv.IMul %arg0, %{{.*}}
// CHECK: %[[IN:.*]] = spirv.mlir.addressof @in_vec4
// CHECK: %[[Q:.*]] = spirv.ShiftRightLogical %[[X4]], %{{.*}}
// CHECK: %[[P:.*]] = spirv.AccessChain %[[IN]][%{{.*}}, %[[Q]]]
// CHECK: %[[V:.*]] = spirv.Load "StorageBuffer" %[[P]] : vector<4xf32>
// CHECK: spirv.CompositeExtract %[[V]][3 : i32]
// CHECK: spirv.Load "StorageBuffer" %{{.*}} : f32
// CHECK: %[[OUT:.*]] = spirv.mlir.addressof @out_vec4
// CHECK: spirv.ShiftRightLogical
// CHECK: %[[W:.*]] = spirv.CompositeConstruct
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %[[W]] : vector<4xf32>
// CHECK-NOT: spirv.Store
// CHECK: spirv.EntryPoint "GLCompute" @kernel
spirv.module @aligned Logical GLSL450 requires #spirv.vce<v1.0, [Shader], [SPV_KHR_storage_buffer_storage_class]> {
  spirv.GlobalVariable @in bind(0, 0) : !block
  spirv.GlobalVariable @out bind(0, 1) : !block
  spirv.GlobalVariable @bias bind(0, 2) : !block
  spirv.func @kernel(%x: i32, %y: i32) "None" {
    %in = spirv.mlir.addressof @in : !block
    %out = spirv.mlir.addressof @out : !block
    %bias = spirv.mlir.addressof @bias : !block
    %c0 = spirv.Constant 0 : i32
    %c1 = spirv.Constant 1 : i32
    %c2 = spirv.Constant 2 : i32
    %c3 = spirv.Constant 3 : i32
    %c4 = spirv.Constant 4 : i32
    %c8 = spirv.Constant 8 : i32
    %i0 = spirv.IMul %x, %c4 : i32
    %i1 = spirv.IAdd %i0, %c1 : i32
    %i2 = spirv.IAdd %c2, %i0 : i32
    %i3 = spirv.IAdd %i1, %c2 : i32
    %p3 = spirv.AccessChain %in[%c0, %i3] : !block, i32, i32 -> !element
    %v3 = spirv.Load "StorageBuffer" %p3 : f32
    %p0 = spirv.AccessChain %in[%c0, %i0] : !block, i32, i32 -> !element
    %v0 = spirv.Load "StorageBuffer" %p0 : f32
    %p1 = spirv.AccessChain %in[%c0, %i1] : !block, i32, i32 -> !element
    %v1 = spirv.Load "StorageBuffer" %p1 : f32
    %p2 = spirv.AccessChain %in[%c0, %i2] : !block, i32, i32 -> !element
    %v2 = spirv.Load "StorageBuffer" %p2 : f32
    %v = spirv.CompositeConstruct %v0, %v1, %v2, %v3 : (f32, f32, f32, f32) -> vector<4xf32>
    %e3 = spirv.CompositeExtract %v[3 : i32] : vector<4xf32>
    %pb = spirv.AccessChain %bias[%c0, %x] : !block, i32, i32 -> !element
    %b = spirv.Load "StorageBuffer" %pb : f32
    %y8 = spirv.IMul %c8, %y : i32
    %j0 = spirv.IAdd %y8, %c4 : i32
    %q0 = spirv.AccessChain %out[%c0, %j0] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q0, %b : f32
    %s1 = spirv.FAdd %b, %e3 : f32
    %j1 = spirv.IAdd %j0, %c1 : i32
    %q1 = spirv.AccessChain %out[%c0, %j1] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q1, %s1 : f32
    %pb2 = spirv.AccessChain %bias[%c0, %y] : !block, i32, i32 -> !element
    %b2 = spirv.Load "StorageBuffer" %pb2 : f32
    %j2 = spirv.IAdd %j1, %c1 : i32
    %q2 = spirv.AccessChain %out[%c0, %j2] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q2, %b2 : f32
    %j3 = spirv.IAdd %y8, %c3 : i32
    %j3b = spirv.IAdd %j3, %c4 : i32
    %q3 = spirv.AccessChain %out[%c0, %j3b] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q3, %e3 : f32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @kernel
}

// -----

!block = !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
!element = !spirv.ptr<f32, StorageBuffer>

// Left as they are: loads from 4x + 2 (no multiple of 4 is known), loads
// of 4x .. 4x + 3 with a store between them, stores with a read of the
// same binding between them, and stores to a binding that is also read
// element by element (a second variable on a written binding could be
// assumed not to alias the first).
// CHECK-LABEL: spirv.module @unaligned
// CHECK-NOT: _vec4
// CHECK-NOT: vector<4xf32>, StorageBuffer
spirv.module @unaligned Logical GLSL450 requires #spirv.vce<v1.0, [Shader], [SPV_KHR_storage_buffer_storage_class]> {
  spirv.GlobalVariable @in bind(0, 0) : !block
  spirv.GlobalVariable @out bind(0, 1) : !block
  spirv.func @kernel(%x: i32) "None" {
    %in = spirv.mlir.addressof @in : !block
    %out = spirv.mlir.addressof @out : !block
    %c0 = spirv.Constant 0 : i32
    %c1 = spirv.Constant 1 : i32
    %c2 = spirv.Constant 2 : i32
    %c3 = spirv.Constant 3 : i32
    %c4 = spirv.Constant 4 : i32
    %x4 = spirv.IMul %x, %c4 : i32
    %i0 = spirv.IAdd %x4, %c2 : i32
    %i1 = spirv.IAdd %i0, %c1 : i32
    %i2 = spirv.IAdd %i0, %c2 : i32
    %i3 = spirv.IAdd %i0, %c3 : i32
    %p0 = spirv.AccessChain %in[%c0, %i0] : !block, i32, i32 -> !element
    %v0 = spirv.Load "StorageBuffer" %p0 : f32
    %p1 = spirv.AccessChain %in[%c0, %i1] : !block, i32, i32 -> !element
    %v1 = spirv.Load "StorageBuffer" %p1 : f32
    %p2 = spirv.AccessChain %in[%c0, %i2] : !block, i32, i32 -> !element
    %v2 = spirv.Load "StorageBuffer" %p2 : f32
    %p3 = spirv.AccessChain %in[%c0, %i3] : !block, i32, i32 -> !element
    %v3 = spirv.Load "StorageBuffer" %p3 : f32
    %v = spirv.CompositeConstruct %v0, %v1, %v2, %v3 : (f32, f32, f32, f32) -> vector<4xf32>
    %e = spirv.CompositeExtract %v[0 : i32] : vector<4xf32>
    %k1 = spirv.IAdd %x4, %c1 : i32
    %k2 = spirv.IAdd %x4, %c2 : i32
    %k3 = spirv.IAdd %x4, %c3 : i32
    %r0 = spirv.AccessChain %in[%c0, %x4] : !block, i32, i32 -> !element
    %w0 = spirv.Load "StorageBuffer" %r0 : f32
    %r1 = spirv.AccessChain %in[%c0, %k1] : !block, i32, i32 -> !element
    %w1 = spirv.Load "StorageBuffer" %r1 : f32
    %q0 = spirv.AccessChain %out[%c0, %x4] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q0, %e : f32
    %r2 = spirv.AccessChain %in[%c0, %k2] : !block, i32, i32 -> !element
    %w2 = spirv.Load "StorageBuffer" %r2 : f32
    %r3 = spirv.AccessChain %in[%c0, %k3] : !block, i32, i32 -> !element
    %w3 = spirv.Load "StorageBuffer" %r3 : f32
    %w = spirv.CompositeConstruct %w0, %w1, %w2, %w3 : (f32, f32, f32, f32) -> vector<4xf32>
    %f = spirv.CompositeExtract %w[1 : i32] : vector<4xf32>
    %q1 = spirv.AccessChain %out[%c0, %k1] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q1, %f : f32
    %o = spirv.Load "StorageBuffer" %q0 : f32
    %q2 = spirv.AccessChain %out[%c0, %k2] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q2, %o : f32
    %q3 = spirv.AccessChain %out[%c0, %k3] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q3, %o : f32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @kernel
}

// -----

!block = !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
!element = !spirv.ptr<f32, StorageBuffer>

// Four aligned stores, but the binding is also written element by element
// elsewhere: no second variable on a written binding.
// CHECK-LABEL: spirv.module @partly_written
// CHECK-NOT: _vec4
// CHECK-NOT: vector<4xf32>, StorageBuffer
spirv.module @partly_written Logical GLSL450 requires #spirv.vce<v1.0, [Shader], [SPV_KHR_storage_buffer_storage_class]> {
  spirv.GlobalVariable @out bind(0, 0) : !block
  spirv.func @kernel(%x: i32, %v: f32) "None" {
    %out = spirv.mlir.addressof @out : !block
    %c0 = spirv.Constant 0 : i32
    %c1 = spirv.Constant 1 : i32
    %c2 = spirv.Constant 2 : i32
    %c3 = spirv.Constant 3 : i32
    %c4 = spirv.Constant 4 : i32
    %x4 = spirv.IMul %x, %c4 : i32
    %k1 = spirv.IAdd %x4, %c1 : i32
    %k2 = spirv.IAdd %x4, %c2 : i32
    %k3 = spirv.IAdd %x4, %c3 : i32
    %q0 = spirv.AccessChain %out[%c0, %x4] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q0, %v : f32
    %q1 = spirv.AccessChain %out[%c0, %k1] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q1, %v : f32
    %q2 = spirv.AccessChain %out[%c0, %k2] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q2, %v : f32
    %q3 = spirv.AccessChain %out[%c0, %k3] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q3, %v : f32
    %q4 = spirv.AccessChain %out[%c0, %x] : !block, i32, i32 -> !element
    spirv.Store "StorageBuffer" %q4, %v : f32
    spirv.Return
  }
  spirv.EntryPoint "GLCompute" @kernel
}
