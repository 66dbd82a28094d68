//===- HostToVM.cpp - Host functions to a vm.module -----------------------===//

#include "compiler/host/HostToVM.h"

#include <limits>

#include "compiler/support/SourceLocation.h"

#include "compiler/dispatch/IR/FlowOps.h"
#include "compiler/host/KernelVariants.h"
#include "compiler/host/Passes.h"
#include "compiler/vm/IR/VMDialect.h"
#include "compiler/vm/IR/VMOps.h"
#include "schemas/buffer_bits.h"
#include "schemas/element_type.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DepthFirstIterator.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace strata::host {
namespace {

// The bits the hal module takes (schemas/buffer_bits.h).
constexpr int32_t kMemoryDeviceLocal = buffer_bits::kDeviceLocal;
constexpr int32_t kUsageTransferSource = buffer_bits::kTransferSource,
                  kUsageTransferTarget = buffer_bits::kTransferTarget,
                  kUsageDispatchStorage = buffer_bits::kDispatchStorage,
                  kUsageMapping = buffer_bits::kMapping;

/// The element type code of schemas/element_types.def, or 0: found by the
/// name the table gives the type ("f32", "bf16", "i1", "ui8"; signless
/// integers are signed).
uint32_t elementTypeCode(Type type) {
  std::string name;
  if (auto integer = dyn_cast<IntegerType>(type))
    name = (integer.isUnsigned() ? "ui" : "i") + std::to_string(integer.getWidth());
  else if (type.isBF16())
    name = "bf16";
  else if (isa<FloatType>(type))
    name = "f" + std::to_string(type.getIntOrFloatBitWidth());
  std::optional<ElementType> code = ElementTypeFromName(name);
  return code ? uint32_t(*code) : 0;
}

/// A tensor inside a host function: its buffer range and dimensions.
struct TensorValue {
  RankedTensorType type;
  Value view;   // !vm.ref hal.buffer_view, made on demand
  Value buffer; // !vm.ref hal.buffer; null for a constant
  // A constant's vm.rodata: its bytes and hal.buffer are asked for where
  // they are used (bufferOf), so that a command buffer recorded once
  // (emitReplayed) asks for them only then.
  StringAttr constant;
  Value offset; // i64
  Value length; // i64
  SmallVector<Value> dims; // i64 each
  // The bytes of `buffer` the tensor spans where the plan fixes them at
  // compile time (a transient in the block's arena); otherwise the whole
  // buffer, as far as the ordering of dispatches is concerned.
  int64_t firstByte = 0;
  int64_t endByte = std::numeric_limits<int64_t>::max();
};

/// What a dispatch binds: a buffer range, or a constant's (its bytes; the
/// buffer is made where the binding is recorded).
struct PendingBinding {
  Value buffer;
  StringAttr constant;
  Value offset, length;
};

/// A dispatch of the block's submission, recorded at the submission
/// (FunctionLowering::flush).
struct PendingDispatch {
  bool barrierBefore;
  int64_t ordinal;
  std::array<Value, 3> count;
  SmallVector<Value> constants;
  SmallVector<PendingBinding> bindings;
};

/// A range of a buffer that a recorded dispatch reads or writes.
struct Access {
  const void *buffer; // the buffer's Value, or a constant's rodata symbol
  int64_t firstByte, endByte;
  bool write;

  /// Whether running the two in either order, or at once, could change what
  /// is read or written: the same buffer, overlapping bytes, one a write.
  bool conflicts(const Access &other) const {
    return buffer == other.buffer && (write || other.write) &&
           firstByte < other.endByte && other.firstByte < endByte;
  }
};

class ModuleLowering;

class FunctionLowering {
public:
  FunctionLowering(ModuleLowering &module, func::FuncOp source,
                   vm::FuncOp target);
  LogicalResult run();

private:
  // Emission helpers.
  Value op1(StringRef name, ValueRange operands, Type type);
  Value i32(int64_t value);
  Value i64(int64_t value);
  /// Calls import `name`; its results.
  ValueRange call(StringRef name, ValueRange operands);
  Value call1(StringRef name, ValueRange operands);
  void call0(StringRef name, ValueRange operands);
  Value text(StringRef string);
  Value nullList();
  Value listOf(ArrayRef<Value> values);
  Value dispatchList(unsigned which, ArrayRef<Value> values);
  void fillList(Value list, ArrayRef<Value> values);

  Type vmType(Type type);
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation &op);
  LogicalResult lowerScalar(Operation &op);
  LogicalResult lowerDispatch(flow::DispatchOp op);
  std::array<Value, 3> workgroupCount(const codegen::DispatchInfo &info,
                                      ArrayRef<Value> constants);
  /// 1 (i32) when the device runs executable format `format`, else 0;
  /// asked once per function.
  Value runsFormat(StringRef format);
  LogicalResult lowerExtract(tensor::ExtractOp op);
  LogicalResult lowerConstantTensor(arith::ConstantOp op);
  FailureOr<SmallVector<Value>> operandsOf(Operation *op, ValueRange values);
  Value viewOf(TensorValue &tensor, Location loc);
  /// "'fn': tensor.cast at m.mlir:3:8 <what>", the message of a host check.
  std::string describeCheck(Operation *op, const Twine &what) {
    return ("'" + source.getSymName() + "': " + opWithLocation(op) + " " + what)
        .str();
  }
  TensorValue fromView(Value view, RankedTensorType type);
  /// The tensor's hal.buffer (a constant's made here).
  Value bufferOf(const TensorValue &tensor);
  /// The buffer of a binding, for a recording here: a constant's made once
  /// per recording (`made`).
  Value bindingBuffer(const PendingBinding &binding, DenseMap<Attribute, Value> &made);
  /// The hal.buffer of the constant `symbol`, asked for here.
  Value constantBuffer(StringAttr symbol);
  /// Records the pending dispatches into a new command buffer and submits
  /// it, or, where nothing but buffers differs from call to call, into one
  /// recorded on the first call and submitted with each call's buffers.
  void emitRecorded();
  void emitReplayed();
  /// Records the pending dispatches into `commandBuffer` (begin to end),
  /// each binding as `bind(dispatch, binding)` (their indices) gives it.
  void recordPending(
      Value commandBuffer,
      function_ref<std::array<Value, 3>(size_t, size_t)> bind);
  bool replayable() const;
  /// Whether an i32 is the same on every call of a context: a constant, or
  /// one of constants chosen by the device's formats (perDevice).
  bool fixedForDevice(Value value) const;
  void submitAndWait(StringRef import, ArrayRef<Value> operands);
  Value byteSize(TensorValue &tensor);
  Value byteSize(RankedTensorType type, ArrayRef<Value> dims);
  void flush();
  /// Fails when dispatches are recorded that no flow.submit ran.
  LogicalResult checkSubmitted(Operation *op);
  void allocateDynamicArena(Block &block);

  ModuleLowering &module;
  func::FuncOp source;
  vm::FuncOp target;
  OpBuilder b;
  Location loc;
  DenseMap<Value, Value> scalars;
  DenseMap<Value, TensorValue> tensors;
  DenseMap<Block *, Block *> blocks;
  Value device, allocator, executable;
  llvm::StringMap<Value> formatQueries;
  // Workgroup counts chosen among constants by the device's formats.
  DenseSet<Value> perDevice;
  std::array<Value, 2> dispatchLists;
  // Per block: the dispatches of the submission being built.
  SmallVector<PendingDispatch> pending;
  // The buffers the recorded dispatches write.
  DenseSet<Value> pendingBuffers;
  // What the dispatches recorded since the last barrier read and write: a
  // dispatch that conflicts with none of them may run beside them, so a
  // barrier is recorded only before one that does.
  SmallVector<Access> unordered;
  Value arena;
  int64_t transientBytes = 0;
  // Dynamically sized transients (strata-plan-transients' slots): their
  // offsets in the one allocation of the block's slots.
  DenseMap<Value, Value> dynamicOffsets;
  Value dynamicArena;
};

class ModuleLowering {
public:
  explicit ModuleLowering(ModuleOp module)
      : top(module), symbols(module), b(module.getContext()) {}

