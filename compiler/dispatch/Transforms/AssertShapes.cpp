//===- AssertShapes.cpp - Host checks of the shape relations ops rely on --===//
//
// strata-assert-shapes: a linalg op on dynamic shapes assumes that every
// operand dimension walked by one loop has the same size: both operands of an
// elementwise add, a matmul's K in its two inputs, an output and the inputs it
// is computed from. A kernel compiled from it trusts that and would read or
// write past a binding when a caller passes an 8-element tensor and a
// 1-element one. This pass states each such relation as a
// `flow.check_equal` on the host, before the op, so that a wrong call fails
// before any kernel runs, with the function, the op, the operands and (at run
// time) both sizes named:
//
//   INVALID_ARGUMENT: 'add': linalg.generic at add.mlir:5:8 needs dimension 0
//   of argument 0 and dimension 0 of argument 1 to be equal; they are 8 and 1
//
// The same for the operands of a tensor.concat (every dimension but the
// concatenated one), for a tensor.expand_shape whose output sizes are
// values (their product must be the source dimension), and for slices
// (tensor.extract_slice, insert_slice) whose offsets, sizes or strides are
// values: `flow.check_less_equal` keeps each inside the tensor it slices. Relations between
// static sizes are already checked by the ops' verifiers; a check whose two
// sides are the same value (an output created with the size of an input)
// folds away. Dimensions of intermediate values are expressed through the
// values they are computed from, so the checks read only host scalars.
//
//===----------------------------------------------------------------------===//

#include "compiler/dispatch/IR/FlowOps.h"
#include "compiler/dispatch/Transforms/Passes.h"
#include "compiler/support/SourceLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace strata::flow {
namespace {

/// One side of a relation: dimension `dim` of `value`.
struct DimRef {
  Value value;
  int64_t dim;
  bool isStatic() const {
    return !cast<RankedTensorType>(value.getType()).isDynamicDim(dim);
  }
};

class ShapeAsserter {
public:
  explicit ShapeAsserter(func::FuncOp function) : function(function) {}

  void visit(Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (linalgOp.hasPureTensorSemantics())
        assertLoops(linalgOp);
    } else if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
      assertConcat(concat);
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      assertExpand(expand);
    } else if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
      assertSlice(extract, extract.getSource());
    } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      assertSlice(insert, insert.getDest());
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
      if (auto body = op->getParentOfType<linalg::LinalgOp>())
        assertIndices(extract, body);
    }
  }

  /// A tensor.extract in the body of a linalg op reads at indices computed
  /// per element (an embedding or gather look-up reads them from an input),
  /// so each index is checked against its dimension right there: a
  /// `cf.assert`, which the kernel keeps as a check that returns before the
  /// read (a look-up on the host is bounds-checked by the VM already).
  void assertIndices(tensor::ExtractOp extract, linalg::LinalgOp body) {
    auto type = extract.getTensor().getType();
    std::string of = describe(extract.getTensor());
    for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
      APInt constant;
      if (matchPattern(index, m_ConstantInt(&constant)) &&
          !type.isDynamicDim(d) && constant.ult(type.getDimSize(d)))
        continue;
      // The size outside the op, the comparison at the read.
      OpBuilder outside(body);
      Value dim = dimOf(outside, body->getLoc(),
                        {extract.getTensor(), static_cast<int64_t>(d)});
      OpBuilder b(extract);
      Value inBounds = arith::CmpIOp::create(
          b, extract.getLoc(), arith::CmpIPredicate::ult, index, dim);
      cf::AssertOp::create(
          b, extract.getLoc(), inBounds,
          llvm::formatv("{0}: tensor.extract reads an index out of range of "
                        "dimension {1} of {2}",
                        prefix(), d, of)
              .str());
    }
  }

