// compile-module reports bad input as diagnostics with source locations and
// exits with status 1.
// RUN: split-file %s %t
// RUN: not compile-module %t/unsupported.mlir -o %t/unsupported.smod 2>&1 | FileCheck %s --check-prefix=NOT-INSTRUCTION
// RUN: not compile-module %t/missing-callee.mlir 2>&1 | FileCheck %s --check-prefix=MISSING-CALLEE
// RUN: not compile-module %t/type-mismatch.mlir 2>&1 | FileCheck %s --check-prefix=TYPE-MISMATCH
// RUN: not compile-module %t/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// RUN: not compile-module %t/two-modules.mlir 2>&1 | FileCheck %s --check-prefix=TWO-MODULES
// RUN: not compile-module %t/no-such-file.mlir 2>&1 | FileCheck %s --check-prefix=NO-FILE
// RUN: not compile-module %t/missing-executable.mlir -o %t/missing.smod 2>&1 | FileCheck %s --check-prefix=MISSING-EXECUTABLE

//--- unsupported.mlir
vm.module @m {
  vm.func @f(%x: i32) -> i64 {
    %y = builtin.unrealized_conversion_cast %x : i32 to i64
    vm.return %y : i64
  }
}
// NOT-INSTRUCTION: unsupported.mlir:3:10: error: 'builtin.unrealized_conversion_cast' op is not a VM instruction; only vm dialect ops can be compiled to bytecode

//--- missing-callee.mlir
vm.module @m {
  vm.func @f() {
    vm.call @nowhere() : () -> ()
    vm.return
  }
}
// MISSING-CALLEE: missing-callee.mlir:3:5: error: 'vm.call' op callee @nowhere is not defined in this module

//--- type-mismatch.mlir
vm.module @m {
  vm.func @f(%x: i32) -> i64 {
    vm.return %x : i32
  }
}
// TYPE-MISMATCH: type-mismatch.mlir:3:5: error: 'vm.return' op returns (i32) from a function that returns (i64)

//--- unknown-op.mlir
vm.module @m {
  vm.func @f(%x: i32) -> i32 {
    %y = vm.frobnicate.i32 %x
    vm.return %y : i32
  }
}
// UNKNOWN-OP: unknown-op.mlir:3:10: error: custom op 'vm.frobnicate.i32' is unknown

//--- two-modules.mlir
vm.module @a {
}
vm.module @b {
}
// TWO-MODULES: two-modules.mlir:3:1: error: expected the input to hold one vm.module only

// NO-FILE: compile-module: cannot open input file '{{.*}}no-such-file.mlir': No such file or directory

//--- missing-executable.mlir
// A program can name only an executable the module embeds.
vm.module @m {
  vm.func @f() -> !vm.ref {
    // MISSING-EXECUTABLE: missing-executable.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'vm.const.ref.executable' op names executable 'kernels', which the module does not embed
    %e = vm.const.ref.executable "kernels" : !vm.ref
    vm.return %e : !vm.ref
  }
  vm.export @f
}