  LogicalResult run() {
    // The executable the kernels are in: the name of its binaries.
    for (auto binary : top.getOps<flow::ExecutableBinaryOp>()) {
      if (!executableName.empty() && executableName != binary.getName())
        return binary.emitOpError("names executable '")
               << binary.getName() << "', but the module's kernels are in '"
               << executableName << "' (one executable per module)";
      executableName = binary.getName().str();
    }
    std::string moduleName =
        top.getSymName() ? top.getSymName()->str() : "module";
    SmallVector<func::FuncOp> hosts = hostFunctions(top);
    for (func::FuncOp function : hosts)
      if (function.isExternal())
        return function.emitOpError(
            "is a declaration; a model's functions need bodies");
    b.setInsertionPointToEnd(top.getBody());
    vmModule = vm::ModuleOp::create(b, top.getLoc(), moduleName);
    vmModule.getBody().push_back(new Block);
    b.setInsertionPointToStart(&vmModule.getBody().front());
    // Signatures first: calls between host functions refer to them.
    for (func::FuncOp function : hosts) {
      SmallVector<Type> inputs, results;
      for (Type type : function.getArgumentTypes())
        inputs.push_back(vmType(type));
      for (Type type : function.getResultTypes())
        results.push_back(vmType(type));
      if (llvm::is_contained(inputs, Type()) ||
          llvm::is_contained(results, Type()))
        return function.emitOpError("has a type the VM cannot hold: ")
               << function.getFunctionType()
               << " (supported: ranked tensors, index, i1 to i64, f32, f64)";
      auto vmFunction = vm::FuncOp::create(
          b, function.getLoc(), function.getSymName(),
          b.getFunctionType(inputs, results), ArrayAttr(), ArrayAttr());
      SmallVector<Attribute> argTypes, resultTypes;
      for (Type type : function.getArgumentTypes())
        argTypes.push_back(b.getStringAttr(printType(type)));
      for (Type type : function.getResultTypes())
        resultTypes.push_back(b.getStringAttr(printType(type)));
      vmFunction->setAttr("strata.argument_types", b.getArrayAttr(argTypes));
      vmFunction->setAttr("strata.result_types", b.getArrayAttr(resultTypes));
      functions[function.getSymName()] = vmFunction;
      if (function.isPublic())
        exports.push_back(function.getSymName());
    }
    for (func::FuncOp function : hosts) {
      FunctionLowering lowering(*this, function,
                                functions[function.getSymName()]);
      if (failed(lowering.run()))
        return failure();
    }
    OpBuilder eb = OpBuilder::atBlockEnd(&vmModule.getBody().front());
    for (StringRef name : exports)
      vm::ExportOp::create(eb, top.getLoc(), name, StringAttr());
    // The executables go into the module the writer embeds them from.
    for (auto binary :
         llvm::make_early_inc_range(top.getOps<flow::ExecutableBinaryOp>())) {
      vm::ExecutableOp::create(eb, binary.getLoc(), binary.getNameAttr(),
                               binary.getFormatAttr(), binary.getData(),
                               binary.getMetadata());
      binary.erase();
    }
    for (func::FuncOp function : hosts)
      function.erase();
    return success();
  }

  static std::string printType(Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  }

  static Type vmType(Type type) {
    MLIRContext *context = type.getContext();
    if (isa<RankedTensorType>(type))
      return elementTypeCode(cast<RankedTensorType>(type).getElementType())
                 ? vm::RefType::get(context)
                 : Type();
    if (type.isIndex() || type.isSignlessInteger(64))
      return IntegerType::get(context, 64);
    if (type.isSignlessInteger(1) || type.isSignlessInteger(8) ||
        type.isSignlessInteger(16) || type.isSignlessInteger(32))
      return IntegerType::get(context, 32);
    if (type.isF32() || type.isF64())
      return type;
    return Type();
  }

  /// Declares `hal.<name>` on first use.
  vm::ImportOp import(StringRef name) {
    std::string symbol = ("hal." + name).str();
    auto it = imports.find(symbol);
    if (it != imports.end())
      return it->second;
    MLIRContext *context = top.getContext();
    Type r = vm::RefType::get(context), buf = vm::BufferType::get(context),
         list = vm::ListType::get(context), i = b.getI32Type(),
         I = b.getI64Type();
    // Names and signatures come from the table the runtime's hal module
    // registers its functions from.
    static const llvm::StringMap<StringRef> kSignatures = {
#define STRATA_HAL_FUNCTION(name, signature) {name, signature},
#include "schemas/hal_functions.def"
#undef STRATA_HAL_FUNCTION
    };
    // The letters of schemas/hal_functions.def: vm.buffer, vm.list (L: or
    // null), i32, i64; every other letter is a HAL object, !vm.ref.
    auto toType = [&](char c) -> Type {
      switch (c) {
      case 'b': return buf;
      case 'l': case 'L': return list;
      case 'i': return i;
      case 'I': return I;
      default: return r;
      }
    };
    auto [args, rets] = kSignatures.at(name).split('_');
    SmallVector<Type> inputs, results;
    for (char c : args)
      inputs.push_back(toType(c));
    for (char c : rets)
      results.push_back(toType(c));
    OpBuilder ib = OpBuilder::atBlockBegin(&vmModule.getBody().front());
    auto op = vm::ImportOp::create(ib, top.getLoc(), symbol,
                                   ib.getFunctionType(inputs, results));
    imports[symbol] = op;
    return op;
  }

  /// A vm.rodata of `value`, one per distinct value.
  StringRef rodata(Attribute value, StringRef prefix) {
    auto it = rodataByValue.find(value);
    if (it != rodataByValue.end())
      return it->second;
    std::string name = (prefix + "_" + Twine(rodataByValue.size())).str();
    OpBuilder rb = OpBuilder::atBlockBegin(&vmModule.getBody().front());
    auto op = vm::RodataOp::create(rb, top.getLoc(), name, value);
    return rodataByValue[value] = op.getSymName();
  }

  ModuleOp top;
  SymbolTable symbols;
  std::string executableName;
  OpBuilder b;
  vm::ModuleOp vmModule;
  llvm::StringMap<vm::FuncOp> functions;
  SmallVector<StringRef> exports;
  llvm::StringMap<vm::ImportOp> imports;
  DenseMap<Attribute, StringRef> rodataByValue;
  // Globals made for command buffers recorded once (emitReplayed).
  unsigned commandGlobals = 0;
};

FunctionLowering::FunctionLowering(ModuleLowering &module, func::FuncOp source,
                                   vm::FuncOp target)
    : module(module), source(source), target(target),
      b(source.getContext()), loc(source.getLoc()) {}

Value FunctionLowering::op1(StringRef name, ValueRange operands, Type type) {
  OperationState state(loc, ("vm." + name).str());
  state.addOperands(operands);
  state.addTypes(type);
  return b.create(state)->getResult(0);
}

Value FunctionLowering::i32(int64_t value) {
  return vm::ConstI32Op::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(value));
}

Value FunctionLowering::i64(int64_t value) {
  return vm::ConstI64Op::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(value));
}

ValueRange FunctionLowering::call(StringRef name, ValueRange operands) {
  vm::ImportOp import = module.import(name);
  return vm::CallImportOp::create(b, loc, import.getFunctionType().getResults(),
                                  import.getSymName(), operands)
      ->getResults();
}

Value FunctionLowering::call1(StringRef name, ValueRange operands) {
  ValueRange results = call(name, operands);
  return results.empty() ? Value() : results.front();
}

void FunctionLowering::call0(StringRef name, ValueRange operands) {
  call1(name, operands);
}

Value FunctionLowering::text(StringRef string) {
  StringRef symbol = module.rodata(b.getStringAttr(string), "text");
  return vm::ConstRefRodataOp::create(b, loc, vm::BufferType::get(b.getContext()),
                                      symbol);
}

Value FunctionLowering::nullList() {
  return vm::ConstRefZeroOp::create(b, loc, vm::ListType::get(b.getContext()));
}

/// A vm.list of the values (i32, i64 or refs).
Value FunctionLowering::listOf(ArrayRef<Value> values) {
  Value list = vm::ListAllocOp::create(b, loc, vm::ListType::get(b.getContext()),
                                       i32(values.size()));
  fillList(list, values);
  return list;
}

