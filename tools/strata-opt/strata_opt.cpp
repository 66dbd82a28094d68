// strata-opt: mlir-opt for the Strata compiler's dialects and passes, used by
// the lit tests (`strata-opt --vm-fuse-compare-branch`,
// `--strata-cpu-wrap-kernel-abi`, `--verify-diagnostics`).

#include "compiler/codegen/cpu/Pipeline.h"
#include "compiler/codegen/gpu/Pipeline.h"
#include "compiler/dispatch/IR/FlowOps.h"
#include "compiler/dispatch/Transforms/Passes.h"
#include "compiler/host/Passes.h"
#include "compiler/vm/IR/VMDialect.h"
#include "compiler/vm/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<strata::vm::VMDialect, strata::flow::FlowDialect>();
  strata::vm::registerVMPasses();
  strata::flow::registerDispatchPasses();
  strata::host::registerHostPasses();
  // The CPU code generator's passes, its pipeline and the upstream dialects
  // kernels are written in.
  strata::cpu::registerCPUCodegenPasses();
  strata::gpu::registerGPUCodegenPasses();
  strata::cpu::registerCPUCodegenDialects(registry);
  // Upstream passes: canonicalization and CSE to test the vm ops' traits and
  // folders with, and the rest so that the CPU codegen pipeline can be
  // replayed pass by pass (--mlir-print-ir-after-all shows their names).
  mlir::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Strata optimizer driver\n", registry));
}
