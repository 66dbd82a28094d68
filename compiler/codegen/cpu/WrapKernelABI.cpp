//===- WrapKernelABI.cpp - Kernel entry points with the CPU kernel ABI ---===//
//
// The runtime calls `int kernel(const strata_cpu_dispatch_v0_t *)` once per
// workgroup (drivers/cpu/kernel_abi.h). This pass writes that function for
// each kernel in the func dialect, with LLVM dialect loads for the dispatch
// struct and memref descriptors cast in from LLVM structs; the casts cancel
// out when the module is converted to the LLVM dialect.
//
// The wrapper checks what it can before the body touches memory: the
// dispatch must bring the bindings and constants the kernel takes, and each
// binding must hold its memref (with dynamic sizes, which come from push
// constants, that is the only thing between a wrong constant and a write out
// of bounds). Failures return a non-zero code, which fails the dispatch.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"
#include "compiler/support/SourceLocation.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUWRAPKERNELABIPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

/// Fields of strata_cpu_dispatch_v0_t, in order (kernel_abi.h).
enum DispatchField : int32_t {
  kWorkgroupIdField = 0,    // uint32_t[3]
  kWorkgroupCountField = 1, // uint32_t[3]
  kBindingCountField = 2,   // uint32_t
  kConstantCountField = 3,  // uint32_t
  kBindingsField = 4,       // void* const*
  kBindingLengthsField = 5, // const uint64_t*
  kConstantsField = 6,      // const uint32_t*
  kLocalMemoryField = 7,    // void*
  kLocalMemorySizeField = 8, // uint64_t
};

/// Return codes of an entry point besides 0 (success).
enum EntryPointError : int32_t {
  kMissingBindingsOrConstants = 1,
  kBindingTooShort = 2,
  kLocalMemoryTooSmall = 3,
};

/// Where each kernel argument comes from.
struct ArgumentSource {
  enum Kind { kBinding, kConstant, kWorkgroupId, kWorkgroupCount, kLocalMemory } kind;
  unsigned index = 0; // binding or (first) constant number
};

struct KernelSignature {
  SmallVector<ArgumentSource> arguments;
  /// Per memref argument, the push constant of each dynamic dimension.
  DenseMap<std::pair<unsigned, unsigned>, unsigned> dynamicDimConstant;
  unsigned bindingCount = 0;
  unsigned constantCount = 0;
  /// Bytes of the runtime's local memory the kernel uses (0: none).
  int64_t localMemoryBytes = 0;
};

/// Numbers the arguments: memrefs are bindings in order; scalars (an i64 as
/// two, low word first), then dynamic dimensions, are push constants.
FailureOr<KernelSignature> classifyArguments(func::FuncOp kernel) {
  KernelSignature signature;
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    if (kernel.getArgAttr(i, kWorkgroupIdAttr)) {
      signature.arguments.push_back({ArgumentSource::kWorkgroupId});
    } else if (kernel.getArgAttr(i, kWorkgroupCountAttr)) {
      signature.arguments.push_back({ArgumentSource::kWorkgroupCount});
    } else if (kernel.getArgAttr(i, kLocalMemoryAttr)) {
      auto memref = dyn_cast<MemRefType>(type);
      if (!memref || memref.getRank() != 1 || !memref.hasStaticShape() ||
          !memref.getElementType().isInteger(8) || signature.localMemoryBytes)
        return kernel.emitOpError("argument ")
               << i << " is not the one static memref of i8 that local memory is";
      signature.localMemoryBytes = memref.getNumElements();
      signature.arguments.push_back({ArgumentSource::kLocalMemory});
    } else if (isa<MemRefType>(type)) {
      signature.arguments.push_back(
          {ArgumentSource::kBinding, signature.bindingCount++});
    } else if (type.isInteger(32) || type.isF32() || type.isIndex()) {
      signature.arguments.push_back(
          {ArgumentSource::kConstant, signature.constantCount++});
    } else if (type.isInteger(64)) {
      // Two constants: the low word, then the high word.
      signature.arguments.push_back(
          {ArgumentSource::kConstant, signature.constantCount});
      signature.constantCount += 2;
    } else {
      return kernel.emitOpError("argument ")
             << i << " has type " << type
             << ", which is neither a memref nor an i32, i64, f32 or index "
                "push constant";
    }
  }
  for (auto [i, type] : llvm::enumerate(kernel.getArgumentTypes()))
    if (auto memref = dyn_cast<MemRefType>(type))
      for (auto [dim, size] : llvm::enumerate(memref.getShape()))
        if (ShapedType::isDynamic(size))
          signature.dynamicDimConstant[{unsigned(i), unsigned(dim)}] =
              signature.constantCount++;
  return signature;
}

