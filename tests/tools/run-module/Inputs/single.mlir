// A module that exports one function, so run-module needs no --function.
vm.module @single {
  vm.func @twice(%x: i64) -> i64 {
    %y = vm.add.i64 %x, %x
    vm.return %y : i64
  }
  vm.export @twice
}
