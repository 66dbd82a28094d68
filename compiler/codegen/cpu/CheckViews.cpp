//===- CheckViews.cpp - Views of kernel buffers checked at run time -------===//
//
// The host program checks a slice's offsets and sizes before it dispatches
// the kernel that reads or writes it (flow.check_* on the VM side), and the
// kernel takes them as push constants. A module whose host program was
// altered can pass any values, and a kernel that trusted them read or wrote
// wherever they pointed (a fuzzed module: a slice at offset 2^30 of an
// 8-element buffer). So each view a kernel takes with dynamic offsets,
// sizes or strides, or of a source with a dynamic size, is checked where it
// is taken: a failing check returns its code before any access through the
// view (strata-cpu-lower-checks), and the runtime reports it with this
// message and the model's location of the slice.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/cpu/KernelConfig.h"
#include "compiler/codegen/cpu/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::cpu {

#define GEN_PASS_DEF_CPUCHECKVIEWSPASS
#include "compiler/codegen/cpu/Passes.h.inc"

namespace {

struct CPUCheckViewsPass : impl::CPUCheckViewsPassBase<CPUCheckViewsPass> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!isKernel(kernel))
      return;
    SmallVector<memref::SubViewOp> views;
    kernel.walk([&](memref::SubViewOp view) { views.push_back(view); });
    for (memref::SubViewOp view : views)
      check(view);
  }

  /// Asserts, before `view`, that in every dimension d of its source with a
  /// dynamic offset, size, stride or extent (a static one the verifier
  /// checked) it takes no element (size 0), or offset < dim and the last
  /// element, offset + (size - 1) * stride, is below dim: (size - 1) <=
  /// (dim - 1 - offset) / stride, unsigned, so that a negative value reads
  /// as huge and fails, and nothing overflows (a stride of 0 stays at the
  /// offset).
  static void check(memref::SubViewOp view) {
    OpBuilder b(view);
    Location loc = view.getLoc();
    auto value = [&](OpFoldResult folded) {
      return getValueOrCreateConstantIndexOp(b, loc, folded);
    };
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    using P = arith::CmpIPredicate;
    MemRefType source = view.getSource().getType();
    Value zero, one, ok;
    for (auto [d, offsetFold, sizeFold, strideFold] :
         llvm::enumerate(view.getMixedOffsets(), view.getMixedSizes(), view.getMixedStrides())) {
      if (isa<Attribute>(offsetFold) && isa<Attribute>(sizeFold) && isa<Attribute>(strideFold) &&
          !source.isDynamicDim(d))
        continue;
      if (!zero) {
        zero = constant(0);
        one = constant(1);
      }
      Value dim = memref::DimOp::create(b, loc, view.getSource(), d);
      Value offset = value(offsetFold), size = value(sizeFold), stride = value(strideFold);
      Value empty = arith::CmpIOp::create(b, loc, P::eq, size, zero);
      Value starts = arith::CmpIOp::create(b, loc, P::ult, offset, dim);
      Value room = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, dim, one), offset);
      Value steps = arith::DivUIOp::create(
          b, loc, room, arith::MaxUIOp::create(b, loc, stride, one));
      Value ends = arith::CmpIOp::create(
          b, loc, P::ule, arith::SubIOp::create(b, loc, size, one), steps);
      Value fits = arith::AndIOp::create(b, loc, starts, ends);
      Value inside = arith::OrIOp::create(b, loc, empty, fits);
      ok = ok ? arith::AndIOp::create(b, loc, ok, inside).getResult() : inside;
    }
    if (!ok)
      return;
    cf::AssertOp::create(
        b, loc, ok,
        "a slice of a kernel buffer reaches outside it (an offset, size or "
        "stride the host program passed does not fit the buffer's shape)");
  }
};

} // namespace
} // namespace strata::cpu
