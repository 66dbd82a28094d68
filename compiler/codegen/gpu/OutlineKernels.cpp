//===- OutlineKernels.cpp - Kernels become gpu.func entry points ----------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/gpu/KernelABI.h"
#include "compiler/codegen/gpu/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_GPUOUTLINEKERNELSPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// A push-constant word as a value of `type`, read from `constants`.
Value readScalar(OpBuilder &b, Location loc, Value constants, unsigned word,
                 Type type) {
  auto load = [&](unsigned w) -> Value {
    Value index = arith::ConstantIndexOp::create(b, loc, w);
    return memref::LoadOp::create(b, loc, constants, index);
  };
  Value low = load(word);
  if (type.isInteger(32))
    return low;
  if (type.isF32())
    return arith::BitcastOp::create(b, loc, type, low);
  if (type.isIndex())
    return arith::IndexCastUIOp::create(b, loc, type, low);
  // i64: two words, the low one first.
  Value high = arith::ExtUIOp::create(b, loc, type, load(word + 1));
  Value shift = arith::ConstantIntOp::create(b, loc, type, 32);
  return arith::OrIOp::create(b, loc, arith::ExtUIOp::create(b, loc, type, low),
                                arith::ShLIOp::create(b, loc, high, shift));
}

/// Row-major strides of a view with `sizes`: static where the inner sizes
/// are.
SmallVector<OpFoldResult> rowMajorStrides(OpBuilder &b, Location loc,
                                          ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size());
  OpFoldResult stride = b.getIndexAttr(1);
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    strides[d] = stride;
    auto known = getConstantIntValue(stride);
    auto extent = getConstantIntValue(sizes[d]);
    if (known && extent)
      stride = b.getIndexAttr(*known * *extent);
    else
      stride = arith::MulIOp::create(
                   b, loc, getValueOrCreateConstantIndexOp(b, loc, stride),
                   getValueOrCreateConstantIndexOp(b, loc, sizes[d]))
                   .getResult();
  }
  return strides;
}

/// The element type the byte buffer `arg` (the scratch binding) holds when
/// every use views it as static arrays of that type at offsets that are
/// multiples of its size; else null (it stays a byte buffer).
Type scratchElement(BlockArgument arg) {
  auto type = cast<MemRefType>(arg.getType());
  if (!type.getElementType().isInteger(8) || arg.use_empty())
    return {};
  Type element;
  for (Operation *user : arg.getUsers()) {
    auto view = dyn_cast<memref::ViewOp>(user);
    if (!view || !view.getType().hasStaticShape())
      return {};
    Type viewed = view.getType().getElementType();
    std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
    unsigned bytes = (viewed.getIntOrFloatBitWidth() + 7) / 8;
    if ((element && element != viewed) || !shift || *shift % bytes != 0)
      return {};
    element = viewed;
  }
  return element;
}

/// Per argument of `kernel`: true when no op of its body may write it
/// (through views too). Ops that say nothing of their effects count as
/// writing every memref they take.
SmallVector<bool> readOnlyArguments(func::FuncOp kernel) {
  SmallVector<bool> readOnly(kernel.getNumArguments(), true);
  auto markWritten = [&](Value value) {
    while (value) {
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner()->getParentOp() == kernel)
          readOnly[arg.getArgNumber()] = false;
        return;
      }
      auto view = value.getDefiningOp<ViewLikeOpInterface>();
      value = view ? view.getViewSource() : Value();
    }
  };
  kernel.walk([&](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return;
      for (Value operand : op->getOperands())
        if (isa<MemRefType>(operand.getType()))
          markWritten(operand);
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances)
      if (isa<MemoryEffects::Write>(effect.getEffect()))
        markWritten(effect.getValue());
  });
  return readOnly;
}