/// Dispatch list `which` (0: constants, 1: bindings), made once per function
/// right after the device and refilled with `values` for every dispatch:
/// hal.command_buffer.dispatch reads its lists during the call and keeps
/// nothing of them, so one list serves them all. A list made and freed per
/// dispatch cost ViT-tiny, 85 dispatches a call, about 4 % of its time
/// (malloc, free and the list's own setup).
Value FunctionLowering::dispatchList(unsigned which, ArrayRef<Value> values) {
  Value &list = dispatchLists[which];
  if (!list) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(device);
    list = vm::ListAllocOp::create(b, loc, vm::ListType::get(b.getContext()), i32(0));
  }
  fillList(list, values);
  return list;
}

/// Resizes `list` to the values and sets them (i32, i64 or refs).
void FunctionLowering::fillList(Value list, ArrayRef<Value> values) {
  vm::ListResizeOp::create(b, loc, list, i32(values.size()));
  for (auto [i, value] : llvm::enumerate(values)) {
    Value index = i32(i);
    Type type = value.getType();
    if (type.isInteger(32))
      vm::ListSetI32Op::create(b, loc, list, index, value);
    else if (type.isInteger(64))
      vm::ListSetI64Op::create(b, loc, list, index, value);
    else
      vm::ListSetRefOp::create(b, loc, list, index, value);
  }
}

Type FunctionLowering::vmType(Type type) {
  return ModuleLowering::vmType(type);
}

Value FunctionLowering::byteSize(TensorValue &tensor) {
  SmallVector<Value> dynamic;
  for (auto [d, dim] : llvm::enumerate(tensor.dims))
    if (tensor.type.isDynamicDim(d))
      dynamic.push_back(dim);
  return byteSize(tensor.type, dynamic);
}

/// The bytes of a tensor of `type` whose dynamic dimensions are `dims`.
/// Dynamic sizes come from inputs, so the host checks at run time that none
/// is negative and that the product does not wrap around 64 bits (a wrapped
/// size would allocate a buffer smaller than the kernels write).
Value FunctionLowering::byteSize(RankedTensorType type, ArrayRef<Value> dims) {
  int64_t staticBytes = elementBytes(type.getElementType());
  Type i64Type = b.getI64Type(), i32Type = b.getI32Type();
  Value size, wrong;
  // size * factor, noting in `wrong` when the unsigned product wraps.
  auto multiply = [&](Value factor) {
    Value product = op1("mul.i64", {size, factor}, i64Type);
    Value zero = op1("cmp.eq.i64", {factor, i64(0)}, i32Type);
    Value divisor = op1("select.i64", {zero, i64(1), factor}, i64Type);
    Value wrapped = op1(
        "and.i32",
        {op1("xor.i32", {zero, i32(1)}, i32Type),
         op1("cmp.ne.i64", {op1("div.i64.u", {product, divisor}, i64Type), size},
             i32Type)},
        i32Type);
    wrong = op1("or.i32", {wrong, wrapped}, i32Type);
    size = product;
  };
  auto dim = dims.begin();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      staticBytes *= type.getDimSize(d);
      continue;
    }
    Value negative = op1("cmp.lt.i64.s", {*dim, i64(0)}, i32Type);
    if (!size) {
      size = *dim;
      wrong = negative;
    } else {
      wrong = op1("or.i32", {wrong, negative}, i32Type);
      multiply(*dim);
    }
    ++dim;
  }
  if (!size)
    return i64(staticBytes);
  if (staticBytes != 1)
    multiply(i64(staticBytes));
  vm::CondFailOp::create(b, loc, wrong,
                         "a tensor's size is negative or overflows 64 bits "
                         "of bytes");
  return size;
}

Value FunctionLowering::viewOf(TensorValue &tensor, Location at) {
  if (tensor.view)
    return tensor.view;
  Location saved = loc;
  loc = at;
  Value shape = listOf(tensor.dims);
  tensor.view = call1("buffer_view.create",
                      {bufferOf(tensor), tensor.offset,
                       i32(elementTypeCode(tensor.type.getElementType())),
                       shape});
  loc = saved;
  return tensor.view;
}

TensorValue FunctionLowering::fromView(Value view, RankedTensorType type) {
  TensorValue tensor;
  tensor.type = type;
  tensor.view = view;
  tensor.buffer = call1("buffer_view.buffer", {view});
  tensor.offset = call1("buffer_view.byte_offset", {view});
  tensor.length = call1("buffer_view.byte_length", {view});
  for (int64_t d = 0; d < type.getRank(); ++d)
    tensor.dims.push_back(type.isDynamicDim(d)
                              ? call1("buffer_view.dim", {view, i32(d)})
                              : i64(type.getDimSize(d)));
  return tensor;
}

Value FunctionLowering::bufferOf(const TensorValue &tensor) {
  if (tensor.buffer)
    return tensor.buffer;
  // Made once per device and then shared by every call (in place where
  // host memory is as fast for the device as its own, else uploaded to
  // device-local memory).
  return constantBuffer(tensor.constant);
}

Value FunctionLowering::constantBuffer(StringAttr symbol) {
  Value bytes = vm::ConstRefRodataOp::create(
      b, loc, vm::BufferType::get(b.getContext()), symbol);
  return call1("device.constant", {device, bytes, i64(0), i64(-1)});
}

Value FunctionLowering::bindingBuffer(const PendingBinding &binding,
                                      DenseMap<Attribute, Value> &made) {
  if (binding.buffer)
    return binding.buffer;
  Value &buffer = made[binding.constant];
  if (!buffer)
    buffer = constantBuffer(binding.constant);
  return buffer;
}

void FunctionLowering::submitAndWait(StringRef import, ArrayRef<Value> operands) {
  Value semaphore = call1("semaphore.create", {device, i64(0)});
  Value signals = listOf({semaphore, i64(1)});
  SmallVector<Value> all(operands.begin(), operands.end());
  all.insert(all.begin() + 1, {nullList(), signals});
  call0(import, all);
  call1("semaphore.wait", {semaphore, i64(1), i64(-1)});
}

void FunctionLowering::flush() {
  if (pending.empty())
    return;
  if (replayable())
    emitReplayed();
  else
    emitRecorded();
  pending.clear();
  pendingBuffers.clear();
  unordered.clear();
}

bool FunctionLowering::fixedForDevice(Value value) const {
  return isa_and_nonnull<vm::ConstI32Op>(value.getDefiningOp()) ||
         perDevice.contains(value);
}

/// Whether every workgroup count and push constant of the submission is a
/// constant, or chosen among constants by the device's formats: then only
/// its buffers differ between calls of a context.
bool FunctionLowering::replayable() const {
  auto fixed = [&](Value value) { return fixedForDevice(value); };
  for (const PendingDispatch &dispatch : pending)
    if (!llvm::all_of(dispatch.count, fixed) ||
        !llvm::all_of(dispatch.constants, fixed))
      return false;
  return true;
}

void FunctionLowering::recordPending(
    Value commandBuffer,
    function_ref<std::array<Value, 3>(size_t, size_t)> bind) {
  call0("command_buffer.begin", {commandBuffer});
  for (auto [index, dispatch] : llvm::enumerate(pending)) {
    if (dispatch.barrierBefore)
      call0("command_buffer.barrier", {commandBuffer});
    SmallVector<Value> bindings;
    for (size_t i = 0; i < dispatch.bindings.size(); ++i)
      llvm::append_range(bindings, bind(index, i));
    auto [x, y, z] = dispatch.count;
    call0("command_buffer.dispatch",
          {commandBuffer, executable, i32(dispatch.ordinal), x, y, z,
           dispatch.constants.empty() ? nullList() : dispatchList(0, dispatch.constants),
           dispatchList(1, bindings)});
  }
  call0("command_buffer.end", {commandBuffer});
}

void FunctionLowering::emitRecorded() {
  // Submitted right after its end, with no waits, and nothing else runs
  // between its first dispatch and that submission (checkSubmitted): the
  // device may run it as it is recorded.
  Value commandBuffer = call1("command_buffer.create_streamed", {device});
  DenseMap<Attribute, Value> made;
  recordPending(commandBuffer, [&](size_t dispatch, size_t index) {
    const PendingBinding &binding = pending[dispatch].bindings[index];
    return std::array<Value, 3>{bindingBuffer(binding, made), binding.offset, binding.length};
  });
  submitAndWait("queue.execute", {device, listOf({commandBuffer})});
}

