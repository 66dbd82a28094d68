//===- FormDispatches.cpp - Group compute ops and outline kernels ---------===//
//
// Per block of a host function, in order:
//
// 1. Every compute op (linalg structured ops, tensor.pad / extract_slice /
//    insert_slice / concat / generate) starts a region, unless it is
//    elementwise (all loops parallel) and reads values of earlier regions,
//    in which case it joins the one whose value it reads was produced last
//    among those where
//      - no op outside the region uses a region value before this op (the
//        region moves down to this op's position; the values of the other
//        regions become arguments of its kernel),
//      - the value's dimension 0 is walked by the same loop as dimension 0 of
//        the op's output (so the CPU code generator can split the kernel by
//        rows), and
//      - the value either stays an output of the region anyway, or the op can
//        compute in place over it (same type, identity map: the op's init
//        becomes the value), or it is small enough to stay on the kernel's
//        stack.
//    With pads-into-windows (modules for CPUs only), a pad whose only use
//    is the input of a 2-D NHWC convolution or pooling is not a region of its
//    own: the convolution joins it (the CPU code generator reads the pad
//    through windows, strata-cpu-window-padded-inputs).
// 2. Each region becomes a kernel: values it reads from outside become
//    arguments (tensors: bindings; index, i32, i64, f32: push constants), except
//    scalar and splat constants, tensor.empty ops and linalg.fill ops of
//    empty tensors that only initialise outputs, which are cloned in. Values used after the region become results. The region is
//    replaced by a flow.dispatch, whose result dims the host computes from
//    the op's destinations.
// 3. Kernels are deduplicated by their printed bodies.
//
//===----------------------------------------------------------------------===//

#include "compiler/dispatch/Transforms/Passes.h"

#include "compiler/codegen/PaddedWindows.h"
#include "compiler/dispatch/IR/FlowOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace strata::flow {
namespace {

using Region_ = llvm::SmallVector<Operation *>;

bool isComputeOp(Operation *op) {
  return isa<linalg::LinalgOp, tensor::PadOp, tensor::ExtractSliceOp,
             tensor::InsertSliceOp, tensor::ConcatOp, tensor::GenerateOp>(op);
}

/// A linalg op whose loops are all parallel.
bool isElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && !isa<linalg::FillOp>(op) &&
         linalgOp.getNumLoops() == linalgOp.getNumParallelLoops() &&
         linalgOp.getNumDpsInits() >= 1;
}

/// Static size in bytes, or -1.
int64_t staticBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return -1;
  int64_t bits = tensor.getElementType().getIntOrFloatBitWidth();
  return tensor.getNumElements() * ((bits + 7) / 8);
}