struct GPUOutlineKernelsPass
    : impl::GPUOutlineKernelsPassBase<GPUOutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    Attribute env;
    if (!targetEnv.empty()) {
      env = parseAttribute(targetEnv, context);
      if (!isa_and_nonnull<spirv::TargetEnvAttr>(env)) {
        module.emitError("target-env is not a #spirv.target_env: ")
            << targetEnv;
        return signalPassFailure();
      }
    }
    SmallVector<func::FuncOp> kernels;
    for (auto function : module.getOps<func::FuncOp>())
      if (function.isPublic() && !function.isExternal())
        kernels.push_back(function);
    if (kernels.empty())
      return;

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto gpuModule = mlir::gpu::GPUModuleOp::create(b, module.getLoc(), "kernels");
    if (env)
      gpuModule->setAttr(spirv::getTargetEnvAttrName(), env);
    module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(context));
    for (func::FuncOp kernel : kernels) {
      if (failed(outline(kernel, gpuModule)))
        return signalPassFailure();
      kernel.erase();
    }
  }

  LogicalResult outline(func::FuncOp kernel,
                        mlir::gpu::GPUModuleOp gpuModule) {
    MLIRContext *context = kernel.getContext();
    Location loc = kernel.getLoc();
    if (!kernel.getBody().hasOneBlock())
      return kernel.emitOpError("has several blocks; GPU kernels take "
                                "structured control flow only");
    auto size = kernel->getAttrOfType<DenseI32ArrayAttr>("strata.workgroup_size");
    if (!size || size.size() != 3)
      return kernel.emitOpError("has no strata.workgroup_size; run "
                                "strata-gpu-distribute first");
    PushConstantLayout layout = PushConstantLayout::of(kernel);

    // Bindings, then the push constants.
    SmallVector<Type> argTypes;
    for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
      if (auto memref = dyn_cast<MemRefType>(type)) {
        if (!memref.getLayout().isIdentity())
          return kernel.emitOpError("argument ")
                 << i << " has type " << type << "; bindings need the "
                 << "identity layout";
        Type element = memref.getElementType();
        if (!element.isIntOrFloat() || element.isInteger(1))
          return kernel.emitOpError("argument ")
                 << i << " holds " << element
                 << "; bindings hold integers and floats of 8 to 64 bits "
                    "(strata-gpu-bool-bytes makes booleans bytes)";
        if (Type viewed = scratchElement(kernel.getArgument(i)))
          element = viewed;
        argTypes.push_back(MemRefType::get({ShapedType::kDynamic}, element));
        continue;
      }
      if (!type.isInteger(32) && !type.isInteger(64) && !type.isF32() &&
          !type.isIndex())
        return kernel.emitOpError("argument ")
               << i << " has type " << type
               << "; scalars are i32, i64, f32 or index";
    }
    unsigned bindings = argTypes.size();
    if (layout.words != 0)
      argTypes.push_back(
          MemRefType::get({layout.words}, IntegerType::get(context, 32)));

    OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
    auto function = mlir::gpu::GPUFuncOp::create(b, 
        loc, kernel.getSymName(), FunctionType::get(context, argTypes, {}));
    function->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(),
                      UnitAttr::get(context));
    function->setAttr(spirv::getEntryPointABIAttrName(),
                      spirv::getEntryPointABIAttr(context, size.asArrayRef()));
    for (unsigned i = 0; i < argTypes.size(); ++i) {
      bool constants = i == bindings;
      function.setArgAttr(i, spirv::getInterfaceVarABIAttrName(),
                          spirv::getInterfaceVarABIAttr(
                              constants ? kPushConstantSet : 0,
                              constants ? 0 : i, std::nullopt, context));
    }
    SmallVector<bool> readOnly;
    for (auto [i, flag] : llvm::enumerate(readOnlyArguments(kernel)))
      if (isa<MemRefType>(kernel.getArgumentTypes()[i]) &&
          !kernel.getArgAttr(i, "strata.check_status"))
        readOnly.push_back(flag);
    function->setAttr("strata.read_only",
                      DenseBoolArrayAttr::get(context, readOnly));
    function->setAttr("strata.constant_count",
                      IntegerAttr::get(IntegerType::get(context, 32),
                                       layout.words));
    for (StringRef name : std::initializer_list<StringRef>{"strata.workgroup_size", "strata.workgroup_count",
                           "strata.check_messages", "strata.workgroup_memory",
                           "strata.dynamic_workgroup_memory", cpu::kScratchBytesAttr})
      if (Attribute attr = kernel->getAttr(name))
        function->setAttr(name, attr);

    Block &entry = function.getBody().front();
    b.setInsertionPointToStart(&entry);
    Value constants = layout.words ? entry.getArgument(bindings) : Value();
    IRMapping mapping;
    unsigned binding = 0;
    for (auto [i, arg] : llvm::enumerate(kernel.getArguments())) {
      auto memref = dyn_cast<MemRefType>(arg.getType());
      if (!memref) {
        mapping.map(arg, readScalar(b, loc, constants, *layout.firstWord[i],
                                    arg.getType()));
        continue;
      }
      Value flat = entry.getArgument(binding++);
      if (Type element = scratchElement(arg)) {
        // Scratch: each view of the bytes is a view of the typed binding.
        unsigned bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
        for (Operation *user : arg.getUsers()) {
          auto scratch = cast<memref::ViewOp>(user);
          SmallVector<OpFoldResult> sizes;
          for (int64_t size : scratch.getType().getShape())
            sizes.push_back(b.getIndexAttr(size));
          int64_t offset = *getConstantIntValue(scratch.getByteShift()) / bytes;
          SmallVector<OpFoldResult> strides = rowMajorStrides(b, loc, sizes);
          SmallVector<int64_t> staticStrides;
          for (OpFoldResult stride : strides)
            staticStrides.push_back(*getConstantIntValue(stride));
          // At a non-zero offset the view's layout says so; its users (loads
          // and stores by now) take any layout.
          MemRefType type = scratch.getType();
          if (offset != 0)
            type = MemRefType::get(type.getShape(), type.getElementType(),
                                   StridedLayoutAttr::get(type.getContext(),
                                                          offset, staticStrides));
          mapping.map(scratch.getResult(),
                      memref::ReinterpretCastOp::create(
                          b, loc, type, flat, b.getIndexAttr(offset), sizes,
                          strides));
        }
        continue;
      }
      // The 1-D binding seen with the argument's shape, row-major.
      SmallVector<OpFoldResult> sizes;
      for (int64_t d = 0; d < memref.getRank(); ++d) {
        if (!memref.isDynamicDim(d)) {
          sizes.push_back(b.getIndexAttr(memref.getDimSize(d)));
          continue;
        }
        sizes.push_back(readScalar(b, loc, constants,
                                   layout.dimWord(kernel, i, d),
                                   b.getIndexType()));
      }
      Value view = memref::ReinterpretCastOp::create(
          b, loc, memref, flat, b.getIndexAttr(0), sizes,
          rowMajorStrides(b, loc, sizes));
      mapping.map(arg, view);
    }
    for (Operation &op : kernel.getBody().front().without_terminator())
      if (op.getNumResults() == 0 || !mapping.contains(op.getResult(0)))
        b.clone(op, mapping);
    mlir::gpu::ReturnOp::create(b, loc);
    return success();
  }
};

} // namespace
} // namespace strata::gpu
