//===- LLVMKernelABI.cpp - Outlined kernels get the CUDA/ROCm kernel ABI --===//

#include "compiler/codegen/gpu/KernelABI.h"
#include "compiler/codegen/gpu/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace strata::gpu {

#define GEN_PASS_DEF_LLVMKERNELABIPASS
#include "compiler/codegen/gpu/Passes.h.inc"

namespace {

/// NVVM's and AMDGPU's address space for global memory.
constexpr unsigned kGlobalAddressSpace = 1;

bool hasStorageClass(MemRefType type, spirv::StorageClass storageClass) {
  auto attr = dyn_cast_or_null<spirv::StorageClassAttr>(type.getMemorySpace());
  return attr && attr.getValue() == storageClass;
}

/// The constants memref: each load at a constant index becomes the i32
/// parameter of that word, inserted at `first` onwards.
LogicalResult scalarizeConstants(mlir::gpu::GPUFuncOp function,
                                 unsigned position, unsigned words) {
  Location loc = function.getLoc();
  MLIRContext *context = function.getContext();
  Type i32 = IntegerType::get(context, 32);
  BlockArgument constants = function.getArgument(position);
  auto type = dyn_cast<MemRefType>(constants.getType());
  if (!type || !type.hasStaticShape() || type.getRank() != 1 ||
      type.getDimSize(0) != words || !type.getElementType().isInteger(32))
    return function.emitOpError("argument ")
           << position << " has type " << constants.getType()
           << "; expected the constants, memref<" << words << "xi32>";
  for (unsigned word = 0; word < words; ++word)
    if (failed(function.insertArgument(position + 1 + word, i32,
                                       DictionaryAttr::get(context), loc)))
      return failure();
  for (Operation *user : llvm::make_early_inc_range(constants.getUsers())) {
    auto load = dyn_cast<memref::LoadOp>(user);
    std::optional<int64_t> word =
        load ? getConstantIntValue(load.getIndices()[0]) : std::nullopt;
    if (!word || *word < 0 || *word >= words)
      return user->emitOpError("uses the kernel's constants other than by a "
                               "load of a constant word");
    load.getResult().replaceAllUsesWith(
        function.getArgument(position + 1 + *word));
    load.erase();
  }
  return function.eraseArgument(position);
}

/// A 1-D index as the i64 offset of an element.
Value elementPointer(OpBuilder &b, Location loc, Value base, Type element,
                     Value index) {
  Value offset = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::GEPOp::create(b, loc, base.getType(), element, base,
                             ValueRange{offset});
}

/// The binding argument becomes a global pointer; its users address it.
LogicalResult bindPointer(BlockArgument binding) {
  auto type = cast<MemRefType>(binding.getType());
  Type element = type.getElementType();
  unsigned bytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  MLIRContext *context = binding.getContext();
  for (Operation *user : binding.getUsers()) {
    if (!isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp,
             vector::LoadOp, vector::StoreOp,
             memref::ExtractAlignedPointerAsIndexOp>(user))
      return user->emitOpError("uses a kernel binding; GPU kernels only "
                               "load, store and update bindings at 1-D "
                               "indices (strata-gpu-fold-flat-views), or "
                               "take their address");
  }
  binding.setType(LLVM::LLVMPointerType::get(context, kGlobalAddressSpace));
  for (Operation *user : llvm::make_early_inc_range(binding.getUsers())) {
    OpBuilder b(user);
    Location loc = user->getLoc();
    // Element accesses are aligned to the element, vector ones as the op
    // says.
    if (auto address = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
      // The global address (cp.async's source, strata-gpu-matrix-tiles).
      Value integer = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), binding);
      address.getResult().replaceAllUsesWith(
          arith::IndexCastOp::create(b, loc, b.getIndexType(), integer).getResult());
    } else if (isa<memref::LoadOp, vector::LoadOp>(user)) {
      auto vectorLoad = dyn_cast<vector::LoadOp>(user);
      Value index = vectorLoad ? vectorLoad.getIndices()[0]
                               : cast<memref::LoadOp>(user).getIndices()[0];
      Value value = LLVM::LoadOp::create(
          b, loc, user->getResult(0).getType(),
          elementPointer(b, loc, binding, element, index),
          vectorLoad ? vectorLoad.getAlignment().value_or(bytes) : bytes);
      user->getResult(0).replaceAllUsesWith(value);
    } else if (isa<memref::StoreOp, vector::StoreOp>(user)) {
      auto vectorStore = dyn_cast<vector::StoreOp>(user);
      Value index = vectorStore ? vectorStore.getIndices()[0]
                                : cast<memref::StoreOp>(user).getIndices()[0];
      LLVM::StoreOp::create(
          b, loc, user->getOperand(0),
          elementPointer(b, loc, binding, element, index),
          vectorStore ? vectorStore.getAlignment().value_or(bytes) : bytes);
    } else {
      auto update = cast<memref::AtomicRMWOp>(user);
      std::optional<LLVM::AtomicBinOp> op;
      switch (update.getKind()) {
      case arith::AtomicRMWKind::addf: op = LLVM::AtomicBinOp::fadd; break;
      case arith::AtomicRMWKind::addi: op = LLVM::AtomicBinOp::add; break;
      case arith::AtomicRMWKind::maxs: op = LLVM::AtomicBinOp::max; break;
      case arith::AtomicRMWKind::mins: op = LLVM::AtomicBinOp::min; break;
      case arith::AtomicRMWKind::maxu: op = LLVM::AtomicBinOp::umax; break;
      case arith::AtomicRMWKind::minu: op = LLVM::AtomicBinOp::umin; break;
      case arith::AtomicRMWKind::assign: op = LLVM::AtomicBinOp::xchg; break;
      case arith::AtomicRMWKind::ori: op = LLVM::AtomicBinOp::_or; break;
      case arith::AtomicRMWKind::andi: op = LLVM::AtomicBinOp::_and; break;
      default: break;
      }
      if (!op)
        return update.emitOpError("is an atomic update GPU kernels do not "
                                  "lower");
      Value address = elementPointer(b, loc, binding, element,
                                     update.getIndices()[0]);
      Value old = LLVM::AtomicRMWOp::create(b, loc, *op, address,
                                            update.getValue(),
                                            LLVM::AtomicOrdering::monotonic);
      update.getResult().replaceAllUsesWith(old);
    }
    user->erase();
  }
  return success();
}

