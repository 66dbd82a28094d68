// The `hal` native module: the HAL as the VM sees it.
//
// Compiled programs import these functions ("hal.command_buffer.dispatch")
// to allocate buffers, record and submit work and wait for it. HAL objects
// travel as refs of types hal.device, hal.allocator, hal.buffer,
// hal.buffer_view, hal.executable, hal.command_buffer and hal.semaphore; a ref
// of the wrong type or a null ref fails the call with a message naming the
// function, the argument and both types. Every failure is a Status that the VM
// turns into a program failure with its backtrace.
//
// Signatures (arguments _ results; i = i32, I = i64, r = ref). The names and
// signatures themselves live in schemas/hal_functions.def, which the compiler
// declares its imports from; there vm.buffer and vm.list refs are told apart.
//
//   device.default            _r       () -> device the module was created for
//   device.allocator          r_r      (device) -> allocator
//   device.query_i64          rrr_iI   (device, category, key) -> (found, value)
//       category and key are vm.buffers holding UTF-8 text:
//         "hal.executable.format", <format>   -> 1 if the device runs it, else 0
//         "hal.driver", <driver name>         -> 1 if the device is that driver
//         "hal.device", "concurrency" | "min_binding_alignment" |
//                       "max_workgroup_count.x" | ".y" | ".z"
//       found is 0 (and value 0) for an unknown category or key.
//
//   device.constant           rrII_r   (device, vm.buffer, offset, length) -> a buffer holding
//                                       the bytes for the device's kernels to read: the bytes
//                                       in place where the device's first device-local heap is
//                                       host-visible and the device imports host memory, else a
//                                       device-local copy (uploaded through a staging buffer
//                                       where the host cannot map that memory); made once per
//                                       (device, bytes, length) and shared by every call
//
//   allocator.allocate        riiI_r   (allocator, memory_types, usage, length) -> buffer
//   allocator.allocate_preferring riiiI_r (allocator, memory_types, usage, preferred usage,
//                                       length) -> buffer from the first heap with the types
//                                       and usage, with the preferred usages it allows (mapping
//                                       only in host-visible memory)
//   allocator.import          riirII_r (allocator, memory_types, usage, vm.buffer, offset,
//                                       length) -> buffer aliasing the vm.buffer's bytes,
//                                       no copy; the vm.buffer stays alive as long as the
//                                       hal.buffer; read-only bytes (rodata) give a
//                                       read-only buffer
//       memory_types and usage are the bits of hal/buffer.h; length -1 means
//       "to the end" wherever a length is taken.
//
//   buffer.length             r_I      (buffer) -> byte length
//   buffer.subspan            rII_r    (buffer, offset, length) -> buffer
//   buffer.map                rII_r    (buffer, offset, length) -> vm.buffer over the mapped
//                                       bytes (writable if the buffer is); the range stays
//                                       mapped while the vm.buffer lives; a buffer the host
//                                       cannot map gives a read-only copy of the range, read
//                                       through a staging buffer
//
//   buffer_view.create        rIir_r   (buffer, byte_offset, element_type, shape) -> view;
//                                       shape is a vm.list of i64, element types as in
//                                       hal/buffer_view.h
//   buffer_view.buffer        r_r      (view) -> buffer
//   buffer_view.byte_offset   r_I      (view) -> offset in the buffer
//   buffer_view.byte_length   r_I      (view) -> bytes
//   buffer_view.element_type  r_i      (view) -> element type
//   buffer_view.rank          r_i      (view) -> rank
//   buffer_view.dim           ri_I     (view, index) -> dimension
//   buffer_view.assert        rrir_    (view, what, element_type, shape): fails with
//                                       "<what>: expected a tensor 1x784xf32, got 2x784xf32"
//                                       unless view has that element type and shape; what is
//                                       a vm.buffer of text, shape a vm.list of i64 where -1
//                                       matches any size
//
//   executable.create         rr_r     (device, executable) -> executable: a vm.executable
//                                       (vm.const.ref.executable: an executable the calling
//                                       module embeds, in every format it was compiled for)
//                                       prepared in the first format (by the device's
//                                       preference) the device runs; prepared once per
//                                       device and then shared
//
//   command_buffer.create     r_r      (device) -> command buffer
//   command_buffer.create_streamed r_r (device) -> command buffer that the caller submits
//                                       once, right after end, with no waits, its bytes
//                                       untouched otherwise until that submission ends: the
//                                       device may run its commands as they are recorded
//                                       (hal::Device::CreateStreamedCommandBuffer); what
//                                       compiled programs create where they cannot reuse one
//   command_buffer.create_indirect r_r (device) -> command buffer whose dispatch bindings
//                                       may name slots of a binding table that each
//                                       queue.execute_indirect gives
//                                       (hal::Device::CreateIndirectCommandBuffer); what
//                                       compiled programs record once per submission site
//   command_buffer.begin      r_       (command_buffer)
//   command_buffer.end        r_       (command_buffer)
//   command_buffer.dispatch   rriiiirr_ (command_buffer, executable, entry_point, x, y, z,
//                                       constants, bindings): constants is a vm.list of
//                                       i32 (or null for none); bindings a vm.list of
//                                       (buffer, offset i64, length i64) triples, flat; an
//                                       i32 in place of the buffer names that slot of the
//                                       binding table (an indirect command buffer's)
//   command_buffer.fill       rrIIii_  (command_buffer, target, offset, length, pattern,
//                                       pattern_length)
//   command_buffer.copy       rrIrII_  (command_buffer, source, source_offset, target,
//                                       target_offset, length)
//   command_buffer.update     rrIrII_  (command_buffer, vm.buffer source, source_offset,
//                                       target, target_offset, length)
//   command_buffer.barrier    r_       (command_buffer)
//
//   semaphore.create          rI_r     (device, initial_value) -> semaphore
//   semaphore.query           r_iI     (semaphore) -> (status code, value): code 0 and the
//                                       value, or the failure's code and 0
//   semaphore.signal          rI_      (semaphore, value)
//   semaphore.wait            rII_i    (semaphore, value, timeout_ns; negative = forever)
//                                       -> 0 when reached, the DEADLINE_EXCEEDED code on
//                                       timeout; a failed semaphore fails the call with its
//                                       original error
//
//   queue.execute             rrrr_    (device, waits, signals, command_buffers): waits and
//                                       signals are vm.lists of (semaphore, value i64)
//                                       pairs, flat; command_buffers a vm.list of command
//                                       buffers; any of the three may be null for none
//   queue.execute_indirect    rrrrr_   (device, waits, signals, command_buffer, table): one
//                                       command buffer and its binding table, a vm.list of
//                                       (buffer or null, offset i64, length i64) triples,
//                                       flat, one per slot (length -1: the rest of the buffer)
//
// Executables arrive as values: the program hands over the vm.executable
// the VM made from its own module, so the hal module never looks anything up
// by name, and one hal module serves every program of a context.
//
// Tracing: besides the event the VM records for every call into this module,
// semaphore.wait reports the host wait itself ("semaphore.wait", with the
// value waited for) to the tracer of the module's device (hal/device.h).
//
// Thread safety: the functions are thread-safe (several contexts may share one
// hal module); HAL objects say what they allow (command buffers are recorded
// by one thread at a time).
#pragma once

#include "hal/device.h"
#include "vm/bytecode_module.h"
#include "vm/native_module.h"
#include "vm/base/status.h"

namespace strata::hal {

StatusOr<Ref<vm::NativeModule>> CreateHalModule(Ref<Device> device);

}  // namespace strata::hal