/// `op`'s ancestor in `block`, or null.
Operation *ancestorIn(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

class DispatchFormer {
public:
  DispatchFormer(func::FuncOp function, ModuleOp module,
                 const FormDispatchesOptions &options,
                 llvm::StringMap<StringAttr> &kernelsByBody, int &counter)
      : function(function), module(module), options(options),
        kernelsByBody(kernelsByBody), counter(counter) {}

  LogicalResult run() {
    SmallVector<Block *> blocks;
    function.walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      if (failed(formInBlock(*block)))
        return failure();
    return success();
  }

private:
  bool inRegion(Operation *op, const Region_ &region) {
    return llvm::is_contained(region, op);
  }

  /// Whether `op` may join `region` (see the file comment).
  bool canJoin(Operation *op, Region_ &region) {
    Block *block = op->getBlock();
    for (Operation *member : region)
      for (Operation *user : member->getUsers()) {
        Operation *ancestor = ancestorIn(block, user);
        if (!ancestor || ancestor == op || inRegion(ancestor, region))
          continue;
        if (ancestor->isBeforeInBlock(op))
          return false;
      }
    auto linalgOp = cast<linalg::LinalgOp>(op);
    AffineMap outMap = linalgOp.getIndexingMapMatchingResult(
        cast<OpResult>(op->getResult(0)));
    if (outMap.getNumResults() == 0)
      return false;
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      Operation *producer = input->get().getDefiningOp();
      if (!producer || !inRegion(producer, region))
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(input);
      if (map.getNumResults() == 0 || map.getResult(0) != outMap.getResult(0))
        return false;
      Value value = input->get();
      bool usedOutside = llvm::any_of(value.getUsers(), [&](Operation *user) {
        Operation *ancestor = ancestorIn(block, user);
        return ancestor != op && !inRegion(ancestor, region);
      });
      if (usedOutside || canComputeInPlace(linalgOp, input))
        continue;
      int64_t bytes = staticBytes(value.getType());
      if (bytes < 0 || bytes > options.maxInternalBytes)
        return false;
    }
    return true;
  }

  /// The op reads `input` elementwise into a single output of the same type.
  static bool canComputeInPlace(linalg::LinalgOp op, OpOperand *input) {
    if (op.getNumDpsInits() != 1 || !input->get().hasOneUse())
      return false;
    OpOperand *init = op.getDpsInitOperand(0);
    return input->get().getType() == init->get().getType() &&
           op.getMatchingIndexingMap(input).isIdentity() &&
           op.getMatchingIndexingMap(init).isIdentity() &&
           !op.payloadUsesValueFromOperand(init);
  }

  LogicalResult formInBlock(Block &block) {
    SmallVector<std::unique_ptr<Region_>> regions;
    DenseMap<Operation *, Region_ *> regionOf;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (!isComputeOp(&op) || isInitFill(&op))
        continue;
      Region_ *target = nullptr;
      if (isElementwise(&op)) {
        // The regions producing its inputs, the latest producer first; the
        // others' values become arguments of the kernel it joins.
        SmallVector<std::pair<Operation *, Region_ *>> producers;
        for (OpOperand *input :
             cast<linalg::LinalgOp>(op).getDpsInputOperands()) {
          Operation *producer = input->get().getDefiningOp();
          auto it = producer ? regionOf.find(producer) : regionOf.end();
          if (it != regionOf.end())
            producers.emplace_back(producer, it->second);
        }
        llvm::sort(producers, [](auto &a, auto &b) {
          return b.first->isBeforeInBlock(a.first);
        });
        for (auto [producer, region] : producers)
          if (canJoin(&op, *region)) {
            target = region;
            break;
          }
      }
      if (!target && options.padsIntoWindows)
        target = padRegionOf(&op, regionOf);
      if (!target) {
        regions.push_back(std::make_unique<Region_>());
        target = regions.back().get();
      } else {
        // Compute in place over a value that dies here.
        auto linalgOp = cast<linalg::LinalgOp>(op);
        for (OpOperand *input : linalgOp.getDpsInputOperands()) {
          Operation *producer = input->get().getDefiningOp();
          if (producer && inRegion(producer, *target) &&
              canComputeInPlace(linalgOp, input)) {
            linalgOp.getDpsInitOperand(0)->set(input->get());
            break;
          }
        }
      }
      target->push_back(&op);
      regionOf[&op] = target;
    }

    for (auto &region : regions) {
      if (failed(outline(*region)))
        return failure();
    }
    return success();
  }

  /// The region of the pad that `op`, a 2-D NHWC convolution or pooling,
  /// reads as its input, when the pad is alone there, `op` is its only user
  /// and the padded tensor is small enough for the CPU's windows
  /// (codegen::kMaxWindowedPadBytes); null otherwise.
  static Region_ *padRegionOf(Operation *op,
                              const DenseMap<Operation *, Region_ *> &regionOf) {
    if (!isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp,
             linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcMinOp,
             linalg::PoolingNhwcSumOp>(op))
      return nullptr;
    auto pad = cast<linalg::LinalgOp>(op)
                   .getDpsInputOperand(0)
                   ->get()
                   .getDefiningOp<tensor::PadOp>();
    if (!pad || !pad->hasOneUse() || !pad.getConstantPaddingValue() ||
        !pad.getResultType().hasStaticShape() ||
        staticBytes(pad.getResultType()) > codegen::kMaxWindowedPadBytes)
      return nullptr;
    Region_ *region = regionOf.lookup(pad);
    return region && region->size() == 1 ? region : nullptr;
  }

  /// A fill of an empty tensor whose uses all initialise outputs of compute
  /// ops: each region that uses it gets a copy of it.
  static bool isInitFill(Operation *op) {
    auto fill = dyn_cast_or_null<linalg::FillOp>(op);
    if (!fill || fill->use_empty() ||
        !fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
      return false;
    return llvm::all_of(fill->getUses(), [](OpOperand &use) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
      return dps && isComputeOp(use.getOwner()) && dps.isDpsInit(&use);
    });
  }

  /// Constants other than dense weights, and empty tensors, are cloned into
  /// the kernel rather than passed to it.
  static bool isClonedIn(Operation *op) {
    if (!op)
      return false;
    if (isa<tensor::EmptyOp>(op) || isInitFill(op))
      return true;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (!isa<ElementsAttr>(constant.getValue()))
        return true;
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      return dense && dense.isSplat();
    }
    return false;
  }

  /// The host value of dimension `dim` of `value`, which a region op may
  /// produce, built at `b`'s insertion point.
  FailureOr<Value> hostDim(OpBuilder &b, Location loc, Value value,
                           int64_t dim, const Region_ &region) {
    Operation *producer = value.getDefiningOp();
    if (producer && (inRegion(producer, region) || isInitFill(producer))) {
      unsigned resultNumber = cast<OpResult>(value).getResultNumber();
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(producer))
        return hostDim(b, loc, dps.getDpsInitOperand(resultNumber)->get(),
                       dim, region);
      // Slices, reshapes, pads, concatenations: their sizes follow from
      // their operands' (a dimension of a region value is asked of its
      // producer in turn).
      if (isa<ReifyRankedShapedTypeOpInterface>(producer))
        return reifiedHostDim(b, loc, producer, resultNumber, dim, region);
      return producer->emitOpError(
          "has a result of dynamic size that the host cannot compute before "
          "the dispatch");
    }
    if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(producer))
      return empty.getDynamicSize(dim);
    return tensor::DimOp::create(b, loc, value, dim).getResult();
  }

  /// hostDim of a result of `producer`, which reifies its result shapes.
  FailureOr<Value> reifiedHostDim(OpBuilder &b, Location loc,
                                  Operation *producer, unsigned resultNumber,
                                  int64_t dim, const Region_ &region) {
    // What reification builds beyond the one size used must go again: it may
    // read region values, which outlining erases.
    struct Recorder : OpBuilder::Listener {
      void notifyOperationInserted(Operation *op,
                                   OpBuilder::InsertPoint) override {
        ops.push_back(op);
      }
      SmallVector<Operation *> ops;
    } recorder;
    OpBuilder::Listener *previous = b.getListener();
    b.setListener(&recorder);
    ReifiedRankedShapedTypeDims shapes;
    LogicalResult reified = reifyResultShapes(b, producer, shapes);
    b.setListener(previous);
    FailureOr<Value> size = failure();
    if (failed(reified)) {
      size = producer->emitOpError("has a result of dynamic size that the "
                                   "host cannot compute before the dispatch");
    } else if (auto attr =
                   dyn_cast<Attribute>(shapes[resultNumber][dim])) {
      size = arith::ConstantIndexOp::create(
                 b, loc, cast<IntegerAttr>(attr).getInt())
                 .getResult();
    } else {
      size = cast<Value>(shapes[resultNumber][dim]);
      // A dimension of a region value becomes its host value.
      for (Operation *op : recorder.ops) {
        auto dimOp = dyn_cast<tensor::DimOp>(op);
        if (!dimOp || dimOp->use_empty())
          continue;
        Operation *source = dimOp.getSource().getDefiningOp();
        std::optional<int64_t> index = dimOp.getConstantIndex();
        if (!source || !(inRegion(source, region) || isInitFill(source)))
          continue;
        FailureOr<Value> inner =
            index ? hostDim(b, loc, dimOp.getSource(), *index, region)
                  : FailureOr<Value>(dimOp->emitOpError(
                        "has a dynamic index that the host cannot compute"));
        if (failed(inner)) {
          size = failure();
          break;
        }
        if (*size == dimOp.getResult())
          size = *inner;
        dimOp.getResult().replaceAllUsesWith(*inner);
      }
    }
    for (Operation *op : llvm::reverse(recorder.ops))
      if (op->use_empty() && (failed(size) || op != size->getDefiningOp()))
        op->erase();
    return size;
  }

  LogicalResult outline(Region_ &region) {
    Operation *last = region.back();
    Location loc = last->getLoc();
    llvm::SmallPtrSet<Operation *, 8> members(region.begin(), region.end());
    auto isMember = [&](Operation *op) {
      while (op) {
        if (members.contains(op))
          return true;
        op = op->getParentOp();
      }
      return false;
    };

    // What the region reads from outside, and what it clones in.
    llvm::SetVector<Value> arguments;
    llvm::SetVector<Operation *> clones;
    std::function<void(Value)> capture = [&](Value value) {
      Operation *def = value.getDefiningOp();
      if (def && isMember(def))
        return;
      if (auto arg = dyn_cast<BlockArgument>(value))
        if (isMember(arg.getOwner()->getParentOp()))
          return;
      if (isClonedIn(def)) {
        if (clones.insert(def))
          for (Value operand : def->getOperands())
            capture(operand);
        return;
      }
      arguments.insert(value);
    };
    for (Operation *op : region)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          capture(operand);
      });
    for (Value argument : arguments) {
      Type type = argument.getType();
      if (!isa<RankedTensorType>(type) && !type.isIndex() &&
          !type.isSignlessInteger(32) && !type.isSignlessInteger(64) &&
          !type.isF32())
        return last->emitOpError("reads the host value of type ")
               << type
               << "; a kernel takes ranked tensors, index, i32, i64 and f32 "
                  "only";
    }

    // What the host uses afterwards.
    SmallVector<Value> results;
    for (Operation *op : region)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(),
                         [&](Operation *user) { return !isMember(user); }))
          results.push_back(result);
    if (results.empty()) {
      // Nothing uses the region: it is dead.
      for (Operation *op : llvm::reverse(region))
        op->erase();
      return success();
    }

    // The kernel.
    std::string name =
        (function.getSymName() + "_dispatch_" + Twine(counter++)).str();
    SmallVector<Type> argumentTypes, resultTypes;
    for (Value argument : arguments)
      argumentTypes.push_back(argument.getType());
    for (Value result : results)
      resultTypes.push_back(result.getType());
    OpBuilder moduleBuilder(module.getBodyRegion());
    moduleBuilder.setInsertionPoint(function);
    auto kernel = func::FuncOp::create(
        moduleBuilder, loc, name,
        moduleBuilder.getFunctionType(argumentTypes, resultTypes));
    kernel->setAttr(kKernelAttr, moduleBuilder.getUnitAttr());
    Block *entry = kernel.addEntryBlock();
    OpBuilder kb = OpBuilder::atBlockEnd(entry);
    IRMapping mapping;
    for (auto [argument, blockArg] :
         llvm::zip(arguments, entry->getArguments()))
      mapping.map(argument, blockArg);
    SmallVector<Operation *> cloneOrder(clones.begin(), clones.end());
    llvm::sort(cloneOrder, [](Operation *a, Operation *b) {
      return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b) : a < b;
    });
    for (Operation *op : cloneOrder)
      kb.clone(*op, mapping);
    for (Operation *op : region)
      kb.clone(*op, mapping);
    SmallVector<Value> returned;
    for (Value result : results)
      returned.push_back(mapping.lookup(result));
    func::ReturnOp::create(kb, loc, returned);

    // Deduplicate by body.
    std::string key;
    {
      llvm::raw_string_ostream os(key);
      os << kernel.getFunctionType();
      kernel.getBody().front().print(os);
    }
    auto [it, inserted] =
        kernelsByBody.try_emplace(key, kernel.getSymNameAttr());
    if (!inserted) {
      kernel.erase();
    }
    StringAttr kernelName = it->second;

    // The dispatch, after the region's last op.
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    SmallVector<Value> dims;
    for (Value result : results) {
      auto type = cast<RankedTensorType>(result.getType());
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d))
          continue;
        FailureOr<Value> dim = hostDim(b, loc, result, d, region);
        if (failed(dim))
          return failure();
        dims.push_back(*dim);
      }
    }
    auto dispatch = DispatchOp::create(
        b, loc, resultTypes, FlatSymbolRefAttr::get(kernelName),
        arguments.getArrayRef(), dims);
    for (auto [result, replacement] :
         llvm::zip(results, dispatch.getResults()))
      result.replaceUsesWithIf(replacement, [&](OpOperand &use) {
        return !isMember(use.getOwner());
      });
    for (Operation *op : llvm::reverse(region)) {
      op->dropAllUses();
      op->erase();
    }
    return success();
  }

  func::FuncOp function;
  ModuleOp module;
  const FormDispatchesOptions &options;
  llvm::StringMap<StringAttr> &kernelsByBody;
  int &counter;
};

