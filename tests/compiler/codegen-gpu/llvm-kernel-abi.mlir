// The CUDA kernel ABI (schemas/cuda_executable.fbs): bindings become global
// pointers addressed at their 1-D indices, the constants one i32 parameter
// per word, workgroup temporaries shared memory (workgroup attributions),
// private ones plain allocas, and the workgroup size known_block_size.
// RUN: strata-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(strata-llvm-kernel-abi))' | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK-NOT: spirv.target_env
// CHECK: gpu.func @sum(%[[IN:[^:]*]]: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias}, %[[OUT:[^:]*]]: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias}, %[[STATUS:[^:]*]]: !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias}, %[[W0:[^:]*]]: i32, %[[W1:[^:]*]]: i32)
// CHECK-SAME: workgroup(%[[SHARED:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK-NOT: spirv.
// CHECK: arith.index_castui %[[W1]] : i32 to index
// CHECK: %[[PRIVATE:.*]] = memref.alloca() : memref<4xf32>
// CHECK: %[[OFFSET:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[ADDRESS:.*]] = llvm.getelementptr %[[IN]][%[[OFFSET]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: llvm.load %[[ADDRESS]] {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: memref.store %{{.*}}, %[[SHARED]]
// CHECK: memref.store %{{.*}}, %[[PRIVATE]]
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, f32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
module attributes {gpu.container_module} {
  gpu.module @kernels attributes {spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader], []>, #spirv.resource_limits<>>} {
    gpu.func @sum(%in: memref<?xf32> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 0)>},
                  %out: memref<?xf32> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 1)>},
                  %status: memref<?xi32> {spirv.interface_var_abi = #spirv.interface_var_abi<(0, 2)>},
                  %constants: memref<2xi32> {spirv.interface_var_abi = #spirv.interface_var_abi<(3, 0)>})
        kernel attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>,
                           strata.constant_count = 2 : i32, strata.workgroup_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1 : i32
      %word = memref.load %constants[%c1] : memref<2xi32>
      %n = arith.index_castui %word : i32 to index
      %shared = memref.alloc() : memref<64xf32, #spirv.storage_class<Workgroup>>
      %private = memref.alloca() : memref<4xf32, #spirv.storage_class<Function>>
      %t = gpu.thread_id x
      %x = memref.load %in[%t] : memref<?xf32>
      memref.store %x, %shared[%t] : memref<64xf32, #spirv.storage_class<Workgroup>>
      memref.store %x, %private[%c0] : memref<4xf32, #spirv.storage_class<Function>>
      %old = memref.atomic_rmw addf %x, %out[%n] : (f32, memref<?xf32>) -> f32
      memref.store %one, %status[%c0] : memref<?xi32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dynamic_word(%in: memref<?xf32>, %constants: memref<2xi32>)
        kernel attributes {strata.constant_count = 2 : i32, strata.workgroup_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      // expected-error @below {{uses the kernel's constants other than by a load of a constant word}}
      %word = memref.load %constants[%t] : memref<2xi32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @viewed(%in: memref<?xf32>) kernel attributes {strata.constant_count = 0 : i32, strata.workgroup_size = array<i32: 64, 1, 1>} {
      // expected-error @below {{uses a kernel binding; GPU kernels only load, store and update bindings at 1-D indices}}
      %view = memref.subview %in[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: gpu.func @root
// CHECK: llvm.call @__nv_fsqrt_rn(%{{.*}}) : (f32) -> f32
// CHECK-NOT: math.sqrt
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @root(%in: memref<?xf32>) kernel attributes {strata.constant_count = 0 : i32, strata.workgroup_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      %x = memref.load %in[%t] : memref<?xf32>
      %r = math.sqrt %x : f32
      memref.store %r, %in[%t] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Workgroup memory past what a kernel may declare
// (strata.dynamic_workgroup_memory, the tensor-core tiles with more than
// three buffers): views of the dynamic shared memory at 16-byte aligned
// offsets, in the order of the allocations; a binding's address where the
// kernel takes it (cp.async's source) is its global pointer as an integer.
// CHECK-LABEL: gpu.func @dynamic_shared(
// CHECK-NOT: workgroup(
// CHECK: %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[SECOND:.*]] = arith.constant 112 : index
// CHECK-DAG: memref.view %[[BASE]][%[[ZERO]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<25xi32, #gpu.address_space<workgroup>>
// CHECK-DAG: memref.view %[[BASE]][%[[SECOND]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8xvector<4xf32>, #gpu.address_space<workgroup>>
// CHECK: %[[INT:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<1> to i64
// CHECK: arith.index_cast %[[INT]] : i64 to index
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @dynamic_shared(%in: memref<?xf16>, %out: memref<?xi32>)
        kernel attributes {strata.constant_count = 0 : i32, strata.workgroup_size = array<i32: 128, 1, 1>,
                           strata.dynamic_workgroup_memory} {
      %c0 = arith.constant 0 : index
      %a = memref.alloc() : memref<25xi32, #spirv.storage_class<Workgroup>>
      %b = memref.alloc() : memref<8xvector<4xf32>, #spirv.storage_class<Workgroup>>
      %t = gpu.thread_id x
      %address = memref.extract_aligned_pointer_as_index %in : memref<?xf16> -> index
      %word = arith.index_cast %address : index to i32
      memref.store %word, %a[%c0] : memref<25xi32, #spirv.storage_class<Workgroup>>
      %v = memref.load %b[%c0] : memref<8xvector<4xf32>, #spirv.storage_class<Workgroup>>
      %x = memref.load %a[%t] : memref<25xi32, #spirv.storage_class<Workgroup>>
      memref.store %x, %out[%t] : memref<?xi32>
      gpu.return
    }
  }
}