/// The submission recorded once, into an indirect command buffer that a
/// global of the module keeps, and submitted on every call with a binding
/// table of the call's buffers: a binding of a constant's buffer is
/// recorded as it is (made on the first call), any other buffer is a slot.
/// A binding whose range is a constant names its buffer's slot (the whole
/// buffer) at that range; one whose range is known only when the program
/// runs (an argument's view) is a slot of that range. Recording costs the
/// host as much as the kernels of a small model take (ViT-tiny at batch 1:
/// 85 dispatches, a fifth of a call); a call then builds one list.
void FunctionLowering::emitReplayed() {
  auto constant = [](Value value) {
    return isa_and_nonnull<vm::ConstI64Op>(value.getDefiningOp());
  };
  // Slots: the table's entries (buffer, offset, length; a whole buffer's
  // without either) and, per binding, its slot: a whole buffer's, bound at
  // the binding's range, or a range's, bound whole.
  SmallVector<std::array<Value, 3>> entries;
  DenseMap<Value, int64_t> wholeSlots;
  DenseMap<std::tuple<Value, Value, Value>, int64_t> rangeSlots;
  struct Bound {
    int64_t slot; // -1: a constant's buffer
    bool range;
  };
  SmallVector<SmallVector<Bound>> bound;
  for (const PendingDispatch &dispatch : pending) {
    SmallVector<Bound> &list = bound.emplace_back();
    for (const PendingBinding &binding : dispatch.bindings) {
      if (!binding.buffer) {
        list.push_back({-1, false});
        continue;
      }
      if (constant(binding.offset) && constant(binding.length)) {
        auto [it, added] = wholeSlots.try_emplace(binding.buffer, entries.size());
        if (added)
          entries.push_back({binding.buffer, Value(), Value()});
        list.push_back({it->second, false});
        continue;
      }
      auto key = std::make_tuple(binding.buffer, binding.offset, binding.length);
      auto [it, added] = rangeSlots.try_emplace(key, entries.size());
      if (added)
        entries.push_back({binding.buffer, binding.offset, binding.length});
      list.push_back({it->second, true});
    }
  }

  // The command buffer of this submission site, once recorded.
  std::string name =
      (source.getSymName() + "_commands_" + Twine(module.commandGlobals++)).str();
  Type refType = vm::RefType::get(b.getContext());
  {
    OpBuilder gb = OpBuilder::atBlockBegin(&module.vmModule.getBody().front());
    vm::GlobalRefOp::create(gb, loc, name, refType);
  }
  Value cached = vm::GlobalLoadRefOp::create(b, loc, refType, name);
  Value has = vm::CmpNzRefOp::create(b, loc, b.getI32Type(), cached);
  Block *current = b.getInsertionBlock();
  Region &region = *current->getParent();
  Block *record = new Block;
  Block *run = new Block;
  region.getBlocks().insertAfter(Region::iterator(current), record);
  region.getBlocks().insertAfter(Region::iterator(record), run);
  Value commands = run->addArgument(refType, loc);
  vm::CondBrOp::create(b, loc, has, ValueRange{cached}, ValueRange{}, run, record);

  b.setInsertionPointToStart(record);
  Value made = call1("command_buffer.create_indirect", {device});
  DenseMap<Attribute, Value> constants;
  recordPending(made, [&](size_t dispatch, size_t index) {
    const PendingBinding &binding = pending[dispatch].bindings[index];
    const Bound &slot = bound[dispatch][index];
    if (slot.slot < 0)
      return std::array<Value, 3>{bindingBuffer(binding, constants), binding.offset, binding.length};
    if (slot.range)
      return std::array<Value, 3>{i32(slot.slot), i64(0), i64(-1)};
    return std::array<Value, 3>{i32(slot.slot), binding.offset, binding.length};
  });
  vm::GlobalStoreRefOp::create(b, loc, made, name);
  vm::BrOp::create(b, loc, ValueRange{made}, run);

  b.setInsertionPointToStart(run);
  SmallVector<Value> table;
  for (auto [buffer, offset, length] : entries)
    table.append({buffer, offset ? offset : i64(0), length ? length : i64(-1)});
  submitAndWait("queue.execute_indirect", {device, commands, listOf(table)});
}

LogicalResult FunctionLowering::checkSubmitted(Operation *op) {
  if (pending.empty())
    return success();
  return op->emitOpError("comes after dispatches that no flow.submit runs "
                         "(strata-batch-submissions places them)");
}

/// At the dispatch marked flow.dynamic_arena: each slot's size (its largest
/// value, rounded up to 64 bytes) and offset, and the one allocation that
/// holds them all.
void FunctionLowering::allocateDynamicArena(Block &block) {
  SmallVector<SmallVector<OpResult>> slots;
  for (auto dispatch : block.getOps<flow::DispatchOp>()) {
    auto list = dispatch->getAttrOfType<DenseI64ArrayAttr>(kDynamicSlotsAttr);
    if (!list)
      continue;
    for (auto [result, slot] : llvm::zip(dispatch->getResults(), list.asArrayRef())) {
      if (slot < 0)
        continue;
      if (int64_t(slots.size()) <= slot)
        slots.resize(slot + 1);
      slots[slot].push_back(result);
    }
  }
  Type i64Type = b.getI64Type();
  Value total = i64(0);
  for (ArrayRef<OpResult> slot : slots) {
    Value size;
    for (OpResult value : slot) {
      SmallVector<Value> dims;
      for (Value dim : cast<flow::DispatchOp>(value.getOwner())
                           .getDynamicDimsOf(value.getResultNumber()))
        dims.push_back(scalars.lookup(dim));
      Value bytes = byteSize(cast<RankedTensorType>(value.getType()), dims);
      size = !size ? bytes
                   : op1("select.i64",
                         {op1("cmp.lt.i64.u", {size, bytes}, b.getI32Type()),
                          bytes, size},
                         i64Type);
    }
    Value aligned =
        op1("and.i64", {op1("add.i64", {size, i64(63)}, i64Type), i64(-64)},
            i64Type);
    for (OpResult value : slot)
      dynamicOffsets[value] = total;
    total = op1("add.i64", {total, aligned}, i64Type);
  }
  dynamicArena = call1("allocator.allocate",
                       {allocator, i32(kMemoryDeviceLocal),
                        i32(kUsageDispatchStorage | kUsageTransferSource |
                            kUsageTransferTarget),
                        total});
}

LogicalResult FunctionLowering::run() {
  Region &region = source.getBody();
  for (Block &block : region) {
    Block *vmBlock = new Block;
    target.getBody().push_back(vmBlock);
    for (BlockArgument arg : block.getArguments())
      vmBlock->addArgument(vmType(arg.getType()), arg.getLoc());
    blocks[&block] = vmBlock;
  }
  for (Block &block : region)
    for (BlockArgument arg : block.getArguments())
      if (!vmType(arg.getType()))
        return emitError(arg.getLoc(), "block argument of type ")
               << arg.getType() << " cannot live in a VM register";

  // Entry: the device, its allocator, the executable; checked arguments.
  Block &entry = region.front();
  b.setInsertionPointToStart(blocks[&entry]);
  device = call1("device.default", {});
  allocator = call1("device.allocator", {device});
  bool dispatches = false;
  source.walk([&](flow::DispatchOp) { dispatches = true; });
  if (dispatches && module.executableName.empty())
    return source.emitOpError("dispatches kernels, but the module has no "
                              "flow.executable_binary with their executable");
  if (dispatches)
    executable = call1(
        "executable.create",
        {device, vm::ConstRefExecutableOp::create(
                     b, loc, vm::RefType::get(b.getContext()),
                     b.getStringAttr(module.executableName))});
  for (BlockArgument arg : entry.getArguments()) {
    Value vmArg = blocks[&entry]->getArgument(arg.getArgNumber());
    auto tensor = dyn_cast<RankedTensorType>(arg.getType());
    if (!tensor) {
      scalars[arg] = vmArg;
      continue;
    }
    SmallVector<Value> shape;
    for (int64_t d = 0; d < tensor.getRank(); ++d)
      shape.push_back(i64(tensor.isDynamicDim(d) ? -1 : tensor.getDimSize(d)));
    std::string what = ("argument " + Twine(arg.getArgNumber()) + " of '" +
                        source.getSymName() + "'")
                           .str();
    call0("buffer_view.assert",
          {vmArg, text(what), i32(elementTypeCode(tensor.getElementType())),
           listOf(shape)});
    tensors[arg] = fromView(vmArg, tensor);
  }

  // Blocks in dominance order, so that values are lowered before their uses.
  if (region.hasOneBlock()) {
    if (failed(lowerBlock(entry)))
      return failure();
  } else {
    DominanceInfo dominance(source);
    for (auto *node : llvm::depth_first(dominance.getRootNode(&region)))
      if (failed(lowerBlock(*node->getBlock())))
        return failure();
  }
  target->setAttr("strata.transient_bytes", b.getI64IntegerAttr(transientBytes));
  return success();
}

