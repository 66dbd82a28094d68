//===- Passes.td - vm dialect passes -----------------------*- tablegen -*-===//

#ifndef STRATA_COMPILER_VM_TRANSFORMS_PASSES_TD
#define STRATA_COMPILER_VM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VMFuseCompareBranchPass : Pass<"vm-fuse-compare-branch"> {
  let summary = "Fuses a signed less-than compare and the branch on it";
  let description = [{
    Rewrites a `vm.cmp.{lt,le}.{i32,i64}.s` whose only use is the condition
    of a `vm.cond_br` in the same block into one `vm.cmp_br.*` op, which
    encodes as a single compare-and-branch instruction (plus a branch to the
    false successor when it is not the next block):

    ```mlir
    %c = vm.cmp.lt.i64.s %i, %n
    vm.cond_br %c, ^loop(%i : i64), ^exit
    // becomes
    vm.cmp_br.lt.i64.s %i, %n, ^loop(%i : i64), ^exit
    ```
  }];
  let dependentDialects = ["::strata::vm::VMDialect"];
}

#endif  // STRATA_COMPILER_VM_TRANSFORMS_PASSES_TD
