// The program the run-module tests run: functions over buffer views (identity,
// swap, dim, describe, a sum read through a mapping, a device-side fill into
// a new view, host-visible or not) and over scalars, plus results that are no
// tensors.
vm.module @tensors {
  vm.import @hal.device.default() -> !vm.ref
  vm.import @hal.device.allocator(!vm.ref) -> !vm.ref
  vm.import @hal.allocator.allocate(!vm.ref, i32, i32, i64) -> !vm.ref
  vm.import @hal.buffer_view.create(!vm.ref, i64, i32, !vm.list) -> !vm.ref
  vm.import @hal.buffer_view.buffer(!vm.ref) -> !vm.ref
  vm.import @hal.buffer_view.byte_offset(!vm.ref) -> i64
  vm.import @hal.buffer_view.byte_length(!vm.ref) -> i64
  vm.import @hal.buffer_view.element_type(!vm.ref) -> i32
  vm.import @hal.buffer_view.rank(!vm.ref) -> i32
  vm.import @hal.buffer_view.dim(!vm.ref, i32) -> i64
  vm.import @hal.buffer.map(!vm.ref, i64, i64) -> !vm.buffer
  vm.import @hal.command_buffer.create(!vm.ref) -> !vm.ref
  vm.import @hal.command_buffer.begin(!vm.ref)
  vm.import @hal.command_buffer.fill(!vm.ref, !vm.ref, i64, i64, i32, i32)
  vm.import @hal.command_buffer.end(!vm.ref)
  vm.import @hal.semaphore.create(!vm.ref, i64) -> !vm.ref
  vm.import @hal.semaphore.wait(!vm.ref, i64, i64) -> i32
  vm.import @hal.queue.execute(!vm.ref, !vm.list, !vm.list, !vm.list)

  vm.func @identity(%v: !vm.ref) -> !vm.ref {
    vm.return %v : !vm.ref
  }
  vm.func @swap(%a: !vm.ref, %b: !vm.ref) -> (!vm.ref, !vm.ref) {
    vm.return %b, %a : !vm.ref, !vm.ref
  }
  vm.func @dim(%v: !vm.ref, %i: i32) -> i64 {
    %d = vm.call.import @hal.buffer_view.dim(%v, %i) : (!vm.ref, i32) -> i64
    vm.return %d : i64
  }
  // (rank, element type, byte length) of a view.
  vm.func @describe(%v: !vm.ref) -> (i32, i32, i64) {
    %r = vm.call.import @hal.buffer_view.rank(%v) : (!vm.ref) -> i32
    %t = vm.call.import @hal.buffer_view.element_type(%v) : (!vm.ref) -> i32
    %n = vm.call.import @hal.buffer_view.byte_length(%v) : (!vm.ref) -> i64
    vm.return %r, %t, %n : i32, i32, i64
  }
  // The sum of a view's i32 elements, read through a mapping: proves the
  // input's bytes reached the device buffer.
  vm.func @sum_i32(%v: !vm.ref) -> i64 {
    %buffer = vm.call.import @hal.buffer_view.buffer(%v) : (!vm.ref) -> !vm.ref
    %offset = vm.call.import @hal.buffer_view.byte_offset(%v) : (!vm.ref) -> i64
    %length = vm.call.import @hal.buffer_view.byte_length(%v) : (!vm.ref) -> i64
    %bytes = vm.call.import @hal.buffer.map(%buffer, %offset, %length) : (!vm.ref, i64, i64) -> !vm.buffer
    %zero = vm.const.i64 0
    %four = vm.const.i64 4
    vm.br ^loop(%zero, %zero : i64, i64)
  ^loop(%i: i64, %sum: i64):
    vm.cmp_br.lt.i64.s %i, %length, ^body(%i, %sum : i64, i64), ^done(%sum : i64)
  ^body(%j: i64, %acc: i64):
    %x = vm.buffer.load.i32 %bytes[%j] : i32
    %x64 = vm.ext.i32.i64.s %x
    %acc1 = vm.add.i64 %acc, %x64
    %j1 = vm.add.i64 %j, %four
    vm.br ^loop(%j1, %acc1 : i64, i64)
  ^done(%total: i64):
    vm.return %total : i64
  }
  // A new rows x cols view of `element_type` (element_bytes wide), filled on
  // the device with a repeated pattern of pattern_length bytes. memory_types
  // and usage choose the buffer: 6/15 is host-visible and mappable, 1/7
  // device-local and not mappable (run-module then reads it through a copy).
  vm.func @fill(%rows: i64, %cols: i64, %element_type: i32, %element_bytes: i64, %pattern: i32,
                %pattern_length: i32, %memory_types: i32, %usage: i32) -> !vm.ref {
    %device = vm.call.import @hal.device.default() : () -> !vm.ref
    %allocator = vm.call.import @hal.device.allocator(%device) : (!vm.ref) -> !vm.ref
    %count = vm.mul.i64 %rows, %cols
    %length = vm.mul.i64 %count, %element_bytes
    %buffer = vm.call.import @hal.allocator.allocate(%allocator, %memory_types, %usage, %length) : (!vm.ref, i32, i32, i64) -> !vm.ref
    %cb = vm.call.import @hal.command_buffer.create(%device) : (!vm.ref) -> !vm.ref
    vm.call.import @hal.command_buffer.begin(%cb) : (!vm.ref) -> ()
    %c0 = vm.const.i64 0
    vm.call.import @hal.command_buffer.fill(%cb, %buffer, %c0, %length, %pattern, %pattern_length) : (!vm.ref, !vm.ref, i64, i64, i32, i32) -> ()
    vm.call.import @hal.command_buffer.end(%cb) : (!vm.ref) -> ()
    %sem = vm.call.import @hal.semaphore.create(%device, %c0) : (!vm.ref, i64) -> !vm.ref
    %i0 = vm.const.i32 0
    %i1 = vm.const.i32 1
    %i2 = vm.const.i32 2
    %waits = vm.list.alloc %i0
    %signals = vm.list.alloc %i2
    vm.list.resize %signals, %i2
    vm.list.set.ref %signals[%i0], %sem : !vm.ref
    %one = vm.const.i64 1
    vm.list.set.i64 %signals[%i1], %one : i64
    %cbs = vm.list.alloc %i1
    vm.list.resize %cbs, %i1
    vm.list.set.ref %cbs[%i0], %cb : !vm.ref
    vm.call.import @hal.queue.execute(%device, %waits, %signals, %cbs) : (!vm.ref, !vm.list, !vm.list, !vm.list) -> ()
    %forever = vm.const.i64 -1
    %code = vm.call.import @hal.semaphore.wait(%sem, %one, %forever) : (!vm.ref, i64, i64) -> i32
    %shape = vm.list.alloc %i2
    vm.list.resize %shape, %i2
    vm.list.set.i64 %shape[%i0], %rows : i64
    vm.list.set.i64 %shape[%i1], %cols : i64
    %view = vm.call.import @hal.buffer_view.create(%buffer, %c0, %element_type, %shape) : (!vm.ref, i64, i32, !vm.list) -> !vm.ref
    vm.return %view : !vm.ref
  }
  vm.func @scalars(%a: i32, %b: i64, %c: f32, %d: f64) -> (i32, i64, f32, f64) {
    vm.return %a, %b, %c, %d : i32, i64, f32, f64
  }
  // Results that are refs but no tensors.
  vm.func @not_a_tensor() -> (!vm.buffer, !vm.ref) {
    %n = vm.const.i64 16
    %b = vm.buffer.alloc %n
    %null = vm.const.ref.zero : !vm.ref
    vm.return %b, %null : !vm.buffer, !vm.ref
  }
  vm.func @nothing() {
    vm.return
  }

  vm.export @identity
  vm.export @swap
  vm.export @dim
  vm.export @describe
  vm.export @sum_i32
  vm.export @fill
  vm.export @scalars
  vm.export @not_a_tensor
  vm.export @nothing
}
