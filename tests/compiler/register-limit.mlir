// A function that needs more registers in a bank than the VM allows (32767)
// is rejected at the value that would not fit.
// RUN: %python -c "print('vm.module @m { vm.func @f(' + ', '.join(chr(37) + 'a' + str(i) + ': i32' for i in range(32768)) + ') { vm.return } }')" > %t.mlir
// RUN: not compile-module %t.mlir 2>&1 | FileCheck %s

// CHECK: error: function needs more than 32767 scalar registers, the most the VM allows
