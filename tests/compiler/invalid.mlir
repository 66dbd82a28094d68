// The vm dialect's verifiers reject malformed modules with a diagnostic at
// the offending op.
// RUN: strata-opt %s --split-input-file --verify-diagnostics

vm.module @m {
  // expected-error @+1 {{'vm.func' op argument 0 has type 'index', which no VM register holds}}
  vm.func @f(%x: index) {
    vm.return
  }
}

// -----

vm.module @m {
  // expected-error @+1 {{'vm.func' op needs a body; declare functions of other modules with vm.import}}
  "vm.func"() <{function_type = () -> (), sym_name = "f"}> ({}) : () -> ()
}

// -----

vm.module @m {
  vm.func @f() {
    // expected-error @+1 {{'vm.call' op callee @missing is not defined in this module}}
    vm.call @missing() : () -> ()
    vm.return
  }
}

// -----

vm.module @m {
  vm.func @g(%x: i32) -> i32 {
    vm.return %x : i32
  }
  vm.func @f(%y: i64) {
    // expected-error @+1 {{'vm.call' op argument 0 of @g: expected 'i32', got 'i64'}}
    %r = vm.call @g(%y) : (i64) -> i32
    vm.return
  }
}

// -----

vm.module @m {
  vm.func @g(%x: i32) -> i32 {
    vm.return %x : i32
  }
  vm.func @f(%y: i32) {
    // expected-error @+1 {{'vm.call' op callee @g takes 1 arguments, got 2}}
    %r = vm.call @g(%y, %y) : (i32, i32) -> i32
    vm.return
  }
}

// -----

vm.module @m {
  vm.import @check.expect_true(i32)
  vm.func @f(%x: i32) {
    // expected-error @+1 {{'vm.call' op callee @check.expect_true is an import; call it with vm.call.import}}
    vm.call @check.expect_true(%x) : (i32) -> ()
    vm.return
  }
}

// -----

vm.module @m {
  vm.func @f(%x: i32) {
    // expected-error @+1 {{'vm.call.import' op callee @check.expect_true is not imported by this module}}
    vm.call.import @check.expect_true(%x) : (i32) -> ()
    vm.return
  }
}

// -----

vm.module @m {
  vm.import @native.take(!vm.buffer) -> i32
  vm.func @f(%l: !vm.list) {
    // expected-error @+1 {{'vm.call.import' op argument 0 of @native.take: expected '!vm.buffer', got '!vm.list'}}
    %r = vm.call.import @native.take(%l) : (!vm.list) -> i32
    vm.return
  }
}

// -----

vm.module @m {
  vm.import @native.take(!vm.ref) -> i32
  vm.func @f(%l: !vm.list) {
    // expected-error @+1 {{'vm.call.import' op results of @native.take: expected (i32), got (i64)}}
    %r = vm.call.import @native.take(%l) : (!vm.list) -> i64
    vm.return
  }
}

// -----

vm.module @m {
  // expected-error @+1 {{'vm.import' op name 'expect_true' must have the form 'module.function'}}
  vm.import @expect_true(i32)
}

// -----

vm.module @m {
  vm.func @f() {
    vm.return
  }
  // expected-note @+1 {{first exported here}}
  vm.export @f
  // expected-error @+1 {{'vm.export' op exports the name 'f' twice}}
  vm.export @f
}

// -----

vm.module @m {
  // expected-error @+1 {{'vm.export' op @nothing does not name a vm.func of this module}}
  vm.export @nothing
}

// -----

vm.module @m {
  // expected-error @+1 {{'vm.global.i32' op initial value must be a 'i32' constant, got 5 : i64}}
  vm.global.i32 @g = 5
}

// -----

vm.module @m {
  vm.global.i64 @g
  vm.func @f() -> i32 {
    // expected-error @+1 {{'vm.global.load.i32' op @g is a 'vm.global.i64', expected a 'vm.global.i32'}}
    %x = vm.global.load.i32 @g : i32
    vm.return %x : i32
  }
}

// -----

vm.module @m {
  vm.global.ref @r : !vm.list
  vm.func @f(%b: !vm.buffer) {
    // expected-error @+1 {{'vm.global.store.ref' op global @r holds '!vm.list', not '!vm.buffer'}}
    vm.global.store.ref %b, @r : !vm.buffer
    vm.return
  }
}

// -----

vm.module @m {
  vm.func @f() -> i32 {
    // expected-error @+1 {{'vm.global.load.i32' op refers to undefined global @nowhere}}
    %x = vm.global.load.i32 @nowhere : i32
    vm.return %x : i32
  }
}

// -----

vm.module @m {
  // expected-error @+1 {{'vm.rodata' op value must be a string or dense (or dense_resource) elements of whole-byte integers or floats}}
  vm.rodata @bits dense<[true, false]> : tensor<2xi1>
}

// -----

vm.module @m {
  vm.func @f() -> !vm.buffer {
    // expected-error @+1 {{'vm.const.ref.rodata' op @missing does not name a vm.rodata of this module}}
    %b = vm.const.ref.rodata @missing : !vm.buffer
    vm.return %b : !vm.buffer
  }
}

// -----

vm.module @m {
  vm.func @f(%x: i32) -> i64 {
    // expected-error @+1 {{'vm.return' op returns (i32) from a function that returns (i64)}}
    vm.return %x : i32
  }
}

// -----

vm.module @m {
  vm.func @f(%x: i32, %y: i64) {
    // expected-error @+1 {{type mismatch for bb argument #0 of successor #0}}
    vm.cmp_br.lt.i32.s %x, %x, ^next(%y : i64), ^next(%x : i32)
  ^next(%a: i32):
    vm.return
  }
}

// -----

vm.module @m {
  // expected-note @+1 {{prior use here}}
  vm.func @f(%x: i32, %y: i64) -> i64 {
    // expected-error @+1 {{use of value '%x' expects different type than prior uses: 'i64' vs 'i32'}}
    %s = vm.add.i64 %x, %y
    vm.return %s : i64
  }
}

// -----

vm.module @m {
  vm.func @f(%x: i64) -> i64 {
    // expected-error @+1 {{'vm.add.i32' op operand #0 must be 32-bit signless integer, but got 'i64'}}
    %s = "vm.add.i32"(%x, %x) : (i64, i64) -> i32
    vm.return %x : i64
  }
}

// -----

// expected-error @+1 {{'vm.func' op expects parent op 'vm.module'}}
vm.func @outside() {
  vm.return
}
