// The module file: "SMOD" FlatBuffer, zero padding to 64 bytes, then the
// rodata segments of 64 bytes or more, each at a 64-byte aligned offset.
// RUN: compile-module %s -o %t.smod
// RUN: %python %S/check_module_file.py %t.smod 0 64 | FileCheck %s

// The integrity record names each part: the description, then the two
// external rodata segments (ordinals 1 and 2), which tile the module.
// CHECK: record: SMODSUM1
// CHECK-NEXT: part: description 0 [0, [[BASE:[0-9]+]])
// CHECK-NEXT: part: rodata 1 {{\[}}[[BASE]], [[END1:[0-9]+]])
// CHECK-NEXT: part: rodata 2 {{\[}}[[END1]], {{[0-9]+}})
// CHECK-NEXT: identifier: SMOD
// CHECK-NEXT: zero padding: True
// CHECK-NEXT: external data: 164 bytes
// CHECK-NEXT: external[0]: 00 01 02 03 04 05 06 07
// CHECK-NEXT: external[64]: 01 00 00 00 02 00 00 00
vm.module @file {
  vm.rodata @inline dense<[1, 2, 3]> : tensor<3xi8>
  vm.rodata @bytes dense<[
     0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
    48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63
  ]> : tensor<64xi8>
  vm.rodata @words dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                          17, 18, 19, 20, 21, 22, 23, 24, 25]> : tensor<25xi32>
}
