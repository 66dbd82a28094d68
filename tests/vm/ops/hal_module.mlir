// The VM -> HAL path from bytecode: a program allocates device buffers through
// the `hal` module, records a fill, a barrier and a copy, submits them with a
// timeline semaphore, waits, maps the result and checks it; on both CPU
// drivers. Errors from the HAL reach the program with their message and the
// VM backtrace.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod --device=cpu-sync | FileCheck %s
// RUN: vm-test-runner %t.smod --device=cpu-task?threads=2 | FileCheck %s
// CHECK: 1 passed, 0 failed
// RUN: not vm-test-runner %t.smod --device=cpu-sync --function=fail_fill_out_of_range 2>&1 | FileCheck --check-prefix=RANGE %s
// RANGE: in hal.command_buffer.fill: {{.*}}out of range
// RANGE: at hal_module.fail_fill_out_of_range@{{[0-9]+}} ({{.*}}hal_module.mlir:[[@LINE+90]]:
// RUN: not vm-test-runner %t.smod --device=no-such-driver 2>&1 | FileCheck --check-prefix=DRIVER %s
// DRIVER: no-such-driver
// DRIVER-SAME: cpu-sync

vm.module @hal_module {
  vm.import @check.expect_eq_i32(i32, i32)
  vm.import @hal.device.default() -> !vm.ref
  vm.import @hal.device.allocator(!vm.ref) -> !vm.ref
  vm.import @hal.allocator.allocate(!vm.ref, i32, i32, i64) -> !vm.ref
  vm.import @hal.command_buffer.create(!vm.ref) -> !vm.ref
  vm.import @hal.command_buffer.begin(!vm.ref)
  vm.import @hal.command_buffer.fill(!vm.ref, !vm.ref, i64, i64, i32, i32)
  vm.import @hal.command_buffer.copy(!vm.ref, !vm.ref, i64, !vm.ref, i64, i64)
  vm.import @hal.command_buffer.barrier(!vm.ref)
  vm.import @hal.command_buffer.end(!vm.ref)
  vm.import @hal.semaphore.create(!vm.ref, i64) -> !vm.ref
  vm.import @hal.semaphore.wait(!vm.ref, i64, i64) -> i32
  vm.import @hal.queue.execute(!vm.ref, !vm.list, !vm.list, !vm.list)
  vm.import @hal.buffer.map(!vm.ref, i64, i64) -> !vm.buffer

  // Host-visible + host-coherent memory, every usage.
  vm.func @allocate(%device: !vm.ref, %length: i64) -> !vm.ref {
    %allocator = vm.call.import @hal.device.allocator(%device) : (!vm.ref) -> !vm.ref
    %types = vm.const.i32 6
    %usage = vm.const.i32 15
    %buffer = vm.call.import @hal.allocator.allocate(%allocator, %types, %usage, %length) : (!vm.ref, i32, i32, i64) -> !vm.ref
    vm.return %buffer : !vm.ref
  }

  vm.func @test_fill_copy_submit_wait_map() {
    %device = vm.call.import @hal.device.default() : () -> !vm.ref
    %c64 = vm.const.i64 64
    %a = vm.call @allocate(%device, %c64) : (!vm.ref, i64) -> !vm.ref
    %b = vm.call @allocate(%device, %c64) : (!vm.ref, i64) -> !vm.ref
    %cb = vm.call.import @hal.command_buffer.create(%device) : (!vm.ref) -> !vm.ref
    vm.call.import @hal.command_buffer.begin(%cb) : (!vm.ref) -> ()
    %c0 = vm.const.i64 0
    %c8 = vm.const.i64 8
    %c16 = vm.const.i64 16
    %c32 = vm.const.i64 32
    %pattern = vm.const.i32 0x01020304
    %four = vm.const.i32 4
    vm.call.import @hal.command_buffer.fill(%cb, %a, %c0, %c32, %pattern, %four) : (!vm.ref, !vm.ref, i64, i64, i32, i32) -> ()
    // Device memory starts undefined: clear b so the untouched tail is known.
    %zero32 = vm.const.i32 0
    vm.call.import @hal.command_buffer.fill(%cb, %b, %c0, %c64, %zero32, %four) : (!vm.ref, !vm.ref, i64, i64, i32, i32) -> ()
    vm.call.import @hal.command_buffer.barrier(%cb) : (!vm.ref) -> ()
    vm.call.import @hal.command_buffer.copy(%cb, %a, %c8, %b, %c0, %c16) : (!vm.ref, !vm.ref, i64, !vm.ref, i64, i64) -> ()
    vm.call.import @hal.command_buffer.end(%cb) : (!vm.ref) -> ()
    %sem = vm.call.import @hal.semaphore.create(%device, %c0) : (!vm.ref, i64) -> !vm.ref
    %zero = vm.const.i32 0
    %one = vm.const.i32 1
    %two = vm.const.i32 2
    %waits = vm.list.alloc %zero
    %signals = vm.list.alloc %two
    vm.list.resize %signals, %two
    vm.list.set.ref %signals[%zero], %sem : !vm.ref
    %v1 = vm.const.i64 1
    vm.list.set.i64 %signals[%one], %v1 : i64
    %cbs = vm.list.alloc %one
    vm.list.resize %cbs, %one
    vm.list.set.ref %cbs[%zero], %cb : !vm.ref
    vm.call.import @hal.queue.execute(%device, %waits, %signals, %cbs) : (!vm.ref, !vm.list, !vm.list, !vm.list) -> ()
    %forever = vm.const.i64 -1
    %code = vm.call.import @hal.semaphore.wait(%sem, %v1, %forever) : (!vm.ref, i64, i64) -> i32
    vm.call.import @check.expect_eq_i32(%code, %zero) : (i32, i32) -> ()
    %whole = vm.const.i64 -1
    %mapped = vm.call.import @hal.buffer.map(%b, %c0, %whole) : (!vm.ref, i64, i64) -> !vm.buffer
    %first = vm.buffer.load.i32 %mapped[%c0] : i32
    vm.call.import @check.expect_eq_i32(%first, %pattern) : (i32, i32) -> ()
    %c12 = vm.const.i64 12
    %last = vm.buffer.load.i32 %mapped[%c12] : i32
    vm.call.import @check.expect_eq_i32(%last, %pattern) : (i32, i32) -> ()
    // Past the copied 16 bytes, b is still zero.
    %after = vm.buffer.load.i32 %mapped[%c16] : i32
    vm.call.import @check.expect_eq_i32(%after, %zero) : (i32, i32) -> ()
    vm.return
  }

  vm.func @fail_fill_out_of_range() {
    %device = vm.call.import @hal.device.default() : () -> !vm.ref
    %c64 = vm.const.i64 64
    %a = vm.call @allocate(%device, %c64) : (!vm.ref, i64) -> !vm.ref
    %cb = vm.call.import @hal.command_buffer.create(%device) : (!vm.ref) -> !vm.ref
    vm.call.import @hal.command_buffer.begin(%cb) : (!vm.ref) -> ()
    %c32 = vm.const.i64 32
    %c64b = vm.const.i64 64
    %pattern = vm.const.i32 7
    %four = vm.const.i32 4
    vm.call.import @hal.command_buffer.fill(%cb, %a, %c32, %c64b, %pattern, %four) : (!vm.ref, !vm.ref, i64, i64, i32, i32) -> ()
    vm.return
  }

  vm.export @test_fill_copy_submit_wait_map
  vm.export @fail_fill_out_of_range
}
