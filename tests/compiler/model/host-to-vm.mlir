// The host side of a model as vm ops calling the hal module: checked
// arguments, weights imported from rodata, one command buffer for the
// dispatches of a block with a barrier after each, recorded on the first
// call into a global and submitted on every call with a binding table of
// that call's buffers, one submit and wait, and
// transients planned by lifetime: the 1024-byte broadcast lives across all
// matmuls; of the three 256-byte matmul results a, b and c, a and c are never
// alive together and share bytes, so the arena is 1024 + 2 * 256 = 1536 bytes
// rather than 1792.
// RUN: compile-module %s --compile-to=vm | FileCheck %s
// RUN: compile-module %s -o %t.smod && dump-module %t.smod | FileCheck --check-prefix=DUMP %s

// CHECK: vm.rodata @constant_{{[0-9]+}} dense<
// CHECK: vm.func @chain(%[[X:.*]]: !vm.ref) -> !vm.ref attributes {strata.argument_types = ["tensor<4x16xf32>"], strata.result_types = ["tensor<4x16xf32>"], strata.transient_bytes = 1536 : i64}
// CHECK: %[[ARENA:.*]] = vm.const.i64 1536
// CHECK: %[[DEVICE:.*]] = vm.call.import @hal.device.default()
// The executable travels as a value: the module's own, made by the VM.
// CHECK: %[[EXE:.*]] = vm.const.ref.executable "kernels" : !vm.ref
// CHECK: vm.call.import @hal.executable.create(%{{.*}}, %[[EXE]])
// CHECK: vm.call.import @hal.buffer_view.assert(%[[X]],
// CHECK-NOT: vm.const.ref.rodata @constant_
// The arena and the result, allocated on every call.
// CHECK: %[[ARENA_BUFFER:.*]] = vm.call.import @hal.allocator.allocate(%{{.*}}, %{{.*}}, %{{.*}}, %[[ARENA]]) :
// CHECK: %[[RESULT:.*]] = vm.call.import @hal.allocator.allocate_preferring(
// The command buffer: recorded once, on the first call.
// CHECK: %[[CACHED:.*]] = vm.global.load.ref @chain_commands_0 : !vm.ref
// CHECK: vm.cond_br %{{.*}}, ^[[SUBMIT:bb[0-9]+]](%[[CACHED]] : !vm.ref), ^[[RECORD:bb[0-9]+]]
// CHECK: ^[[RECORD]]:
// CHECK: %[[NEW:.*]] = vm.call.import @hal.command_buffer.create_indirect(%[[DEVICE]])
// A constant: its bytes, made a buffer once per device by the hal module,
// bound as it is.
// CHECK: %[[BYTES:.*]] = vm.const.ref.rodata @constant_{{[0-9]+}}
// CHECK: vm.call.import @hal.device.constant(%[[DEVICE]], %[[BYTES]],
// CHECK-COUNT-5: vm.call.import @hal.command_buffer.dispatch
// CHECK: vm.global.store.ref %[[NEW]], @chain_commands_0
// CHECK: vm.br ^[[SUBMIT]](%[[NEW]] : !vm.ref)
// CHECK: ^[[SUBMIT]](%[[COMMANDS:.*]]: !vm.ref):
// The binding table: the argument's range, the arena and the result.
// CHECK: %[[TABLE:.*]] = vm.list.alloc
// CHECK-DAG: vm.list.set.ref %[[TABLE]][%{{.*}}], %[[ARENA_BUFFER]] : !vm.ref
// CHECK-DAG: vm.list.set.ref %[[TABLE]][%{{.*}}], %[[RESULT]] : !vm.ref
// CHECK-DAG: vm.list.set.ref %[[TABLE]][%{{.*}}], %{{.*}} : !vm.ref
// CHECK: vm.call.import @hal.queue.execute_indirect(%[[DEVICE]], %{{.*}}, %{{.*}}, %[[COMMANDS]], %[[TABLE]])
// CHECK: vm.call.import @hal.semaphore.wait
// CHECK: vm.call.import @hal.buffer_view.create
// CHECK: vm.return
// CHECK: vm.export @chain

// DUMP: executables: 1
// DUMP-NEXT: kernels [cpu-elf-x86_64]
// DUMP: func#0 chain (r_r)
// DUMP: const.ref.executable r{{[0-9]+}}, executable#0

func.func @chain(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<[[0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0, 0.5, 1.0, 2.0, 3.0]]> : tensor<1x16xf32>
  %wide = tensor.collapse_shape %w [[0, 1]] : tensor<1x16xf32> into tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %m = tensor.empty() : tensor<16x16xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%wide : tensor<16xf32>) outs(%m : tensor<16x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = linalg.matmul ins(%x, %sq : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %b = linalg.matmul ins(%a, %sq : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %c = linalg.matmul ins(%b, %sq : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %d = linalg.matmul ins(%c, %sq : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %d : tensor<4x16xf32>
}
