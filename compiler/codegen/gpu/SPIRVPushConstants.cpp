//===- SPIRVPushConstants.cpp - One push-constant block per kernel --------===//

#include "compiler/codegen/gpu/Passes.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_SPIRVPUSHCONSTANTSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

spirv::PointerType asPushConstant(Type type) {
  return spirv::PointerType::get(cast<spirv::PointerType>(type).getPointeeType(),
                                 spirv::StorageClass::PushConstant);
}

/// Gives `value` and every pointer derived from it the push-constant storage
/// class.
LogicalResult retype(Value value) {
  value.setType(asPushConstant(value.getType()));
  for (Operation *user : value.getUsers()) {
    if (auto chain = dyn_cast<spirv::AccessChainOp>(user)) {
      if (chain.getBasePtr() == value && failed(retype(chain.getResult())))
        return failure();
      continue;
    }
    if (isa<spirv::LoadOp>(user))
      continue;
    return user->emitOpError("uses the push constants, which kernels only "
                             "read through access chains and loads");
  }
  return success();
}

struct SPIRVPushConstantsPass
    : impl::SPIRVPushConstantsPassBase<SPIRVPushConstantsPass> {
  void runOnOperation() override {
    spirv::ModuleOp module = getOperation();
    llvm::StringMap<spirv::GlobalVariableOp> variables;
    for (auto variable : module.getOps<spirv::GlobalVariableOp>()) {
      auto set = variable->getAttrOfType<IntegerAttr>(
          spirv::SPIRVDialect::getAttributeName(
              spirv::Decoration::DescriptorSet));
      if (!set || set.getInt() != kPushConstantSet)
        continue;
      variable.setTypeAttr(TypeAttr::get(asPushConstant(variable.getType())));
      variable->removeAttr(spirv::SPIRVDialect::getAttributeName(
          spirv::Decoration::DescriptorSet));
      variable->removeAttr(
          spirv::SPIRVDialect::getAttributeName(spirv::Decoration::Binding));
      variables[variable.getSymName()] = variable;
    }
    WalkResult result = module.walk([&](spirv::AddressOfOp address) {
      if (!variables.count(address.getVariable()))
        return WalkResult::advance();
      return failed(retype(address.getPointer())) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace strata::gpu