/// True when nothing reachable from `memref` (through views) writes to it.
bool isReadOnly(Value memref) {
  for (OpOperand &use : memref.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
      if (view.getViewSource() == memref && !isReadOnly(view->getResult(0)))
        return false;
      continue;
    }
    // A read prefetch (TileAndVectorize's, of the next strip of packed
    // weights) reads at most; memref.prefetch declares no effects.
    if (auto prefetch = dyn_cast<memref::PrefetchOp>(user)) {
      if (prefetch.getIsWrite())
        return false;
      continue;
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects)
      return false; // unknown (a call, say): assume it writes
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffectsOnValue(memref, instances);
    if (llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Write>(e.getEffect());
        }))
      return false;
  }
  return true;
}

/// Emits the wrapper's IR. All values are built at the current insertion
/// point of `b`.
class WrapperBuilder {
public:
  WrapperBuilder(OpBuilder &b, Location loc, Value dispatch)
      : b(b), loc(loc), dispatch(dispatch), context(b.getContext()) {
    ptrType = LLVM::LLVMPointerType::get(context);
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    auto array3 = LLVM::LLVMArrayType::get(i32, 3);
    dispatchType = LLVM::LLVMStructType::getLiteral(
        context,
        {array3, array3, i32, i32, ptrType, ptrType, ptrType, ptrType, i64});
  }

  /// A uint32_t field of the dispatch struct, or element `index` of an
  /// array field.
  Value loadField(DispatchField field, std::optional<int32_t> index = {}) {
    SmallVector<LLVM::GEPArg> path = {0, int32_t(field)};
    if (index)
      path.push_back(*index);
    Type type = field == kLocalMemorySizeField ? Type(i64)
                : field >= kBindingsField     ? Type(ptrType)
                                              : Type(i32);
    Value address =
        LLVM::GEPOp::create(b, loc, ptrType, dispatchType, dispatch, path);
    return LLVM::LoadOp::create(b, loc, type, address);
  }

  /// Element `index` of the array at `base`.
  Value loadElement(Value base, Type type, unsigned index) {
    Value address = LLVM::GEPOp::create(b, loc, ptrType, type, base,
                                        ArrayRef<LLVM::GEPArg>{int32_t(index)});
    return LLVM::LoadOp::create(b, loc, type, address);
  }

  Value constant(Type type, int64_t value) {
    return arith::ConstantOp::create(b, loc, type,
                                     b.getIntegerAttr(type, value));
  }
  Value zext64(Value value) {
    return arith::ExtUIOp::create(b, loc, i64, value);
  }
  Value all(ArrayRef<Value> conditions) {
    Value result = constant(b.getI1Type(), 1);
    for (Value condition : conditions)
      result = arith::AndIOp::create(b, loc, result, condition);
    return result;
  }

  OpBuilder &b;
  Location loc;
  Value dispatch;
  MLIRContext *context;
  Type ptrType, i32, i64;
  LLVM::LLVMStructType dispatchType;
};

