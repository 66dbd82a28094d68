// strata-host-to-vm: the host functions as vm ops calling the hal module,
// reading the plan, the submits, the kernels' variants and the executables
// from the IR.
// RUN: strata-opt --strata-host-to-vm %s | FileCheck %s
// RUN: strata-opt --strata-host-to-vm --split-input-file --verify-diagnostics %S/Inputs/host-to-vm-errors.mlir

func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = [
  {format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>},
  {format = "vulkan-spirv", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 2, 1, 1>, workgroup_size = array<i32: 8, 1, 1>}]}
func.func private @s(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = [
  {format = "cpu-elf-x86_64", ordinal = 1 : i32, scratch_bytes = 256 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>},
  {format = "vulkan-spirv", ordinal = 1 : i32, scratch_bytes = 256 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 64, 1, 1>}]}
flow.executable_binary "kernels" format "cpu-elf-x86_64" data dense<[1, 2, 3]> : tensor<3xi8> metadata dense<[4]> : tensor<1xi8>
flow.executable_binary "kernels" format "vulkan-spirv" data dense<[5, 6]> : tensor<2xi8> metadata dense<[7]> : tensor<1xi8>

// CHECK-LABEL: vm.module @module
// CHECK: vm.func @chain(%[[X:.*]]: !vm.ref) -> !vm.ref attributes {{{.*}}strata.transient_bytes = 384 : i64}
// One list for the bindings of every dispatch, made once and refilled.
// CHECK: %[[BINDINGS:.*]] = vm.list.alloc
// Whether the device runs vulkan-spirv, asked once.
// CHECK: %[[QUERY:.*]]:2 = vm.call.import @hal.device.query_i64
// CHECK: %[[VULKAN:.*]] = vm.cmp.ne.i64 %[[QUERY]]#1
// CHECK: %[[EXE:.*]] = vm.const.ref.executable "kernels"
// CHECK: vm.call.import @hal.buffer_view.assert(%[[X]],
// The arena, at its first user.
// CHECK: %[[ARENA_BYTES:.*]] = vm.const.i64 384
// CHECK: %[[ARENA:.*]] = vm.call.import @hal.allocator.allocate(%{{.*}}, %{{.*}}, %{{.*}}, %[[ARENA_BYTES]])
// The workgroup count of the format the device runs: 2 on vulkan-spirv.
// CHECK: %[[CPU_X:.*]] = vm.const.i32 1
// CHECK: %[[GPU_X:.*]] = vm.const.i32 2
// CHECK: %[[COUNT_X:.*]] = vm.select.i32 %[[VULKAN]], %[[GPU_X]], %[[CPU_X]]
// @s: input b at 256, output c at 320, scratch at 0 (256 bytes), all in the arena.
// CHECK: %[[AT_320:.*]] = vm.const.i64 320
// CHECK: %[[AT_0:.*]] = vm.const.i64 0
// CHECK: %[[SCRATCH_BYTES:.*]] = vm.const.i64 256
// The returned result has a buffer of its own: device-local, mappable where
// that memory is host-visible (preferring mapping).
// CHECK: vm.call.import @hal.allocator.allocate_preferring(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// The flow.submit: one command buffer for all four dispatches, recorded on
// the first call of a context (the counts are chosen among constants by the
// device's formats: the same on every call) and submitted with a binding
// table of each call's buffers.
// CHECK: %[[CACHED:.*]] = vm.global.load.ref @chain_commands_0
// CHECK: %[[CB:.*]] = vm.call.import @hal.command_buffer.create_indirect
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB]], %{{.*}}, %{{.*}}, %[[COUNT_X]],
// CHECK: vm.call.import @hal.command_buffer.barrier(%[[CB]])
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB]],
// @s binds the arena's slot at b's, c's and the scratch's offsets.
// CHECK: vm.list.resize %[[BINDINGS]]
// CHECK: vm.list.set.i32 %[[BINDINGS]][%{{.*}}], %{{.*}} : i32
// CHECK: vm.list.set.i32 %[[BINDINGS]][%{{.*}}], %{{.*}} : i32
// CHECK: vm.list.set.i64 %[[BINDINGS]][%{{.*}}], %[[AT_320]]
// CHECK: vm.list.set.i32 %[[BINDINGS]][%{{.*}}], %{{.*}} : i32
// CHECK: vm.list.set.i64 %[[BINDINGS]][%{{.*}}], %[[AT_0]]
// CHECK: vm.list.set.i64 %[[BINDINGS]][%{{.*}}], %[[SCRATCH_BYTES]]
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BINDINGS]])
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB]],
// CHECK-NOT: @hal.command_buffer.create
// CHECK: vm.call.import @hal.command_buffer.end(%[[CB]])
// CHECK: vm.global.store.ref %[[CB]], @chain_commands_0
// The table: the argument's view, the arena, the result.
// CHECK: vm.list.set.ref %[[TABLE:[0-9]+]][%{{.*}}], %{{.*}} : !vm.ref
// CHECK: vm.list.set.ref %[[TABLE]][%{{.*}}], %[[ARENA]] : !vm.ref
// CHECK: vm.call.import @hal.queue.execute_indirect(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TABLE]])
// CHECK: vm.call.import @hal.semaphore.wait
// CHECK: vm.return
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = flow.dispatch @k(%x) {flow.arena_bytes = 384 : i64, flow.transient_offsets = array<i64: 0>} : (tensor<16xf32>) -> tensor<16xf32>
  %b = flow.dispatch @k(%a) {flow.transient_offsets = array<i64: 256>} : (tensor<16xf32>) -> tensor<16xf32>
  %c = flow.dispatch @s(%b) {flow.scratch_offset = 0 : i64, flow.transient_offsets = array<i64: 320>} : (tensor<16xf32>) -> tensor<16xf32>
  %d = flow.dispatch @k(%c) : (tensor<16xf32>) -> tensor<16xf32>
  flow.submit
  return %d : tensor<16xf32>
}