LogicalResult FunctionLowering::lowerBlock(Block &block) {
  Block *vmBlock = blocks[&block];
  if (&block != &source.getBody().front()) {
    b.setInsertionPointToStart(vmBlock);
    for (BlockArgument arg : block.getArguments()) {
      Value vmArg = vmBlock->getArgument(arg.getArgNumber());
      if (auto tensor = dyn_cast<RankedTensorType>(arg.getType()))
        tensors[arg] = fromView(vmArg, tensor);
      else
        scalars[arg] = vmArg;
    }
  } else {
    b.setInsertionPointToEnd(vmBlock);
  }
  pending.clear();
  pendingBuffers.clear();
  unordered.clear();
  arena = Value();
  dynamicArena = Value();
  dynamicOffsets.clear();
  for (Operation &op : block) {
    loc = op.getLoc();
    if (failed(lowerOp(op)))
      return failure();
  }
  return success();
}

FailureOr<SmallVector<Value>> FunctionLowering::operandsOf(Operation *op,
                                                           ValueRange values) {
  SmallVector<Value> result;
  for (Value value : values) {
    if (isa<RankedTensorType>(value.getType())) {
      auto it = tensors.find(value);
      if (it == tensors.end())
        return op->emitOpError("uses a tensor the host does not hold");
      result.push_back(viewOf(it->second, op->getLoc()));
      continue;
    }
    auto it = scalars.find(value);
    if (it == scalars.end())
      return op->emitOpError("uses a value of type ")
             << value.getType() << " that the host cannot hold";
    result.push_back(it->second);
  }
  return result;
}

LogicalResult FunctionLowering::lowerOp(Operation &op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](flow::DispatchOp dispatch) { return lowerDispatch(dispatch); })
      .Case([&](flow::SubmitOp) {
        flush();
        return success();
      })
      .Case([&](tensor::ExtractOp extract) -> LogicalResult {
        auto it = tensors.find(extract.getTensor());
        if (it != tensors.end() && pendingBuffers.contains(it->second.buffer))
          return extract.emitOpError(
              "reads a tensor that a dispatch no flow.submit ran writes "
              "(strata-batch-submissions places them)");
        return lowerExtract(extract);
      })
      .Case([&](tensor::DimOp dim) -> LogicalResult {
        std::optional<int64_t> index = dim.getConstantIndex();
        auto it = tensors.find(dim.getSource());
        if (!index || it == tensors.end())
          return dim.emitOpError("needs a constant index into a host tensor");
        scalars[dim.getResult()] = it->second.dims[*index];
        return success();
      })
      .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(
          [&](auto reshape) -> LogicalResult {
            TensorValue source = tensors.lookup(reshape->getOperand(0));
            auto type = cast<RankedTensorType>(reshape.getResult().getType());
            TensorValue result = source;
            result.view = Value();
            result.type = type;
            result.dims.clear();
            if constexpr (std::is_same_v<decltype(reshape),
                                         tensor::CollapseShapeOp>) {
              for (auto [d, group] :
                   llvm::enumerate(reshape.getReassociationIndices())) {
                Value size;
                for (int64_t s : group)
                  size = size ? op1("mul.i64", {size, source.dims[s]},
                                    b.getI64Type())
                              : source.dims[s];
                result.dims.push_back(type.isDynamicDim(d)
                                          ? size
                                          : i64(type.getDimSize(d)));
              }
            } else if constexpr (std::is_same_v<decltype(reshape),
                                                tensor::ExpandShapeOp>) {
              for (OpFoldResult size : reshape.getMixedOutputShape()) {
                if (auto attr = dyn_cast<Attribute>(size))
                  result.dims.push_back(
                      i64(cast<IntegerAttr>(attr).getInt()));
                else
                  result.dims.push_back(scalars.lookup(cast<Value>(size)));
              }
            } else {
              // A cast to a more static type asserts the sizes it names.
              auto from = cast<RankedTensorType>(reshape->getOperand(0).getType());
              for (int64_t d = 0; d < type.getRank(); ++d) {
                if (type.isDynamicDim(d)) {
                  result.dims.push_back(source.dims[d]);
                  continue;
                }
                result.dims.push_back(i64(type.getDimSize(d)));
                if (from.isDynamicDim(d))
                  vm::CheckEqI64Op::create(
                      b, loc, source.dims[d], result.dims.back(),
                      describeCheck(reshape, "needs dimension " + Twine(d) +
                                                 " of " +
                                                 describeValue(reshape->getOperand(0)) +
                                                 " to be " +
                                                 Twine(type.getDimSize(d))));
              }
            }
            tensors[reshape.getResult()] = result;
            return success();
          })
      .Case([&](tensor::ReshapeOp reshape) -> LogicalResult {
        // A view with the dims a shape tensor lists (torch-mlir's view and
        // reshape), checked to hold as many elements as the source.
        auto shape =
            reshape.getShape().getDefiningOp<tensor::FromElementsOp>();
        auto it = tensors.find(reshape.getSource());
        if (!shape || it == tensors.end())
          return reshape.emitOpError(
              "needs its shape as a tensor.from_elements of host scalars");
        TensorValue source = it->second;
        TensorValue result = source;
        result.view = Value();
        result.type = cast<RankedTensorType>(reshape.getResult().getType());
        result.dims.clear();
        Value before = i64(1), after = i64(1);
        for (Value dim : source.dims)
          before = op1("mul.i64", {before, dim}, b.getI64Type());
        for (auto [d, element] : llvm::enumerate(shape.getElements())) {
          Value size = result.type.isDynamicDim(d)
                           ? scalars.lookup(element)
                           : i64(result.type.getDimSize(d));
          if (!size)
            return reshape.emitOpError("reads a shape the host does not hold");
          result.dims.push_back(size);
          after = op1("mul.i64", {after, size}, b.getI64Type());
        }
        vm::CheckEqI64Op::create(
            b, loc, before, after,
            describeCheck(reshape, "needs the new shape to hold as many "
                                   "elements as the tensor"));
        tensors[reshape.getResult()] = result;
        return success();
      })
      .Case([&](tensor::FromElementsOp elements) -> LogicalResult {
        if (llvm::all_of(elements->getUses(), [](OpOperand &use) {
              auto reshape = dyn_cast<tensor::ReshapeOp>(use.getOwner());
              return reshape && use.get() == reshape.getShape();
            }))
          return success(); // read by the reshapes above
        return lowerScalar(op);
      })
      .Case([&](arith::ConstantOp constant) -> LogicalResult {
        if (isa<RankedTensorType>(constant.getType()))
          return lowerConstantTensor(constant);
        return lowerScalar(op);
      })
      .Case([&](tensor::EmptyOp empty) -> LogicalResult {
        if (empty->use_empty())
          return success();
        return empty.emitOpError(
            "is used by the host program; an empty tensor has no defined "
            "contents to return or pass on");
      })
      .Case([&](func::CallOp call) -> LogicalResult {
        if (failed(checkSubmitted(call)))
          return failure();
        auto callee = module.functions.find(call.getCallee());
        if (callee == module.functions.end())
          return call.emitOpError("calls '")
                 << call.getCallee() << "', which is not a host function";
        FailureOr<SmallVector<Value>> operands =
            operandsOf(call, call.getOperands());
        if (failed(operands))
          return failure();
        auto vmCall = vm::CallOp::create(
            b, loc, callee->second.getFunctionType().getResults(),
            call.getCallee(), *operands);
        for (auto [result, value] :
             llvm::zip(call.getResults(), vmCall.getResults())) {
          if (auto tensor = dyn_cast<RankedTensorType>(result.getType()))
            tensors[result] = fromView(value, tensor);
          else
            scalars[result] = value;
        }
        return success();
      })
      .Case([&](func::ReturnOp ret) -> LogicalResult {
        if (failed(checkSubmitted(ret)))
          return failure();
        FailureOr<SmallVector<Value>> operands =
            operandsOf(ret, ret.getOperands());
        if (failed(operands))
          return failure();
        vm::ReturnOp::create(b, loc, *operands);
        return success();
      })
      .Case([&](cf::BranchOp br) -> LogicalResult {
        if (failed(checkSubmitted(br)))
          return failure();
        FailureOr<SmallVector<Value>> operands =
            operandsOf(br, br.getDestOperands());
        if (failed(operands))
          return failure();
        vm::BrOp::create(b, loc, *operands, blocks[br.getDest()]);
        return success();
      })
      .Case([&](cf::CondBranchOp br) -> LogicalResult {
        if (failed(checkSubmitted(br)))
          return failure();
        FailureOr<SmallVector<Value>> t =
            operandsOf(br, br.getTrueDestOperands());
        FailureOr<SmallVector<Value>> f =
            operandsOf(br, br.getFalseDestOperands());
        FailureOr<SmallVector<Value>> c =
            operandsOf(br, ValueRange{br.getCondition()});
        if (failed(t) || failed(f) || failed(c))
          return failure();
        vm::CondBrOp::create(b, loc, (*c)[0], *t, *f,
                             blocks[br.getTrueDest()],
                             blocks[br.getFalseDest()]);
        return success();
      })
      .Case([&](cf::AssertOp assertOp) -> LogicalResult {
        FailureOr<SmallVector<Value>> c =
            operandsOf(assertOp, ValueRange{assertOp.getArg()});
        if (failed(c))
          return failure();
        Value failed = op1("xor.i32", {(*c)[0], i32(1)}, b.getI32Type());
        vm::CondFailOp::create(b, loc, failed, assertOp.getMsg());
        return success();
      })
      .Case([&](flow::CheckEqualOp check) -> LogicalResult {
        FailureOr<SmallVector<Value>> sides = operandsOf(
            check, ValueRange{check.getLhs(), check.getRhs()});
        if (failed(sides))
          return failure();
        vm::CheckEqI64Op::create(b, loc, (*sides)[0], (*sides)[1],
                                 check.getMessage());
        return success();
      })
      .Case([&](flow::CheckLessEqualOp check) -> LogicalResult {
        FailureOr<SmallVector<Value>> sides = operandsOf(
            check, ValueRange{check.getLhs(), check.getRhs()});
        if (failed(sides))
          return failure();
        vm::CheckLeI64SOp::create(b, loc, (*sides)[0], (*sides)[1],
                                  check.getMessage());
        return success();
      })
      .Default([&](Operation *) { return lowerScalar(op); });
}

