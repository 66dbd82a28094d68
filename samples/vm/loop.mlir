// loop(n) = 1 + 2 + ... + n (0 for n < 1), with a counted loop.
//
// The latch is one fused compare-and-branch whose back edge needs no moves:
// the register allocator gives %i_next the register of %i and %sum_next the
// register of %sum, so the loop body is three instructions.
//
//   compile-module samples/vm/loop.mlir -o loop.smod
//   run-module --module=loop.smod --function=loop --input=i64=100   # i64=5050
vm.module @loop {
  vm.func @loop(%n: i64) -> i64 {
    %zero = vm.const.i64 0
    %one = vm.const.i64 1
    vm.cmp_br.lt.i64.s %n, %one, ^done(%zero : i64), ^body(%one, %zero : i64, i64)
  ^body(%i: i64, %sum: i64):
    %sum_next = vm.add.i64 %sum, %i
    %i_next = vm.add.i64 %i, %one
    vm.cmp_br.le.i64.s %i_next, %n, ^body(%i_next, %sum_next : i64, i64), ^done(%sum_next : i64)
  ^done(%result: i64):
    vm.return %result : i64
  }
  vm.export @loop
}
