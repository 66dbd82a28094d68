//===- Passes.h - Dispatch formation -----------------------------*- C++ -*-===//
//
// strata-form-dispatches: groups the linalg and tensor compute ops of every
// host function into dispatch regions, fusing elementwise consumers into the
// op that produces their input (matmul + bias + activation, the elementwise
// steps between the reductions of softmax and layer norm), and outlines each
// region into a kernel (a func.func marked flow.kernel) called by a
// flow.dispatch. Identical kernels are deduplicated. See docs/compiler.md.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_DISPATCH_TRANSFORMS_PASSES_H
#define STRATA_COMPILER_DISPATCH_TRANSFORMS_PASSES_H

#include <memory>

#include "mlir/Pass/Pass.h"

namespace strata::flow {

struct FormDispatchesOptions {
  /// Largest intermediate (in bytes) a kernel may keep internally when the
  /// consumer cannot compute in place over it; it lives on the kernel's
  /// stack, so larger ones end the region instead.
  int64_t maxInternalBytes = 32 * 1024;
  /// A pad whose only use is the input of a 2-D NHWC convolution or pooling
  /// joins that op's kernel, where the CPU code generator reads it through
  /// per-workgroup windows (strata-cpu-window-padded-inputs); the GPU code
  /// generators keep it a kernel of its own.
  bool padsIntoWindows = false;
};

std::unique_ptr<mlir::Pass>
createFormDispatchesPass(FormDispatchesOptions options = {});

/// strata-fuse-elementwise: elementwise producer/consumer fusion and linalg
/// constant folding, leaving reshapes in place so that contractions keep
/// their named form (see FuseElementwise.cpp).
std::unique_ptr<mlir::Pass> createFuseElementwisePass();

/// strata-channels-last: NCHW convolutions and poolings as NHWC ones, the
/// transposes of activations moved until they cancel (see ChannelsLast.cpp).
std::unique_ptr<mlir::Pass> createChannelsLastPass();

/// strata-const-eval: transposes and reshapes of constants computed at
/// compile time (see ConstEval.cpp).
std::unique_ptr<mlir::Pass> createConstEvalPass();

/// strata-affine-epilogues: an elementwise chain of adds, multiplies and
/// divisions that carries one input through constants (a batch norm) made
/// one multiply-add with two constant tensors (see AffineEpilogues.cpp).
std::unique_ptr<mlir::Pass> createAffineEpiloguesPass();

/// strata-winograd: 3x3 stride-1 convolutions with constant filters computed
/// as Winograd F(2x2, 3x3): input transforms, 16 matmuls with transformed
/// constant filters, output transforms (see Winograd.cpp).
std::unique_ptr<mlir::Pass> createWinogradPass();

/// strata-pack-weights: constant matmul weights stored in strips of the
/// columns a tile reads, the matmul a contraction over the expanded output
/// (see PackWeights.cpp); strata-const-eval then packs the constants.
/// `vectorBits`: the narrowest vector register of the CPU targets.
std::unique_ptr<mlir::Pass> createPackWeightsPass(int64_t vectorBits = 512);

/// strata-assert-shapes: states on the host, as flow.check_equal, every
/// relation between dynamic dimensions that a linalg op, a tensor.concat or a
/// tensor.expand_shape relies on (see AssertShapes.cpp).
std::unique_ptr<mlir::Pass> createAssertShapesPass();

/// Registers the passes for strata-opt (--strata-form-dispatches,
/// --strata-fuse-elementwise, --strata-assert-shapes,
/// --strata-const-eval, --strata-channels-last, --strata-pack-weights,
/// --strata-affine-epilogues).
void registerDispatchPasses();

} // namespace strata::flow

#endif // STRATA_COMPILER_DISPATCH_TRANSFORMS_PASSES_H
