// fib(n) = n for n < 2, else fib(n - 1) + fib(n - 2): two recursive calls
// per level, which exercises the VM's call frames.
//
//   compile-module samples/vm/fib.mlir -o fib.smod
//   run-module --module=fib.smod --function=fib --input=i32=20      # i32=6765
vm.module @fib {
  vm.func @fib(%n: i32) -> i32 {
    %two = vm.const.i32 2
    %is_base = vm.cmp.lt.i32.s %n, %two
    // The recursive case comes next, where the fused compare-and-branch
    // falls through.
    vm.cond_br %is_base, ^base, ^recurse
  ^recurse:
    %one = vm.const.i32 1
    %n1 = vm.sub.i32 %n, %one
    %f1 = vm.call @fib(%n1) : (i32) -> i32
    %n2 = vm.sub.i32 %n, %two
    %f2 = vm.call @fib(%n2) : (i32) -> i32
    %sum = vm.add.i32 %f1, %f2
    vm.return %sum : i32
  ^base:
    vm.return %n : i32
  }
  vm.export @fib
}
