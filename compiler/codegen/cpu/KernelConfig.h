//===- KernelConfig.h - What the CPU codegen passes tell each other -*- C++
//-*-===//
//
// The CPU codegen passes communicate through attributes, so each pass can be
// run and tested alone and a user can override a choice in the input:
//
//   strata_cpu.tile_sizes      on a linalg op: {workgroup = array<i64: ...>,
//                              vector = array<i64: ...>}, one size per loop
//                              (0: not tiled at that level)
//   strata_cpu.workgroup_id    on the kernel argument holding the
//   strata_cpu.workgroup_count workgroup's linear id / the workgroup count
//   strata_cpu.distribution    on a distributed kernel: {tile = T, extent = N}
//                              or {tile = T, extent_arg = a, extent_dim = d}
//   strata_cpu.scratch         on the kernel argument that holds the
//                              temporaries too large for the stack
//   strata_cpu.scratch_bytes   on a kernel with one: that argument's size
//   strata_cpu.local_memory    on the kernel argument that holds each
//                              workgroup's own temporaries (the runtime's
//                              per-thread local memory, kernel_abi.h)
//   strata_cpu.entry_point     on an ABI wrapper: its metadata
//
// This header also holds the rule that decides whether a kernel's ops may be
// split across workgroups, shared by the pass that chooses the tiles and the
// pass that applies them.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_CPU_KERNELCONFIG_H
#define STRATA_COMPILER_CODEGEN_CPU_KERNELCONFIG_H

#include <optional>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace strata::cpu {

inline constexpr llvm::StringLiteral kTileSizesAttr = "strata_cpu.tile_sizes";
inline constexpr llvm::StringLiteral kWorkgroupIdAttr =
    "strata_cpu.workgroup_id";
inline constexpr llvm::StringLiteral kWorkgroupCountAttr =
    "strata_cpu.workgroup_count";
inline constexpr llvm::StringLiteral kDistributionAttr =
    "strata_cpu.distribution";
inline constexpr llvm::StringLiteral kEntryPointAttr = "strata_cpu.entry_point";
/// On a kernel: split along the last dimension of its buffers (columns)
/// rather than the first (rows), or (an integer c) along dimension rank - c,
/// the strips of a packed weight's columns; see splitDimension.
inline constexpr llvm::StringLiteral kSplitColumnsAttr =
    "strata_cpu.split_columns";
inline constexpr llvm::StringLiteral kScratchAttr = "strata_cpu.scratch";
inline constexpr llvm::StringLiteral kScratchBytesAttr =
    "strata_cpu.scratch_bytes";
inline constexpr llvm::StringLiteral kLocalMemoryAttr =
    "strata_cpu.local_memory";
/// On a kernel whose workgroups prefetch what workgroup id + 1 reads: its
/// workgroups should run in ascending order on a thread (the entry point's
/// `ascending_workgroups`, schemas/cpu_executable.fbs).
inline constexpr llvm::StringLiteral kAscendingWorkgroupsAttr =
    "strata_cpu.ascending_workgroups";
/// On a `cf.assert` in a kernel body: its index among the entry point's
/// checks (the kernel returns STRATA_CPU_KERNEL_CHECK_BASE + index when it
/// fails).
inline constexpr llvm::StringLiteral kCheckAttr = "strata_cpu.check";
/// The first return code of a failed check (drivers/cpu/kernel_abi.h).
inline constexpr int32_t kCheckReturnCodeBase = 16;

/// Columns of the cache blocks of a large matmul (TileAndVectorize's
/// blockForCaches), which SelectTileSizes keeps whole in a workgroup's tile.
inline constexpr int64_t kCacheBlockColumns = 256;
/// Register tiles' columns in a cache block, up to kCacheBlockColumns.
inline constexpr int64_t kCacheBlockStrips = 8;

/// The two tile levels of one linalg op, one size per loop.
struct TileSizes {
  llvm::SmallVector<int64_t> workgroup;
  llvm::SmallVector<int64_t> vector;
};

/// Kernels are the public functions with a body; private ones are helpers.
bool isKernel(mlir::func::FuncOp func);

/// The op's tile sizes, or std::nullopt when it carries none. Reports (on the
/// op) and fails when the attribute is malformed: not a dictionary of two
/// i64 arrays with one non-negative entry per loop, or a workgroup tile on
/// more than two loops (rows, or rows and columns: DistributeToWorkgroups).
mlir::FailureOr<std::optional<TileSizes>>
readTileSizes(mlir::linalg::LinalgOp op);
void writeTileSizes(mlir::linalg::LinalgOp op, const TileSizes &sizes);

/// The dimension of a buffer that kernels are split along: its first
/// dimension whose size is not statically 1 (a dynamic one counts as not 1),
/// or 0 when all are 1. Leading unit dimensions (batch 1, a 1 x N row) would
/// otherwise leave a single workgroup. With `columns` (c > 0), dimension
/// rank - c instead: the last (c = 1; a kernel marked kSplitColumnsAttr: a
/// matmul with few rows, whose weights each workgroup then reads a slice of,
/// once) or the strips of columns of a packed matmul's M x N1 x n0 output
/// (c = 2).
unsigned splitDimension(mlir::Type shaped, unsigned columns = 0);