// A barrier only before a dispatch that reads what one recorded since the
// last barrier writes, or writes bytes one of them reads or writes: a and b
// may run at once; c reads them; d writes a's bytes, which c reads; e reads
// d.
func.func private @k2(tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = [
  {format = "cpu-elf-x86_64", ordinal = 2 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]}
// CHECK-LABEL: vm.func @independent
// CHECK: %[[CB2:.*]] = vm.call.import @hal.command_buffer.create
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB2]],
// CHECK-NOT: @hal.command_buffer.barrier
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB2]],
// CHECK: vm.call.import @hal.command_buffer.barrier(%[[CB2]])
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB2]],
// CHECK: vm.call.import @hal.command_buffer.barrier(%[[CB2]])
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB2]],
// CHECK: vm.call.import @hal.command_buffer.barrier(%[[CB2]])
// CHECK: vm.call.import @hal.command_buffer.dispatch(%[[CB2]],
// CHECK-NOT: @hal.command_buffer.barrier
// CHECK: vm.call.import @hal.command_buffer.end(%[[CB2]])
func.func @independent(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = flow.dispatch @k(%x) {flow.arena_bytes = 256 : i64, flow.transient_offsets = array<i64: 0>} : (tensor<16xf32>) -> tensor<16xf32>
  %b = flow.dispatch @k(%x) {flow.transient_offsets = array<i64: 64>} : (tensor<16xf32>) -> tensor<16xf32>
  %c = flow.dispatch @k2(%a, %b) {flow.transient_offsets = array<i64: 128>} : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %d = flow.dispatch @k(%x) {flow.transient_offsets = array<i64: 0>} : (tensor<16xf32>) -> tensor<16xf32>
  %e = flow.dispatch @k2(%c, %d) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  flow.submit
  return %e : tensor<16xf32>
}

// Both binaries, for the module writer.
// CHECK: vm.executable "kernels" format "cpu-elf-x86_64" data dense<[1, 2, 3]> : tensor<3xi8> metadata dense<4> : tensor<1xi8>
// CHECK: vm.executable "kernels" format "vulkan-spirv" data dense<[5, 6]> : tensor<2xi8>
// CHECK-NOT: flow.executable_binary