LogicalResult FunctionLowering::lowerConstantTensor(arith::ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  auto elements = dyn_cast<ElementsAttr>(op.getValue());
  if (!isa_and_nonnull<DenseElementsAttr, DenseResourceElementsAttr>(
          elements) ||
      !elementTypeCode(type.getElementType()))
    return op.emitOpError("is a tensor constant of a kind the compiler does "
                          "not embed (dense or dense_resource int or float "
                          "elements only)");
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(elements)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    int64_t expected =
        type.getNumElements() * elementBytes(type.getElementType());
    if (!blob || static_cast<int64_t>(blob->getData().size()) != expected)
      return op.emitOpError("has a dense_resource of ")
             << (blob ? int64_t(blob->getData().size()) : 0)
             << " bytes, expected " << expected << " for " << type;
  }
  if (op->use_empty())
    return success();
  // (A splat is stored expanded: the module writer repeats its element.)
  StringRef symbol = module.rodata(elements, "constant");
  TensorValue tensor;
  tensor.type = type;
  tensor.constant = b.getStringAttr(symbol);
  tensor.offset = i64(0);
  int64_t size = type.getNumElements() * elementBytes(type.getElementType());
  tensor.length = i64(size);
  for (int64_t d : type.getShape())
    tensor.dims.push_back(i64(d));
  tensors[op.getResult()] = tensor;
  return success();
}

LogicalResult FunctionLowering::lowerDispatch(flow::DispatchOp op) {
  auto kernel = module.symbols.lookup<func::FuncOp>(op.getKernel());
  if (!kernel)
    return op.emitOpError("dispatches '")
           << op.getKernel() << "', which is not in the module";
  FailureOr<SmallVector<KernelVariant>> found = kernelVariantsOf(kernel, op);
  if (failed(found))
    return failure();
  ArrayRef<KernelVariant> variants = *found;
  const KernelVariant &kernelInfo = variants.front();
  const codegen::DispatchInfo &info = kernelInfo.dispatch;

  SmallVector<TensorValue *> inputs;
  SmallVector<Value> constants;
  for (Value argument : op.getArguments()) {
    if (isa<RankedTensorType>(argument.getType())) {
      auto it = tensors.find(argument);
      if (it == tensors.end())
        return op.emitOpError("reads a tensor the host does not hold");
      inputs.push_back(&it->second);
      continue;
    }
    Value value = scalars.lookup(argument);
    if (!value)
      return op.emitOpError("reads a scalar the host does not hold");
    Type type = argument.getType();
    if (type.isSignlessInteger(64)) {
      // Two push constants, the low word first.
      constants.push_back(op1("trunc.i64.i32", {value}, b.getI32Type()));
      value = op1("trunc.i64.i32",
                  {op1("shr.i64.u", {value, i64(32)}, b.getI64Type())},
                  b.getI32Type());
    } else if (type.isIndex())
      value = op1("trunc.i64.i32", {value}, b.getI32Type());
    else if (type.isF32())
      value = op1("bitcast.f32.i32", {value}, b.getI32Type());
    constants.push_back(value);
  }
  for (TensorValue *input : inputs)
    for (auto [d, dim] : llvm::enumerate(input->dims))
      if (input->type.isDynamicDim(d))
        constants.push_back(op1("trunc.i64.i32", {dim}, b.getI32Type()));

  // Outputs, where strata-plan-transients put them.
  if (auto bytes = op->getAttrOfType<IntegerAttr>(kArenaBytesAttr)) {
    arena = call1("allocator.allocate",
                  {allocator, i32(kMemoryDeviceLocal),
                   i32(kUsageDispatchStorage | kUsageTransferSource |
                       kUsageTransferTarget),
                   i64(bytes.getInt())});
    transientBytes += bytes.getInt();
  }
  if (op->hasAttr(kDynamicArenaAttr))
    allocateDynamicArena(*op->getBlock());
  auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kTransientOffsetsAttr);
  auto slots = op->getAttrOfType<DenseI64ArrayAttr>(kDynamicSlotsAttr);
  for (DenseI64ArrayAttr list : {offsets, slots})
    if (list && list.size() != int64_t(op->getNumResults()))
      return op.emitOpError("has a transient plan of ")
             << list.size() << " results, expected " << op->getNumResults();
  if ((offsets || op->hasAttr(kScratchOffsetAttr)) && !arena)
    return op.emitOpError("places results in its block's arena before a "
                          "dispatch allocates it (")
           << kArenaBytesAttr << ")";
  SmallVector<TensorValue> outputs;
  auto dynamicDim = op.getResultDims().begin();
  for (Value result : op.getResults()) {
    TensorValue tensor;
    tensor.type = cast<RankedTensorType>(result.getType());
    for (int64_t d = 0; d < tensor.type.getRank(); ++d) {
      if (tensor.type.isDynamicDim(d)) {
        Value dim = scalars.lookup(*dynamicDim++);
        tensor.dims.push_back(dim);
        constants.push_back(op1("trunc.i64.i32", {dim}, b.getI32Type()));
      } else {
        tensor.dims.push_back(i64(tensor.type.getDimSize(d)));
      }
    }
    tensor.length = byteSize(tensor);
    unsigned number = cast<OpResult>(result).getResultNumber();
    auto dynamicPlanned = dynamicOffsets.find(result);
    if (offsets && offsets[number] >= 0) {
      tensor.buffer = arena;
      tensor.offset = i64(offsets[number]);
      tensor.firstByte = offsets[number];
      if (tensor.type.hasStaticShape())
        tensor.endByte = offsets[number] +
                         elementBytes(tensor.type.getElementType()) * tensor.type.getNumElements();
    } else if (slots && slots[number] >= 0) {
      if (dynamicPlanned == dynamicOffsets.end())
        return op.emitOpError("places result ")
               << number << " in a dynamic slot before a dispatch "
               << "allocates the slots (" << kDynamicArenaAttr << ")";
      tensor.buffer = dynamicArena;
      tensor.offset = dynamicPlanned->second;
    } else {
      // Device-local; mappable where that memory is host-visible (the CPU,
      // unified memory), read back through staging where it is not.
      tensor.buffer = call1(
          "allocator.allocate_preferring",
          {allocator, i32(kMemoryDeviceLocal),
           i32(kUsageDispatchStorage | kUsageTransferSource |
               kUsageTransferTarget),
           i32(kUsageMapping), tensor.length});
      tensor.offset = i64(0);
    }
    outputs.push_back(tensor);
  }

  SmallVector<PendingBinding> bindings;
  SmallVector<Access> accesses;
  for (TensorValue *input : inputs) {
    bindings.push_back({input->buffer, input->constant, input->offset, input->length});
    accesses.push_back({input->buffer ? input->buffer.getAsOpaquePointer()
                                      : input->constant.getAsOpaquePointer(),
                        input->firstByte, input->endByte, false});
  }
  for (TensorValue &output : outputs) {
    bindings.push_back({output.buffer, StringAttr(), output.offset, output.length});
    accesses.push_back({output.buffer.getAsOpaquePointer(), output.firstByte, output.endByte, true});
  }
  if (info.scratchBytes != 0) {
    auto scratch = op->getAttrOfType<IntegerAttr>(kScratchOffsetAttr);
    if (!scratch)
      return op.emitOpError("dispatches a kernel that takes ")
             << info.scratchBytes << " bytes of scratch without a "
             << kScratchOffsetAttr << " (strata-plan-transients places it)";
    bindings.push_back({arena, StringAttr(), i64(scratch.getInt()), i64(info.scratchBytes)});
    // Every variant's scratch, as far as ordering goes: the largest.
    int64_t scratchBytes = 0;
    for (const KernelVariant &variant : variants)
      scratchBytes = std::max<int64_t>(scratchBytes, variant.dispatch.scratchBytes);
    accesses.push_back({arena.getAsOpaquePointer(), scratch.getInt(), scratch.getInt() + scratchBytes, true});
  }

  // The workgroup count of the format the device runs: each variant's,
  // chosen by asking the device which formats it runs.
  std::array<Value, 3> count = workgroupCount(info, constants);
  for (const KernelVariant &variant : variants.drop_front()) {
    if (variant.dispatch.sameCount(info))
      continue;
    std::array<Value, 3> other = workgroupCount(variant.dispatch, constants);
    Value runs = runsFormat(variant.format);
    for (int d = 0; d < 3; ++d) {
      const bool fixed = fixedForDevice(other[d]) && fixedForDevice(count[d]);
      count[d] = op1("select.i32", {runs, other[d], count[d]}, b.getI32Type());
      // Constant counts chosen by the device's formats: the same on every
      // call of a context, whose device is one.
      if (fixed)
        perDevice.insert(count[d]);
    }
  }
  auto [x, y, z] = count;

  // A barrier only where this dispatch reads what one recorded since the
  // last barrier writes, or writes what one reads or writes (the arena's
  // bytes are reused once a transient is dead): independent dispatches, such
  // as the transforms of a Winograd convolution, may then run at once.
  bool barrier = llvm::any_of(accesses, [&](const Access &access) {
    return llvm::any_of(unordered, [&](const Access &recorded) { return access.conflicts(recorded); });
  });
  if (barrier)
    unordered.clear();
  unordered.append(accesses);
  pending.push_back({barrier && !pending.empty(), int64_t(kernelInfo.ordinal),
                     {x, y, z}, constants, bindings});
  for (auto [result, tensor] : llvm::zip(op.getResults(), outputs)) {
    tensors[result] = tensor;
    pendingBuffers.insert(tensor.buffer);
  }
  return success();
}