struct LLVMKernelABIPass : impl::LLVMKernelABIPassBase<LLVMKernelABIPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<mlir::gpu::GPUFuncOp>())
      if (function.isKernel() && failed(lower(function)))
        return signalPassFailure();
    getOperation()->removeAttr(spirv::getTargetEnvAttrName());
  }

  LogicalResult lower(mlir::gpu::GPUFuncOp function) {
    MLIRContext *context = function.getContext();
    auto size = function->getAttrOfType<DenseI32ArrayAttr>("strata.workgroup_size");
    auto constants = function->getAttrOfType<IntegerAttr>("strata.constant_count");
    if (!size || size.size() != 3 || !constants)
      return function.emitOpError("lacks the attributes of "
                                  "strata-gpu-outline-kernels");
    for (unsigned i = 0; i < function.getNumArguments(); ++i)
      function.removeArgAttr(i, spirv::getInterfaceVarABIAttrName());
    function->removeAttr(spirv::getEntryPointABIAttrName());
    function.setKnownBlockSizeAttr(size);

    // The constants are the last argument when there are any.
    unsigned words = constants.getInt();
    unsigned bindings = function.getNumArguments() - (words ? 1 : 0);
    if (words && failed(scalarizeConstants(function, bindings, words)))
      return failure();
    for (unsigned i = 0; i < bindings; ++i) {
      BlockArgument binding = function.getArgument(i);
      auto type = dyn_cast<MemRefType>(binding.getType());
      if (!type || type.getRank() != 1)
        return function.emitOpError("argument ")
               << i << " has type " << binding.getType()
               << "; expected a 1-D binding";
      if (failed(bindPointer(binding)))
        return failure();
      // The kernel ABI forbids a written binding to overlap another, and
      // the drivers refuse bindings whose address is not a multiple of 16
      // (kBindingAlignment), which lets LLVM load and store adjacent
      // elements as one vector.
      function.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                          UnitAttr::get(context));
      function.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                          IntegerAttr::get(IntegerType::get(context, 64), 16));
    }
    // The arguments' new types, before any workgroup attribution joins the
    // entry block.
    SmallVector<Type> inputs;
    for (BlockArgument arg : function.getArguments())
      inputs.push_back(arg.getType());
    function.setFunctionType(FunctionType::get(context, inputs, {}));

    // Temporaries: workgroup ones become shared memory, private ones plain
    // allocas. Shared memory is static (workgroup attributions), or where
    // the kernel takes more than it may declare
    // (strata.dynamic_workgroup_memory), views at 16-byte aligned offsets of
    // the dynamic shared memory the driver sizes at launch.
    Attribute shared = mlir::gpu::AddressSpaceAttr::get(
        context, mlir::gpu::AddressSpace::Workgroup);
    const bool dynamic = function->hasAttr("strata.dynamic_workgroup_memory");
    Value dynamicMemory;
    int64_t dynamicBytes = 0;
    SmallVector<memref::AllocOp> workgroup;
    SmallVector<memref::AllocaOp> privates;
    function.walk([&](memref::AllocOp alloc) { workgroup.push_back(alloc); });
    function.walk([&](memref::AllocaOp alloca) { privates.push_back(alloca); });
    for (memref::AllocOp alloc : workgroup) {
      MemRefType type = alloc.getType();
      if (!hasStorageClass(type, spirv::StorageClass::Workgroup) ||
          !type.hasStaticShape())
        return alloc.emitOpError("allocates ")
               << type << "; GPU kernels allocate only static workgroup "
               << "temporaries";
      auto sharedType = MemRefType::get(type.getShape(), type.getElementType(),
                                        type.getLayout(), shared);
      Value memory;
      if (dynamic) {
        OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
        if (!dynamicMemory)
          dynamicMemory = mlir::gpu::DynamicSharedMemoryOp::create(
              b, alloc.getLoc(),
              MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                              MemRefLayoutAttrInterface(), shared));
        b.setInsertionPointAfter(dynamicMemory.getDefiningOp());
        dynamicBytes = llvm::alignTo(dynamicBytes, 16);
        Value offset = arith::ConstantIndexOp::create(b, alloc.getLoc(), dynamicBytes);
        memory = memref::ViewOp::create(b, alloc.getLoc(), sharedType, dynamicMemory,
                                        offset, ValueRange{});
        dynamicBytes += workgroupBytes(type);
      } else {
        memory = function.addWorkgroupAttribution(sharedType, alloc.getLoc());
      }
      alloc.getResult().replaceAllUsesWith(memory);
      alloc.erase();
      if (failed(propagateMemorySpace(memory)))
        return failure();
    }
    // Fused multiply-adds as the LLVM intrinsic (PTX fma.rn, AMDGPU's
    // v_fma), not convert-gpu-to-nvvm's libdevice call __nv_fmaf, which
    // needs libdevice found at compile time.
    SmallVector<math::FmaOp> fmas;
    function.walk([&](math::FmaOp fma) { fmas.push_back(fma); });
    for (math::FmaOp fma : fmas) {
      OpBuilder b(fma);
      fma.replaceAllUsesWith(LLVM::FMAOp::create(b, fma.getLoc(), fma.getA(),
                                                 fma.getB(), fma.getC())
                                 .getResult());
      fma.erase();
    }
    // Square roots correctly rounded, as on the CPU: libdevice's
    // __nv_fsqrt_rn / __nv_dsqrt_rn (PTX sqrt.rn), not the __nv_sqrtf that
    // convert-gpu-to-nvvm calls, which is approximate unless the
    // __CUDA_PREC_SQRT reflection is set.
    SmallVector<math::SqrtOp> roots;
    if (!rocdl)
      function.walk([&](math::SqrtOp sqrt) { roots.push_back(sqrt); });
    for (math::SqrtOp sqrt : roots) {
      Type type = sqrt.getType();
      if (!type.isF32() && !type.isF64())
        continue;
      StringRef name = type.isF32() ? "__nv_fsqrt_rn" : "__nv_dsqrt_rn";
      auto module = function->getParentOfType<mlir::gpu::GPUModuleOp>();
      auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!callee) {
        OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
        callee = LLVM::LLVMFuncOp::create(
            b, module.getLoc(), name,
            LLVM::LLVMFunctionType::get(type, {type}));
      }
      OpBuilder b(sqrt);
      auto call = LLVM::CallOp::create(b, sqrt.getLoc(), callee,
                                       ValueRange{sqrt.getOperand()});
      sqrt.replaceAllUsesWith(call.getResult());
      sqrt.erase();
    }
    for (memref::AllocaOp alloca : privates) {
      MemRefType type = alloca.getType();
      if (!type.getMemorySpace())
        continue;
      alloca.getResult().setType(MemRefType::get(
          type.getShape(), type.getElementType(), type.getLayout(), nullptr));
      if (failed(propagateMemorySpace(alloca.getResult())))
        return failure();
    }
    return success();
  }
};

} // namespace
} // namespace strata::gpu