private:
  /// Every operand dimension indexed by exactly one loop has the loop's size.
  void assertLoops(linalg::LinalgOp op) {
    SmallVector<SmallVector<DimRef>> byLoop(op.getNumLoops());
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [d, expr] : llvm::enumerate(map.getResults()))
        if (auto loop = dyn_cast<AffineDimExpr>(expr))
          byLoop[loop.getPosition()].push_back(
              {operand.get(), static_cast<int64_t>(d)});
    }
    for (ArrayRef<DimRef> refs : byLoop)
      assertAllEqual(op, refs);
  }

  void assertConcat(tensor::ConcatOp op) {
    int64_t rank = op.getResultType().getRank();
    for (int64_t d = 0; d < rank; ++d) {
      if (d == static_cast<int64_t>(op.getDim()))
        continue;
      SmallVector<DimRef> refs;
      for (Value input : op.getInputs())
        refs.push_back({input, d});
      assertAllEqual(op, refs);
    }
  }

  /// The output sizes of each group multiply to the source dimension.
  void assertExpand(tensor::ExpandShapeOp op) {
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    for (auto [d, group] : llvm::enumerate(op.getReassociationIndices())) {
      if (llvm::all_of(group, [&](int64_t s) {
            return isa<Attribute>(sizes[s]);
          }))
        continue; // static: the verifier checked it
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value product;
      for (int64_t s : group) {
        Value size = getValueOrCreateConstantIndexOp(b, loc, sizes[s]);
        product = product ? arith::MulIOp::create(b, loc, product, size)
                          : size;
      }
      std::string message = llvm::formatv(
          "{0}: {1} needs the sizes of result dimensions {2} to multiply "
          "to dimension {3} of {4}",
          prefix(), where(op), describeGroup(group), d,
          describe(op.getSrc()));
      CheckEqualOp::create(b, loc, product, dimOf(b, loc, {op.getSrc(), int64_t(d)}),
                           message);
    }
  }

  /// A slice with offsets, sizes or strides given as values lies inside the
  /// tensor it is taken from or inserted into: in each such dimension
  /// 0 <= offset <= size of the dimension, the slice's size (and stride) at
  /// most that size, so that the sums below cannot wrap, and the last index
  /// plus one, offset + (size - 1) * stride + 1, at most that size.
  void assertSlice(OffsetSizeAndStrideOpInterface op, Value tensor) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto type = cast<RankedTensorType>(tensor.getType());
    std::string of = describe(tensor);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      OpFoldResult offset = op.getMixedOffsets()[d];
      OpFoldResult size = op.getMixedSizes()[d];
      OpFoldResult stride = op.getMixedStrides()[d];
      if (isa<Attribute>(offset) && isa<Attribute>(size) &&
          isa<Attribute>(stride) && !type.isDynamicDim(d))
        continue; // static: the verifier checked it
      Value dim = dimOf(b, loc, {tensor, d});
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value offsetValue = getValueOrCreateConstantIndexOp(b, loc, offset);
      Value sizeValue = getValueOrCreateConstantIndexOp(b, loc, size);
      Value strideValue = getValueOrCreateConstantIndexOp(b, loc, stride);
      auto check = [&](Value lhs, Value rhs, const std::string &what) {
        CheckLessEqualOp::create(
            b, loc, lhs, rhs,
            llvm::formatv("{0}: {1} needs {2}", prefix(), where(op), what)
                .str());
      };
      check(zero, offsetValue,
            llvm::formatv("the offset in dimension {0} to be at least 0", d));
      check(offsetValue, dim,
            llvm::formatv("the offset in dimension {0} to be at most "
                          "dimension {0} of {1}",
                          d, of));
      check(sizeValue, dim,
            llvm::formatv("the size in dimension {0} to be at most "
                          "dimension {0} of {1}",
                          d, of));
      check(one, strideValue,
            llvm::formatv("the stride in dimension {0} to be at least 1", d));
      check(strideValue, arith::MaxSIOp::create(b, loc, dim, one),
            llvm::formatv("the stride in dimension {0} to be at most "
                          "dimension {0} of {1}",
                          d, of));
      Value last = arith::MulIOp::create(
          b, loc, arith::SubIOp::create(b, loc, sizeValue, one), strideValue);
      Value end = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, offsetValue, last), one);
      check(end, dim,
            llvm::formatv("the slice in dimension {0} (offset + (size - 1) "
                          "* stride + 1) to end within dimension {0} of {1}",
                          d, of));
    }
  }

  void assertAllEqual(Operation *op, ArrayRef<DimRef> refs) {
    if (refs.size() < 2)
      return;
    // Compare against a static size where there is one.
    const DimRef *reference = llvm::find_if(refs, [](const DimRef &ref) {
      return ref.isStatic();
    });
    if (reference == refs.end())
      reference = &refs.front();
    OpBuilder b(op);
    Location loc = op->getLoc();
    for (const DimRef &other : refs) {
      if (&other == reference || (other.isStatic() && reference->isStatic()))
        continue;
      if (other.value == reference->value && other.dim == reference->dim)
        continue;
      std::string message = llvm::formatv(
          "{0}: {1} needs dimension {2} of {3} and dimension {4} of {5} to "
          "be equal",
          prefix(), where(op), reference->dim, describe(reference->value),
          other.dim, describe(other.value));
      CheckEqualOp::create(b, loc, dimOf(b, loc, *reference),
                           dimOf(b, loc, other), message);
    }
  }

  Value dimOf(OpBuilder &b, Location loc, DimRef ref) {
    auto type = cast<RankedTensorType>(ref.value.getType());
    if (!type.isDynamicDim(ref.dim))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(ref.dim));
    return tensor::DimOp::create(b, loc, ref.value, ref.dim);
  }

  std::string prefix() const {
    return ("'" + function.getSymName() + "'").str();
  }

  static std::string where(Operation *op) { return opWithLocation(op); }
  static std::string describe(Value value) { return describeValue(value); }

  static std::string describeGroup(ArrayRef<int64_t> group) {
    std::string text;
    for (int64_t d : group)
      text += (text.empty() ? "" : ", ") + std::to_string(d);
    return text;
  }

  mutable func::FuncOp function;
};

struct AssertShapesPass : PassWrapper<AssertShapesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AssertShapesPass)

  StringRef getArgument() const override { return "strata-assert-shapes"; }
  StringRef getDescription() const override {
    return "Checks on the host the dimension relations that ops rely on";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, cf::ControlFlowDialect,
                    tensor::TensorDialect, FlowDialect>();
  }

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function->hasAttr(kKernelAttr) || function.isExternal())
        continue;
      ShapeAsserter asserter(function);
      SmallVector<Operation *> ops;
      function.walk([&](Operation *op) { ops.push_back(op); });
      for (Operation *op : ops)
        asserter.visit(op);
    }
    // Dimensions of intermediates in terms of the values they come from;
    // checks of a value against itself fold away.
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    CheckEqualOp::getCanonicalizationPatterns(patterns, context);
    CheckLessEqualOp::getCanonicalizationPatterns(patterns, context);
    arith::AddIOp::getCanonicalizationPatterns(patterns, context);
    arith::SubIOp::getCanonicalizationPatterns(patterns, context);
    arith::MulIOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));
    if (failed(applyPatternsGreedily(getOperation(), frozen)))
      return signalPassFailure();
    // The same dimension read twice is one value, so its checks fold.
    IRRewriter rewriter(context);
    DominanceInfo dominance;
    eliminateCommonSubExpressions(rewriter, dominance, getOperation());
    if (failed(applyPatternsGreedily(getOperation(), frozen)))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createAssertShapesPass() {
  return std::make_unique<AssertShapesPass>();
}

} // namespace strata::flow