std::array<Value, 3>
FunctionLowering::workgroupCount(const codegen::DispatchInfo &info,
                                 ArrayRef<Value> constants) {
  if (info.workgroupCount)
    return {i32((*info.workgroupCount)[0]), i32((*info.workgroupCount)[1]),
            i32((*info.workgroupCount)[2])};
  // In i64: a product of sizes may not fit 32 bits, the count will.
  Type i64Type = b.getI64Type();
  Value work = i64(info.countFactor);
  for (uint32_t word : info.countWords) {
    if (word >= constants.size())
      return {i32(1), i32(1), i32(1)};
    work = op1("mul.i64",
               {work, op1("ext.i32.i64.u", {constants[word]}, i64Type)},
               i64Type);
  }
  int64_t size = std::max<uint32_t>(info.workgroupSize[0], 1);
  Value x = op1("div.i64.u",
                {op1("add.i64", {work, i64(size - 1)}, i64Type), i64(size)},
                i64Type);
  if (info.countMax != 0) {
    Value limit = i64(info.countMax);
    x = op1("select.i64",
            {op1("cmp.lt.i64.u", {limit, x}, b.getI32Type()), limit, x},
            i64Type);
  }
  return {op1("trunc.i64.i32", {x}, b.getI32Type()), i32(1), i32(1)};
}

Value FunctionLowering::runsFormat(StringRef format) {
  Value &runs = formatQueries[format];
  if (runs)
    return runs;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(device);
  // (found, value): the value is 1 when the device runs the format.
  ValueRange query = call("device.query_i64",
                          {device, text("hal.executable.format"), text(format)});
  runs = op1("cmp.ne.i64", {query[1], i64(0)}, b.getI32Type());
  return runs;
}

LogicalResult FunctionLowering::lowerExtract(tensor::ExtractOp op) {
  auto it = tensors.find(op.getTensor());
  if (it == tensors.end())
    return op.emitOpError("reads a tensor the host does not hold");
  TensorValue &tensor = it->second;
  Type element = tensor.type.getElementType();
  Value linear = i64(0);
  for (auto [d, index] : llvm::enumerate(op.getIndices())) {
    Value scaled = d == 0 ? linear
                          : op1("mul.i64", {linear, tensor.dims[d]},
                                b.getI64Type());
    linear = op1("add.i64", {scaled, scalars.lookup(index)}, b.getI64Type());
  }
  Value offset =
      op1("mul.i64", {linear, i64(elementBytes(element))}, b.getI64Type());
  Value mapped = call1("buffer.map", {bufferOf(tensor), tensor.offset, tensor.length});
  StringRef load;
  Type resultType;
  if (element.isF32())
    load = "buffer.load.f32", resultType = element;
  else if (element.isF64())
    load = "buffer.load.f64", resultType = element;
  else if (element.isInteger(64))
    load = "buffer.load.i64", resultType = element;
  else if (element.isInteger(32))
    load = "buffer.load.i32", resultType = element;
  else if (element.isInteger(16))
    load = "buffer.load.i16.s", resultType = b.getI32Type();
  else if (element.isInteger(8))
    load = "buffer.load.i8.s", resultType = b.getI32Type();
  else if (element.isInteger(1))
    load = "buffer.load.i8.u", resultType = b.getI32Type();
  else
    return op.emitOpError("reads an element of type ")
           << element << " on the host (supported: f32, f64, i1 to i64)";
  scalars[op.getResult()] = op1(load, {mapped, offset}, resultType);
  return success();
}

