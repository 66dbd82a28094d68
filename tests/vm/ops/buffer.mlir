// Byte buffers: every load/store width, copy, fill, rodata views (inline and
// external), and bounds / read-only / type errors.
// RUN: compile-module %s -o %t.smod
// RUN: vm-test-runner %t.smod | FileCheck %s
// CHECK: 3 passed, 0 failed
// RUN: not vm-test-runner %t.smod --function=fail_out_of_range 2>&1 | FileCheck --check-prefix=OOR %s
// OOR: OUT_OF_RANGE: buffer.load.i32: bytes [6, 10) are out of range of a 8-byte buffer
// OOR-NEXT: at buffer.fail_out_of_range@{{[0-9]+}} ({{.*}}buffer.mlir:[[@LINE+110]]:
// RUN: not vm-test-runner %t.smod --function=fail_read_only 2>&1 | FileCheck --check-prefix=RO %s
// RO: FAILED_PRECONDITION: buffer.store.i8: buffer is read-only (module rodata)
// RUN: not vm-test-runner %t.smod --function=fail_null_buffer 2>&1 | FileCheck --check-prefix=NULL %s
// NULL: INVALID_ARGUMENT: buffer.length: expected a vm.buffer, got null

vm.module @buffer {
  vm.import @check.expect_eq_i32(i32, i32)
  vm.import @check.expect_eq_i64(i64, i64)
  vm.import @check.expect_eq_f32(f32, f32)
  vm.import @check.expect_eq_f64(f64, f64)

  vm.rodata @small dense<[1, 2, 3, 4]> : tensor<4xi8>
  vm.rodata @large dense<2.5> : tensor<64xf32>

  vm.func @test_load_store() {
    %len = vm.const.i64 32
    %b = vm.buffer.alloc %len
    %blen = vm.buffer.length %b
    vm.call.import @check.expect_eq_i64(%blen, %len) : (i64, i64) -> ()
    %o0 = vm.const.i64 0
    %o1 = vm.const.i64 1
    %o3 = vm.const.i64 3
    %o8 = vm.const.i64 8
    %o16 = vm.const.i64 16
    %o24 = vm.const.i64 24
    // New buffers are zeroed.
    %z = vm.buffer.load.i64 %b[%o24] : i64
    vm.call.import @check.expect_eq_i64(%z, %o0) : (i64, i64) -> ()
    %m1 = vm.const.i32 -1
    vm.buffer.store.i8 %b[%o0], %m1 : i32
    %s8 = vm.buffer.load.i8.s %b[%o0] : i32
    vm.call.import @check.expect_eq_i32(%s8, %m1) : (i32, i32) -> ()
    %u8 = vm.buffer.load.i8.u %b[%o0] : i32
    %c255 = vm.const.i32 255
    vm.call.import @check.expect_eq_i32(%u8, %c255) : (i32, i32) -> ()
    // Unaligned 16-bit access at offset 1.
    %v16 = vm.const.i32 -2
    vm.buffer.store.i16 %b[%o1], %v16 : i32
    %s16 = vm.buffer.load.i16.s %b[%o1] : i32
    vm.call.import @check.expect_eq_i32(%s16, %v16) : (i32, i32) -> ()
    %u16 = vm.buffer.load.i16.u %b[%o1] : i32
    %c65534 = vm.const.i32 65534
    vm.call.import @check.expect_eq_i32(%u16, %c65534) : (i32, i32) -> ()
    %v32 = vm.const.i32 0x12345678
    vm.buffer.store.i32 %b[%o3], %v32 : i32
    %l32 = vm.buffer.load.i32 %b[%o3] : i32
    vm.call.import @check.expect_eq_i32(%l32, %v32) : (i32, i32) -> ()
    %v64 = vm.const.i64 -81985529216486896
    vm.buffer.store.i64 %b[%o8], %v64 : i64
    %l64 = vm.buffer.load.i64 %b[%o8] : i64
    vm.call.import @check.expect_eq_i64(%l64, %v64) : (i64, i64) -> ()
    %vf = vm.const.f32 -0.5
    vm.buffer.store.f32 %b[%o16], %vf : f32
    %lf = vm.buffer.load.f32 %b[%o16] : f32
    vm.call.import @check.expect_eq_f32(%lf, %vf) : (f32, f32) -> ()
    %vd = vm.const.f64 6.02e23
    vm.buffer.store.f64 %b[%o24], %vd : f64
    %ld = vm.buffer.load.f64 %b[%o24] : f64
    vm.call.import @check.expect_eq_f64(%ld, %vd) : (f64, f64) -> ()
    vm.return
  }

  vm.func @test_copy_fill() {
    %len = vm.const.i64 16
    %b = vm.buffer.alloc %len
    %o0 = vm.const.i64 0
    %o4 = vm.const.i64 4
    %o8 = vm.const.i64 8
    %v = vm.const.i32 171
    vm.buffer.fill.i8 %b[%o0], %o8, %v
    %w = vm.buffer.load.i32 %b[%o4] : i32
    %e = vm.const.i32 0xABABABAB
    vm.call.import @check.expect_eq_i32(%w, %e) : (i32, i32) -> ()
    vm.buffer.copy %b[%o4], %b[%o8], %o8
    %w2 = vm.buffer.load.i32 %b[%o8] : i32
    vm.call.import @check.expect_eq_i32(%w2, %e) : (i32, i32) -> ()
    %w3 = vm.buffer.load.i32 %b[%o4] : i32
    %o12 = vm.const.i64 12
    %w4 = vm.buffer.load.i32 %b[%o12] : i32
    %zero = vm.const.i32 0
    vm.call.import @check.expect_eq_i32(%w4, %zero) : (i32, i32) -> ()
    vm.call.import @check.expect_eq_i32(%w3, %e) : (i32, i32) -> ()
    vm.return
  }

  vm.func @test_rodata() {
    %small = vm.const.ref.rodata @small : !vm.buffer
    %sl = vm.buffer.length %small
    %c4 = vm.const.i64 4
    vm.call.import @check.expect_eq_i64(%sl, %c4) : (i64, i64) -> ()
    %o0 = vm.const.i64 0
    %w = vm.buffer.load.i32 %small[%o0] : i32
    %e = vm.const.i32 0x04030201
    vm.call.import @check.expect_eq_i32(%w, %e) : (i32, i32) -> ()
    %large = vm.const.ref.rodata @large : !vm.buffer
    %ll = vm.buffer.length %large
    %c256 = vm.const.i64 256
    vm.call.import @check.expect_eq_i64(%ll, %c256) : (i64, i64) -> ()
    %o252 = vm.const.i64 252
    %f = vm.buffer.load.f32 %large[%o252] : f32
    %ef = vm.const.f32 2.5
    vm.call.import @check.expect_eq_f32(%f, %ef) : (f32, f32) -> ()
    vm.return
  }

  vm.func @fail_out_of_range() {
    %len = vm.const.i64 8
    %b = vm.buffer.alloc %len
    %o6 = vm.const.i64 6
    %x = vm.buffer.load.i32 %b[%o6] : i32
    vm.return
  }

  vm.func @fail_read_only() {
    %small = vm.const.ref.rodata @small : !vm.buffer
    %o0 = vm.const.i64 0
    %v = vm.const.i32 9
    vm.buffer.store.i8 %small[%o0], %v : i32
    vm.return
  }

  vm.func @fail_null() {
    %null = vm.const.ref.zero : !vm.buffer
    %l = vm.buffer.length %null
    vm.return
  }

  vm.export @test_load_store
  vm.export @test_copy_fill
  vm.export @test_rodata
  vm.export @fail_out_of_range
  vm.export @fail_read_only
  vm.export @fail_null as("fail_null_buffer")
}