struct FormDispatchesPass
    : PassWrapper<FormDispatchesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FormDispatchesPass)

  FormDispatchesPass(FormDispatchesOptions options = {}) : options(options) {
    padsIntoWindows = options.padsIntoWindows;
  }
  FormDispatchesPass(const FormDispatchesPass &other)
      : PassWrapper(other), options(other.options) {}
  StringRef getArgument() const override { return "strata-form-dispatches"; }
  StringRef getDescription() const override {
    return "Groups compute ops into dispatch regions and outlines kernels";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<FlowDialect, tensor::TensorDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<StringAttr> kernelsByBody;
    int counter = 0;
    SmallVector<func::FuncOp> hosts;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function->hasAttr(kKernelAttr) && !function.isExternal())
        hosts.push_back(function);
    options.padsIntoWindows = padsIntoWindows;
    for (func::FuncOp function : hosts) {
      DispatchFormer former(function, module, options, kernelsByBody, counter);
      if (failed(former.run()))
        return signalPassFailure();
    }
  }

  FormDispatchesOptions options;
  Option<bool> padsIntoWindows{
      *this, "pads-into-windows",
      llvm::cl::desc("Put a pad that only a 2-D NHWC convolution or pooling "
                     "reads into that op's kernel (CPU-only modules)"),
      llvm::cl::init(false)};
};

} // namespace

std::unique_ptr<Pass> createFormDispatchesPass(FormDispatchesOptions options) {
  return std::make_unique<FormDispatchesPass>(options);
}

void registerDispatchPasses() {
  PassRegistration<FormDispatchesPass>();
  PassRegistration<Pass>([] { return createFuseElementwisePass(); });
  PassRegistration<Pass>([] { return createAssertShapesPass(); });
  PassRegistration<Pass>([] { return createConstEvalPass(); });
  PassRegistration<Pass>([] { return createChannelsLastPass(); });
  PassRegistration<Pass>([] { return createPackWeightsPass(); });
  PassRegistration<Pass>([] { return createAffineEpiloguesPass(); });
  PassRegistration<Pass>([] { return createWinogradPass(); });
}

} // namespace strata::flow
