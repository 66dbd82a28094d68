// strata-opt: mlir-opt for the Strata compiler's dialects and passes, used by
// the lit tests (`strata-opt --vm-fuse-compare-branch`,
// `--verify-diagnostics`).

#include "compiler/vm/IR/VMDialect.h"
#include "compiler/vm/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<strata::vm::VMDialect>();
  strata::vm::registerVMPasses();
  // Canonicalization, CSE and friends, to test the vm ops' traits and
  // folders with them.
  mlir::registerTransformsPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Strata optimizer driver\n", registry));
}
