//===- SPIRVBindingDecorations.cpp - What the kernel ABI says of bindings ---===//
//
// strata-spirv-binding-decorations (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/gpu/Passes.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_SPIRVBINDINGDECORATIONSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// Whether anything stores through `pointer` or a pointer derived from it
/// (anything but loads and access chains counts as a write).
bool writesThrough(Value pointer) {
  for (Operation *user : pointer.getUsers()) {
    if (isa<spirv::LoadOp>(user))
      continue;
    if (auto chain = dyn_cast<spirv::AccessChainOp>(user)) {
      if (chain.getBasePtr() == pointer && !writesThrough(chain.getResult()))
        continue;
    }
    return true;
  }
  return false;
}

struct SPIRVBindingDecorationsPass
    : impl::SPIRVBindingDecorationsPassBase<SPIRVBindingDecorationsPass> {
  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    llvm::StringMap<bool> written;
    module.walk([&](spirv::AddressOfOp address) {
      bool &writes = written[address.getVariable()];
      writes = writes || writesThrough(address.getPointer());
    });
    Builder b(module.getContext());
    for (auto variable : module.getOps<spirv::GlobalVariableOp>()) {
      auto type = dyn_cast<spirv::PointerType>(variable.getType());
      if (!type || type.getStorageClass() != spirv::StorageClass::StorageBuffer)
        continue;
      // The ABI forbids a written binding to overlap another.
      variable->setAttr("restrict", b.getUnitAttr());
      if (!written.lookup(variable.getSymName()))
        variable->setAttr("non_writable", b.getUnitAttr());
    }
  }
};

} // namespace
} // namespace strata::gpu