/// Scalar arith and math on the host.
LogicalResult FunctionLowering::lowerScalar(Operation &op) {
  auto unsupported = [&]() {
    return op.emitOpError("is not supported in the host program (outside a "
                          "dispatch); supported there: scalar arith on "
                          "index, i1-i64, f32, f64, tensor.dim, tensor.extract, "
                          "reshapes, calls and control flow");
  };
  for (Value operand : op.getOperands())
    if (!scalars.count(operand))
      return unsupported();
  if (op.getNumResults() != 1)
    return unsupported();
  Value result = op.getResult(0);
  Type type = vmType(result.getType());
  if (!type)
    return unsupported();
  SmallVector<Value> operands;
  for (Value operand : op.getOperands())
    operands.push_back(scalars.lookup(operand));
  auto suffix = [](Type t) -> std::string {
    if (t.isInteger(32)) return "i32";
    if (t.isInteger(64)) return "i64";
    if (t.isF32()) return "f32";
    return "f64";
  };
  Type operandType = operands.empty() ? type : operands[0].getType();
  std::string s = suffix(operandType);
  auto emit = [&](StringRef name) {
    scalars[result] = op1(name, operands, type);
    return success();
  };
  auto swapped = [&](StringRef name) {
    std::swap(operands[0], operands[1]);
    return emit(name);
  };
  auto negated = [&](StringRef name, bool swap) {
    if (swap)
      std::swap(operands[0], operands[1]);
    Value value = op1(name, operands, b.getI32Type());
    scalars[result] = op1("xor.i32", {value, i32(1)}, b.getI32Type());
    return success();
  };

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = constant.getValue();
    if (auto integer = dyn_cast<IntegerAttr>(value)) {
      int64_t v = integer.getType().isInteger(1) ? integer.getValue().getZExtValue()
                                                 : integer.getValue().getSExtValue();
      scalars[result] = type.isInteger(64) ? i64(v) : i32(v);
      return success();
    }
    if (auto real = dyn_cast<FloatAttr>(value)) {
      if (type.isF32())
        scalars[result] = vm::ConstF32Op::create(
            b, loc, b.getF32Type(), b.getF32FloatAttr(real.getValueAsDouble()));
      else
        scalars[result] = vm::ConstF64Op::create(
            b, loc, b.getF64Type(), b.getF64FloatAttr(real.getValueAsDouble()));
      return success();
    }
    return unsupported();
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case([&](arith::AddIOp) { return emit("add." + s); })
      .Case([&](arith::SubIOp) { return emit("sub." + s); })
      .Case([&](arith::MulIOp) { return emit("mul." + s); })
      .Case([&](arith::DivSIOp) { return emit("div." + s + ".s"); })
      .Case([&](arith::DivUIOp) { return emit("div." + s + ".u"); })
      .Case([&](arith::RemSIOp) { return emit("rem." + s + ".s"); })
      .Case([&](arith::RemUIOp) { return emit("rem." + s + ".u"); })
      .Case([&](arith::AndIOp) { return emit("and." + s); })
      .Case([&](arith::OrIOp) { return emit("or." + s); })
      .Case([&](arith::XOrIOp) { return emit("xor." + s); })
      .Case([&](arith::ShLIOp) { return emit("shl." + s); })
      .Case([&](arith::ShRSIOp) { return emit("shr." + s + ".s"); })
      .Case([&](arith::ShRUIOp) { return emit("shr." + s + ".u"); })
      .Case([&](arith::CeilDivSIOp) -> LogicalResult {
        // (a + b - 1) / b for the non-negative sizes shapes use.
        Value one = s == "i64" ? i64(1) : i32(1);
        Value bias = op1("sub." + s, {operands[1], one}, type);
        Value sum = op1("add." + s, {operands[0], bias}, type);
        scalars[result] = op1("div." + s + ".s", {sum, operands[1]}, type);
        return success();
      })
      .Case([&](arith::MaxSIOp) -> LogicalResult {
        Value lt = op1("cmp.lt." + s + ".s", operands, b.getI32Type());
        scalars[result] = op1("select." + s, {lt, operands[1], operands[0]}, type);
        return success();
      })
      .Case([&](arith::MinSIOp) -> LogicalResult {
        Value lt = op1("cmp.lt." + s + ".s", operands, b.getI32Type());
        scalars[result] = op1("select." + s, {lt, operands[0], operands[1]}, type);
        return success();
      })
      .Case([&](arith::AddFOp) { return emit("add." + s); })
      .Case([&](arith::SubFOp) { return emit("sub." + s); })
      .Case([&](arith::MulFOp) { return emit("mul." + s); })
      .Case([&](arith::DivFOp) { return emit("div." + s); })
      .Case([&](arith::RemFOp) { return emit("rem." + s); })
      .Case([&](arith::NegFOp) { return emit("neg." + s); })
      .Case([&](arith::MinimumFOp) { return emit("min." + s); })
      .Case([&](arith::MaximumFOp) { return emit("max." + s); })
      .Case([&](math::AbsFOp) { return emit("abs." + s); })
      .Case([&](math::SqrtOp) { return emit("sqrt." + s); })
      .Case([&](math::FloorOp) { return emit("floor." + s); })
      .Case([&](math::CeilOp) { return emit("ceil." + s); })
      .Case([&](arith::SelectOp) {
        return emit("select." + suffix(operands[1].getType()));
      })
      .Case([&](arith::CmpIOp cmp) -> LogicalResult {
        using P = arith::CmpIPredicate;
        switch (cmp.getPredicate()) {
        case P::eq: return emit("cmp.eq." + s);
        case P::ne: return emit("cmp.ne." + s);
        case P::slt: return emit("cmp.lt." + s + ".s");
        case P::sle: return emit("cmp.le." + s + ".s");
        case P::sgt: return swapped("cmp.lt." + s + ".s");
        case P::sge: return swapped("cmp.le." + s + ".s");
        case P::ult: return emit("cmp.lt." + s + ".u");
        case P::ule: return emit("cmp.le." + s + ".u");
        case P::ugt: return swapped("cmp.lt." + s + ".u");
        case P::uge: return swapped("cmp.le." + s + ".u");
        }
        return unsupported();
      })
      .Case([&](arith::CmpFOp cmp) -> LogicalResult {
        using P = arith::CmpFPredicate;
        switch (cmp.getPredicate()) {
        case P::OEQ: return emit("cmp.eq." + s);
        case P::UNE: return emit("cmp.ne." + s);
        case P::OLT: return emit("cmp.lt." + s);
        case P::OLE: return emit("cmp.le." + s);
        case P::OGT: return swapped("cmp.lt." + s);
        case P::OGE: return swapped("cmp.le." + s);
        case P::UGE: return negated("cmp.lt." + s, false);
        case P::UGT: return negated("cmp.le." + s, false);
        case P::ULE: return negated("cmp.lt." + s, true);
        case P::ULT: return negated("cmp.le." + s, true);
        case P::AlwaysTrue: scalars[result] = i32(1); return success();
        case P::AlwaysFalse: scalars[result] = i32(0); return success();
        default: return unsupported();
        }
      })
      .Case<arith::IndexCastOp, arith::ExtSIOp>([&](auto) -> LogicalResult {
        if (operandType == type) {
          scalars[result] = operands[0];
          return success();
        }
        return emit(type.isInteger(64) ? "ext.i32.i64.s" : "trunc.i64.i32");
      })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](auto) -> LogicalResult {
        if (operandType == type) {
          scalars[result] = operands[0];
          return success();
        }
        return emit(type.isInteger(64) ? "ext.i32.i64.u" : "trunc.i64.i32");
      })
      .Case([&](arith::TruncIOp) -> LogicalResult {
        if (operandType == type) {
          scalars[result] = operands[0];
          return success();
        }
        return emit("trunc.i64.i32");
      })
      .Case([&](arith::SIToFPOp) {
        return emit("cast.si" + s.substr(1) + "." + suffix(type));
      })
      .Case([&](arith::FPToSIOp) {
        return emit("cast." + s + ".si" + suffix(type).substr(1));
      })
      .Case([&](arith::ExtFOp) { return emit("ext.f32.f64"); })
      .Case([&](arith::TruncFOp) { return emit("trunc.f64.f32"); })
      .Default([&](Operation *) { return unsupported(); });
}

} // namespace

LogicalResult lowerHostToVM(ModuleOp module) {
  module.getContext()->getOrLoadDialect<vm::VMDialect>();
  ModuleLowering lowering(module);
  return lowering.run();
}

namespace {
struct HostToVMPass : PassWrapper<HostToVMPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HostToVMPass)
  StringRef getArgument() const final { return "strata-host-to-vm"; }
  StringRef getDescription() const final {
    return "Lowers the host functions to a vm.module driving the hal module";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<vm::VMDialect>();
  }
  void runOnOperation() override {
    if (failed(lowerHostToVM(getOperation())))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> createHostToVMPass() {
  return std::make_unique<HostToVMPass>();
}

void registerHostPasses() {
  PassRegistration<HostToVMPass>();
  registerPass(createPlanTransientsPass);
  registerPass(createBatchSubmissionsPass);
}

} // namespace strata::host