/// How `kernel` is split along columns (kSplitColumnsAttr): 0 (by rows), 1
/// or 2, as for splitDimension.
unsigned splitsColumns(mlir::func::FuncOp kernel);

/// The loop a kernel is split along for `op`: the parallel loop that walks
/// the split dimension of its first output. std::nullopt when there is none.
std::optional<unsigned> defaultDistributedLoop(mlir::linalg::LinalgOp op,
                                               unsigned columns = 0);

/// A 2-D NHWC convolution with a packed filter (strata-pack-weights): a
/// linalg.generic over loops (n, oh, ow, f1, f0, kh, kw, c) reading
/// input(n, oh * sh + kh * dh, ow * sw + kw * dw, c) and filter(f1, kh, kw,
/// c, f0), accumulating into output(n, oh, ow, f1, f0).
struct PackedConvolution {
  int64_t strideW = 1, dilationW = 1;
};
std::optional<PackedConvolution>
matchPackedConvolution(mlir::linalg::LinalgOp op);

/// Whether `op` copies its one input to its output in another order: a
/// linalg.transpose, or a generic without reductions whose output map is
/// the identity, whose input map is another permutation and whose body
/// yields the input element.
bool isPermutationCopy(mlir::linalg::LinalgOp op);

/// Checks that splitting `kernel` along `distributedLoop(op)` of each of its
/// linalg ops, with the same tile for all, keeps every workgroup to the data
/// it writes itself: the body is one block of linalg ops, allocations (each
/// workgroup gets its own temporaries) and ops without memory effects, there
/// is no scratch binding (one for the whole dispatch), and every buffer
/// written by one of the ops is accessed
/// directly (not through a view) in its split dimension by the distributed
/// loop of each op that touches it. On failure, `emitErrors` says whether to report
/// why on the offending op. The split dimension is the kernel's
/// (splitsColumns), or the one `splitColumns` gives as for splitDimension.
mlir::LogicalResult checkDistributable(
    mlir::func::FuncOp kernel,
    llvm::function_ref<std::optional<unsigned>(mlir::linalg::LinalgOp)>
        distributedLoop,
    bool emitErrors, std::optional<unsigned> splitColumns = std::nullopt);

/// Lanes of one `vectorBits`-bit vector register for `type`'s elements (an
/// index is a 64-bit integer).
int64_t vectorLanes(mlir::Type type, int64_t vectorBits);

/// A box of a buffer: static offsets and sizes, one per dimension.
struct StaticBox {
  llvm::SmallVector<int64_t> offsets, sizes;
};

/// The box of the source that `view` covers, when its offsets and sizes are
/// static and its strides 1.
std::optional<StaticBox> staticBox(mlir::memref::SubViewOp view);

/// Whether two boxes of one buffer share no element.
bool disjoint(const StaticBox &a, const StaticBox &b);

/// The buffer a memref value views: walks view-like ops up to a block
/// argument or an allocation.
mlir::Value getBufferRoot(mlir::Value memref);

/// Appends a `memref<bytes x i8>` argument marked `marker` to `kernel` and
/// replaces each of `allocations` (memref.alloc or memref.alloca ops of
/// static shape, their deallocations erased) by a memref.view of it at the
/// matching offset of `offsets`: temporaries the kernel gets from outside
/// (the scratch binding, the runtime's local memory).
mlir::LogicalResult moveIntoArgument(mlir::func::FuncOp kernel,
                                     llvm::ArrayRef<mlir::Operation *> allocations,
                                     llvm::ArrayRef<int64_t> offsets, int64_t bytes,
                                     llvm::StringRef marker);

/// Padded inputs read in place (PaddedWindows.cpp). A depthwise convolution
/// does 9 FMAs per input element it reads, a pooling 9 compares or adds:
/// copying its rows into a window (strata-cpu-materialize-padded-windows)
/// cost more than the op, so it reads the input itself, through the
/// placeholder, and each of its vector reads is guarded after vectorization
/// (guardPaddedReads). Only an op whose every tile will be vectorized: with
/// `peeled` tiles (TileAndVectorize's `peel`), or tile sizes that divide its
/// extents; a partial tile left scalar would read the placeholder itself.
bool readsPaddedInputInPlace(mlir::linalg::LinalgOp reader,
                             llvm::ArrayRef<int64_t> low,
                             llvm::ArrayRef<int64_t> paddedShape,
                             mlir::MemRefType input, bool peeled);

/// Rewrites each vector.transfer_read of a padded input's placeholder in
/// `func` (all its uses must be such reads, with subviews folded into their
/// indices) into a read of the input when the box it reads lies inside it,
/// and otherwise one row of the innermost dimension at a time, each the
/// input's or the padding value: the padding is never materialized. Fails,
/// reporting on the placeholder, on any other use.
mlir::LogicalResult guardPaddedReads(mlir::RewriterBase &rewriter,
                                     mlir::func::FuncOp func);

} // namespace strata::cpu

#endif // STRATA_COMPILER_CODEGEN_CPU_KERNELCONFIG_H