struct CPUWrapKernelABIPass
    : impl::CPUWrapKernelABIPassBase<CPUWrapKernelABIPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (isKernel(func))
        kernels.push_back(func);
    LowerToLLVMOptions options(&getContext());
    LLVMTypeConverter converter(&getContext(), options);
    for (func::FuncOp kernel : kernels)
      if (failed(wrap(kernel, symbols, converter)))
        return signalPassFailure();
    // Only entry points are exported: bodies and helpers get internal
    // linkage, which also lets LLVM inline them into their one caller.
    auto internal =
        LLVM::LinkageAttr::get(&getContext(), LLVM::Linkage::Internal);
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPrivate() && !func.isExternal())
        func->setAttr("llvm.linkage", internal);
  }

  LogicalResult wrap(func::FuncOp kernel, SymbolTable &symbols,
                     const LLVMTypeConverter &converter) {
    if (kernel.getNumResults() != 0)
      return kernel.emitOpError("a kernel returns nothing; it writes its "
                                "results to memref arguments");
    FailureOr<KernelSignature> signature = classifyArguments(kernel);
    if (failed(signature))
      return failure();

    SmallVector<std::string> checks = numberChecks(kernel);
    if (!checks.empty())
      returnStatus(kernel);

    std::string name = kernel.getSymName().str();
    std::string bodyName = name + ".body";
    if (symbols.lookup(bodyName))
      return kernel.emitOpError("cannot name the kernel body '")
             << bodyName << "': the symbol exists";
    if (failed(symbols.rename(kernel, bodyName)))
      return kernel.emitOpError("cannot rename the kernel body");
    kernel.setPrivate();
    MLIRContext *context = kernel.getContext();
    Location loc = kernel.getLoc();
    OpBuilder moduleBuilder(kernel);
    Type ptrType = LLVM::LLVMPointerType::get(context);
    auto wrapper = func::FuncOp::create(
        moduleBuilder, loc, name,
        FunctionType::get(context, {ptrType}, {moduleBuilder.getI32Type()}));
    symbols.insert(wrapper);
    // The dispatch struct is the runtime's, read-only and never null.
    wrapper.setArgAttr(0, LLVM::LLVMDialect::getNoAliasAttrName(),
                       UnitAttr::get(context));
    wrapper.setArgAttr(0, LLVM::LLVMDialect::getNonNullAttrName(),
                       UnitAttr::get(context));
    wrapper.setArgAttr(0, LLVM::LLVMDialect::getReadonlyAttrName(),
                       UnitAttr::get(context));

    Block *entry = wrapper.addEntryBlock();
    Block *load = new Block(), *run = new Block(), *fail = new Block();
    wrapper.getBody().push_back(load);
    wrapper.getBody().push_back(run);
    wrapper.getBody().push_back(fail);
    Value failCode = fail->addArgument(moduleBuilder.getI32Type(), loc);

    OpBuilder b = OpBuilder::atBlockBegin(entry);
    WrapperBuilder w(b, loc, wrapper.getArgument(0));

    // Entry: the linear workgroup id and count, and enough bindings and
    // constants for the kernel.
    Value id[3], count[3];
    for (int32_t axis = 0; axis < 3; ++axis) {
      id[axis] = w.zext64(w.loadField(kWorkgroupIdField, axis));
      count[axis] = w.zext64(w.loadField(kWorkgroupCountField, axis));
    }
    // x + cx * (y + cy * z), and cx * cy * cz, in 64 bits (no overflow).
    Value linearId = arith::AddIOp::create(
        b, loc, id[0],
        arith::MulIOp::create(
            b, loc, count[0],
            arith::AddIOp::create(
                b, loc, id[1],
                arith::MulIOp::create(b, loc, count[1], id[2]))));
    Value linearCount = arith::MulIOp::create(
        b, loc, count[0], arith::MulIOp::create(b, loc, count[1], count[2]));
    Value enough = w.all(
        {arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                               w.loadField(kBindingCountField),
                               w.constant(w.i32, signature->bindingCount)),
         arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                               w.loadField(kConstantCountField),
                               w.constant(w.i32, signature->constantCount))});
    cf::CondBranchOp::create(
        b, loc, enough, load, ValueRange(), fail,
        ValueRange{w.constant(w.i32, kMissingBindingsOrConstants)});

    // Load: constants, binding pointers, sizes; each binding long enough.
    b.setInsertionPointToStart(load);
    Value bindings = w.loadField(kBindingsField);
    Value lengths = w.loadField(kBindingLengthsField);
    Value constants = w.loadField(kConstantsField);
    SmallVector<Value> constantValues;
    for (unsigned i = 0; i < signature->constantCount; ++i)
      constantValues.push_back(w.loadElement(constants, w.i32, i));

    SmallVector<Value> bodyArgs, lengthOk;
    Value localMemoryOk;
    for (auto [i, source] : llvm::enumerate(signature->arguments)) {
      Type type = kernel.getArgumentTypes()[i];
      switch (source.kind) {
      case ArgumentSource::kWorkgroupId:
        bodyArgs.push_back(
            arith::IndexCastUIOp::create(b, loc, b.getIndexType(), linearId));
        break;
      case ArgumentSource::kWorkgroupCount:
        bodyArgs.push_back(arith::IndexCastUIOp::create(
            b, loc, b.getIndexType(), linearCount));
        break;
      case ArgumentSource::kConstant: {
        Value raw = constantValues[source.index];
        if (type.isInteger(64)) {
          Value high = w.zext64(constantValues[source.index + 1]);
          bodyArgs.push_back(arith::OrIOp::create(
              b, loc, w.zext64(raw),
              arith::ShLIOp::create(b, loc, high, w.constant(w.i64, 32))));
        } else if (type.isF32())
          bodyArgs.push_back(arith::BitcastOp::create(b, loc, type, raw));
        else if (type.isIndex())
          bodyArgs.push_back(arith::IndexCastUIOp::create(b, loc, type, raw));
        else
          bodyArgs.push_back(raw);
        break;
      }
      case ArgumentSource::kLocalMemory: {
        auto memref = cast<MemRefType>(type);
        localMemoryOk = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::uge, w.loadField(kLocalMemorySizeField),
            w.constant(w.i64, signature->localMemoryBytes));
        bodyArgs.push_back(buildDescriptor(w, converter, memref,
                                           w.loadField(kLocalMemoryField),
                                           {w.constant(w.i64, memref.getNumElements())}));
        break;
      }
      case ArgumentSource::kBinding: {
        auto memref = cast<MemRefType>(type);
        Value pointer = w.loadElement(bindings, w.ptrType, source.index);
        Value length = w.loadElement(lengths, w.i64, source.index);
        SmallVector<Value> sizes;
        for (auto [dim, size] : llvm::enumerate(memref.getShape()))
          sizes.push_back(
              ShapedType::isDynamic(size)
                  ? w.zext64(constantValues[signature->dynamicDimConstant.at(
                        {unsigned(i), unsigned(dim)})])
                  : w.constant(w.i64, size));
        lengthOk.push_back(fitsIn(w, memref, sizes, length));
        bodyArgs.push_back(
            buildDescriptor(w, converter, memref, pointer, sizes));
        break;
      }
      }
    }
    if (localMemoryOk) {
      Block *enoughLocal = new Block();
      wrapper.getBody().push_back(enoughLocal);
      cf::CondBranchOp::create(b, loc, localMemoryOk, enoughLocal, ValueRange(), fail,
                               ValueRange{w.constant(w.i32, kLocalMemoryTooSmall)});
      b.setInsertionPointToStart(enoughLocal);
    }
    cf::CondBranchOp::create(b, loc, w.all(lengthOk), run, ValueRange(), fail,
                             ValueRange{w.constant(w.i32, kBindingTooShort)});

    // Run: the body, on workgroup 0 only when the kernel is not split.
    b.setInsertionPointToStart(run);
    Value zero = w.constant(w.i32, 0);
    bool distributed = llvm::any_of(signature->arguments, [](auto source) {
      return source.kind == ArgumentSource::kWorkgroupId;
    });
    if (!distributed) {
      Block *call = new Block();
      wrapper.getBody().push_back(call);
      Block *done = new Block();
      wrapper.getBody().push_back(done);
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          linearId, w.constant(w.i64, 0));
      cf::CondBranchOp::create(b, loc, first, call, ValueRange(), done,
                               ValueRange());
      OpBuilder doneBuilder = OpBuilder::atBlockBegin(done);
      func::ReturnOp::create(doneBuilder, loc, zero);
      b.setInsertionPointToStart(call);
    }
    auto call = func::CallOp::create(b, loc, kernel, bodyArgs);
    func::ReturnOp::create(b, loc,
                           checks.empty() ? zero : call.getResult(0));

    OpBuilder failBuilder = OpBuilder::atBlockBegin(fail);
    func::ReturnOp::create(failBuilder, loc, failCode);

    wrapper->setAttr(kEntryPointAttr,
                     describe(kernel, *signature, checks, moduleBuilder));
    return success();
  }

  /// Numbers the kernel's `cf.assert` ops (kCheckAttr) and returns what each
  /// one tests, prefixed with its location in the model.
  SmallVector<std::string> numberChecks(func::FuncOp kernel) {
    SmallVector<std::string> messages;
    Builder b(kernel.getContext());
    kernel.walk([&](cf::AssertOp check) {
      check->setAttr(kCheckAttr, b.getI32IntegerAttr(messages.size()));
      std::optional<std::string> where = fileLocation(check.getLoc());
      messages.push_back((where ? *where + ": " : std::string()) +
                         check.getMsg().str());
    });
    return messages;
  }

  /// Makes the body return an i32 status: 0 where it returned, the failed
  /// check's code where strata-cpu-lower-checks makes a check return.
  void returnStatus(func::FuncOp kernel) {
    OpBuilder b(kernel.getContext());
    Type i32 = b.getI32Type();
    kernel.setType(FunctionType::get(kernel.getContext(),
                                     kernel.getArgumentTypes(), {i32}));
    kernel.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      ret->setOperands(ValueRange{arith::ConstantOp::create(
          b, ret.getLoc(), i32, b.getIntegerAttr(i32, 0))});
    });
  }

  /// `length >= product(sizes) * element bytes`, where a product that
  /// overflows 64 bits never fits.
  Value fitsIn(WrapperBuilder &w, MemRefType memref, ArrayRef<Value> sizes,
               Value length) {
    OpBuilder &b = w.b;
    Location loc = w.loc;
    unsigned bits = memref.getElementTypeBitWidth();
    Value bytes = w.constant(w.i64, (bits + 7) / 8);
    Value overflow = w.constant(b.getI1Type(), 0);
    for (Value size : sizes) {
      auto product = arith::MulUIExtendedOp::create(b, loc, bytes, size);
      bytes = product.getLow();
      overflow = arith::OrIOp::create(
          b, loc, overflow,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                product.getHigh(), w.constant(w.i64, 0)));
    }
    Value fits =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, bytes, length);
    return arith::AndIOp::create(
        b, loc, fits,
        arith::XOrIOp::create(b, loc, overflow, w.constant(b.getI1Type(), 1)));
  }

  /// A row-major memref descriptor over `pointer` with `sizes`, cast to the
  /// memref type.
  Value buildDescriptor(WrapperBuilder &w, const LLVMTypeConverter &converter,
                        MemRefType memref, Value pointer,
                        ArrayRef<Value> sizes) {
    OpBuilder &b = w.b;
    Location loc = w.loc;
    Type descriptorType = converter.convertType(memref);
    MemRefDescriptor descriptor =
        MemRefDescriptor::poison(b, loc, descriptorType);
    descriptor.setAllocatedPtr(b, loc, pointer);
    descriptor.setAlignedPtr(b, loc, pointer);
    descriptor.setConstantOffset(b, loc, 0);
    Value stride = w.constant(w.i64, 1);
    for (int64_t dim = memref.getRank() - 1; dim >= 0; --dim) {
      descriptor.setSize(b, loc, dim, sizes[dim]);
      descriptor.setStride(b, loc, dim, stride);
      if (dim > 0)
        stride = arith::MulIOp::create(b, loc, stride, sizes[dim]);
    }
    return UnrealizedConversionCastOp::create(b, loc, TypeRange{memref},
                                              ValueRange{descriptor})
        .getResult(0);
  }

  /// The entry point's metadata (strata_cpu.entry_point).
  DictionaryAttr describe(func::FuncOp kernel, const KernelSignature &signature,
                          ArrayRef<std::string> checks, Builder &b) {
    SmallVector<bool> readOnly;
    for (auto [i, source] : llvm::enumerate(signature.arguments))
      if (source.kind == ArgumentSource::kBinding)
        readOnly.push_back(isReadOnly(kernel.getArgument(i)));
    int64_t tile = 1, columns = 1;
    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr("binding_count",
                       b.getI64IntegerAttr(signature.bindingCount)),
        b.getNamedAttr("constant_count",
                       b.getI64IntegerAttr(signature.constantCount)),
        b.getNamedAttr("binding_read_only",
                       DenseBoolArrayAttr::get(b.getContext(), readOnly))};
    auto distribution =
        kernel->getAttrOfType<DictionaryAttr>(kDistributionAttr);
    std::optional<int64_t> count = 1;
    if (distribution) {
      tile = cast<IntegerAttr>(distribution.get("tile")).getInt();
      count.reset();
      if (auto extent = distribution.getAs<IntegerAttr>("extent"))
        count = std::max<int64_t>(1, (extent.getInt() + tile - 1) / tile);
      if (auto tiles = distribution.getAs<IntegerAttr>("tiles"))
        count = std::max<int64_t>(1, tiles.getInt());
      if (auto columnTile = distribution.getAs<IntegerAttr>("columns"))
        columns = columnTile.getInt();
      auto arg = distribution.getAs<IntegerAttr>("extent_arg");
      auto dim = distribution.getAs<IntegerAttr>("extent_dim");
      if (arg && dim)
        entries.push_back(b.getNamedAttr(
            "workgroup_count_constant",
            b.getI64IntegerAttr(signature.dynamicDimConstant.at(
                {unsigned(arg.getInt()), unsigned(dim.getInt())}))));
    }
    entries.push_back(
        b.getNamedAttr("workgroup_size", b.getDenseI64ArrayAttr({tile, columns, 1})));
    if (count)
      entries.push_back(b.getNamedAttr("workgroup_count",
                                       b.getDenseI64ArrayAttr({*count, 1, 1})));
    if (auto scratch = kernel->getAttrOfType<IntegerAttr>(kScratchBytesAttr))
      entries.push_back(b.getNamedAttr("scratch_bytes", scratch));
    if (signature.localMemoryBytes)
      entries.push_back(b.getNamedAttr(
          "local_memory_bytes", b.getI64IntegerAttr(signature.localMemoryBytes)));
    if (kernel->hasAttr(kAscendingWorkgroupsAttr))
      entries.push_back(
          b.getNamedAttr("ascending_workgroups", b.getUnitAttr()));
    if (!checks.empty())
      entries.push_back(b.getNamedAttr(
          "check_messages", b.getStrArrayAttr(SmallVector<StringRef>(
                                checks.begin(), checks.end()))));
    return b.getDictionaryAttr(entries);
  }
};

} // namespace
} // namespace strata::cpu
