//===- Passes.td - CPU code generation passes -------------*- tablegen -*-===//
//
// The passes that take dispatch kernels (func.func on memrefs or tensors)
// down to LLVM dialect code with the kernel ABI of drivers/cpu/kernel_abi.h.
// buildCPUCodegenPipeline (Pipeline.h) lists them in order; docs/codegen-cpu.md
// describes the conventions they implement.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_CPU_PASSES_TD
#define STRATA_COMPILER_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def CPUVerifyKernelsPass : Pass<"strata-cpu-verify-kernels", "::mlir::ModuleOp"> {
  let summary = "Rejects, with the op's location, what CPU code generation "
                "cannot compile";
  let description = [{
    Checks the kernel contract before any lowering, so that an unsupported
    construct is reported where the user wrote it rather than as a failed
    legalization deep in the pipeline:

    - the module holds `func.func` ops (public ones are kernels, private ones
      helpers) and immutable `memref.global` constants only;
    - a kernel returns nothing (or tensors, before bufferization) and takes
      ranked memrefs with the identity layout (or ranked tensors), and
      `i32`, `i64`, `f32` or `index` scalars (push constants);
    - bodies use the arith, math, memref, scf, cf, linalg (structured ops),
      affine, vector, tensor, bufferization, ub and func dialects only;
    - no heap allocation (`memref.alloc` after stack promotion, `realloc`),
      no indirect calls, and calls only to functions of the module or to
      declarations of functions the runtime provides (RuntimeImports: `expf`,
      `memcpy`, ...).
  }];
}

def CPUComputeInDestinationsPass : Pass<"strata-cpu-compute-in-destinations",
                                        "::mlir::ModuleOp"> {
  let summary = "Rewrites what would bufferize into a temporary so that "
                "kernels compute in their bindings";
  let description = [{
    Two constructs of real exports would make one-shot bufferization build a
    whole result in a temporary and copy it out (a heap allocation when it is
    larger than the stack limit, which a CPU kernel cannot make):

    - `tensor.pad` allocates its padded result. It becomes a `linalg.fill` of
      a `tensor.empty` with the padding value plus a `tensor.insert_slice` of
      the source, so the fill and the copy write the output binding once
      empty-tensor elimination has made it the destination. Likewise a
      `tensor.concat` (ViT's class token before the patches) becomes one
      `tensor.insert_slice` of each operand into a `tensor.empty`.
    - An op whose init is a tensor argument of the kernel (TOSA's convolution
      starting from the broadcast bias): arguments are read-only bindings, so
      bufferization would copy the init into a temporary, compute there and
      copy the result out. The init is instead copied (`linalg.copy`) into a
      `tensor.empty`, which becomes the output binding, and the op
      accumulates there in place. An init that is a splat constant (ONNX
      convolutions starting from a folded zero bias) becomes a `linalg.fill`
      of a `tensor.empty` instead of a copy of a constant as large as the
      result.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def CPUResultsToBindingsPass : Pass<"strata-cpu-results-to-bindings",
                                    "::mlir::ModuleOp"> {
  let summary = "Turns the tensor results of kernels into memref arguments "
                "(output bindings)";
  let description = [{
    A kernel on tensors returns its results; a CPU entry point writes them
    to bindings. For each kernel with results, this pass appends one memref
    argument per result (same shape and element type, identity layout) and
    replaces `func.return %r` with

    ```mlir
    bufferization.materialize_in_destination %r in restrict writable %out
    ```

    so that, after `eliminate-empty-tensors`, one-shot bufferization computes
    the result directly in the output binding. Tensor arguments get
    `bufferization.writable = false`: an input binding may be read-only
    memory, so bufferization copies rather than writing into it.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CPUCheckViewsPass : Pass<"strata-cpu-check-views", "::mlir::func::FuncOp"> {
  let summary = "Checks at run time that a kernel's views of its buffers fit them";
  let description = [{
    Before each `memref.subview` of a kernel whose offsets, sizes or strides
    are dynamic (push constants, after bufferization of a slice), or whose
    source has a dynamic size, asserts (`cf.assert`, a kernel check) that
    every element it can reach lies inside its source. The host program
    checks the same before it dispatches; the kernel no longer trusts it, so
    that an altered program cannot make a kernel read or write outside its
    buffers.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CPUCopiesToLinalgPass : Pass<"strata-cpu-copies-to-linalg",
                                 "::mlir::func::FuncOp"> {
  let summary = "Rewrites memref.copy as linalg.copy";
  let description = [{
    Bufferization writes copies as `memref.copy`, which the LLVM lowering
    turns into a call to `memrefCopy` (a function of MLIR's runner
    library, which the runtime does not have) unless both sides are
    contiguous. As `linalg.copy` a copy is tiled, split across workgroups
    and vectorized like any other linalg op.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def CPUWindowPaddedInputsPass : Pass<"strata-cpu-window-padded-inputs",
                                     "::mlir::func::FuncOp"> {
  let summary = "Replaces a padded temporary that one op reads by a "
                "placeholder view of the input";
  let description = [{
    A static temporary written by one `linalg.copy` of a whole buffer into a
    box of it and by `linalg.fill`s of one constant into boxes that with the
    copy's cover it exactly, and read whole by one linalg op after them as an
    input (a pad before a convolution, see CPUComputeInDestinations), is
    replaced by `memref.reinterpret_cast` of the copied buffer to the
    temporary's shape, marked `strata_cpu.padding = {low = array<i64: ...>,
    value = v}` (the copy's offsets and the fill value). Nothing writes the
    placeholder, so the kernel is split across workgroups like one that
    reads its input directly; strata-cpu-materialize-padded-windows then
    gives each tile of the reader the window of padded input it reads. A
    temporary over 8 MiB is left alone (a reader that is not split reads its
    window whole, from the thread's local memory).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def CPUMaterializePaddedWindowsPass : Pass<"strata-cpu-materialize-padded-windows",
                                           "::mlir::func::FuncOp"> {
  let summary = "Gives each read of a padding placeholder a window of the "
                "padded input in local memory";
  let description = [{
    For each op reading a placeholder of strata-cpu-window-padded-inputs
    (through views of unit strides, as its workgroup tile does after
    strata-cpu-distribute-to-workgroups), allocates a buffer of the read
    box's shape (the upper bound of a dynamic size) marked
    `strata_cpu.local_memory`, fills the part of the box outside the input
    with the padding value and copies the rest from the input, right before
    the op, and makes the op read it. The fills and the copy get vector tiles
    of one register (`vector-bits`) along the innermost dimension. Any other
    use of a placeholder is an error. A depthwise convolution or NHWC
    pooling whose tiles will vectorize reads the placeholder in place instead
    (strata-cpu-tile-and-vectorize guards its reads): with `peel` (as
    strata-cpu-tile-and-vectorize's) every tile does; without, only when its
    tile sizes divide its extents.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits">,
    Option<"peel", "peel", "bool", /*default=*/"true",
           "Whether strata-cpu-tile-and-vectorize peels partial tiles">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CPUScratchToBindingPass : Pass<"strata-cpu-scratch-to-binding",
                                   "::mlir::ModuleOp"> {
  let summary = "Moves temporaries too large for the stack into a scratch "
                "binding the host provides";
  let description = [{
    After stack promotion, a `memref.alloc` left in a kernel is a temporary
    larger than the stack limit. When its size is static (and it does not
    leave the region it is made in), it becomes a `memref.view` at a
    64-byte-aligned offset of one `memref<Nxi8>` argument appended to the
    kernel, marked `strata_cpu.scratch`; the kernel gets
    `strata_cpu.scratch_bytes = N`. The entry point's metadata carries N and
    the host dispatches the kernel with a buffer of N bytes from its
    transient arena as the last binding. A kernel with scratch runs as one
    workgroup, since its temporaries are shared. Dynamically sized
    allocations are left for strata-cpu-verify-kernels to reject.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CPUSelectTileSizesPass : Pass<"strata-cpu-select-tile-sizes",
                                  "::mlir::func::FuncOp"> {
  let summary = "Chooses workgroup and vector tile sizes for each linalg op";
  let description = [{
    Attaches `strata_cpu.tile_sizes = {workgroup = array<i64: ...>,
    vector = array<i64: ...>}` (one size per loop of the op) to every linalg
    op of a kernel that does not carry one already, so a user may override
    the choice in the input.

    Vector tiles: contractions (matmul and friends) get
    `matmul-rows` x (`matmul-vectors` registers) x 1 on their last m, n and
    k loops and 1 on batch and outer m/n/k loops, the rows as many as
    `vector-registers` hold (8 with 32 registers, 6 with the 16 of AVX2)
    unless given, and for a few more rows than that (at most 4 tiles) as
    few tiles as the registers hold, of about equal heights; other ops get one vector
    register (`vector-bits` / element bits) on the loop that walks the
    innermost dimension of their largest operand, and 1 elsewhere; a copy
    that permutes its input also takes its output's innermost dimension
    whole when that is at most 4 long (an NCHW RGB image to NHWC).

    Workgroup tiles: a kernel is split along the loop of each op that walks
    the split dimension of its first output (its first dimension that is not
    statically 1; the last one for a kernel split by columns, see
    docs/codegen-cpu.md), when that loop is parallel and every buffer one op
    writes and another op touches is indexed by that loop in its split
    dimension in both (so a workgroup only reads what it wrote itself).
    The tile T is the same for every op of the kernel: enough rows that the
    op with the most iterations gets about `workgroup-iterations`
    iterations per workgroup (a dynamic loop counted as `dynamic-extent`
    iterations), rounded up to a multiple of that op's vector tile on the
    loop, so that none of its tiles is split between workgroups. Kernels that cannot be split get no workgroup tile and
    run whole on one workgroup. A large matmul (static, its rows an even
    number of tiles of at least 256, at least 1024 columns) takes tiles of
    twice T rows and half its columns instead, every op of the kernel the
    same two tiles, so that each workgroup packs half the right-hand side.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"32", "Vector registers of the target">,
    Option<"matmulRows", "matmul-rows", "int64_t", /*default=*/"0",
           "Rows (m) of a contraction's register tile and output columns "
           "of a convolution's; 0: as many as the vector registers hold "
           "beside the tile's right-hand-side registers and a broadcast, at "
           "most 8">,
    Option<"matmulVectors", "matmul-vectors", "int64_t", /*default=*/"2",
           "Vector registers along n of a contraction's register tile">,
    Option<"workgroupIterations", "workgroup-iterations", "int64_t",
           /*default=*/"65536",
           "Iterations of the largest op a workgroup should get">,
    Option<"dynamicExtent", "dynamic-extent", "int64_t", /*default=*/"256",
           "Extent assumed for a dynamic loop when sizing workgroup tiles">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def CPUDistributeToWorkgroupsPass : Pass<"strata-cpu-distribute-to-workgroups",
                                         "::mlir::ModuleOp"> {
  let summary = "Tiles each kernel's ops by their workgroup tile sizes and "
                "hands the tiles to workgroups cyclically";
  let description = [{
    For a kernel whose linalg ops carry a workgroup tile (see
    strata-cpu-select-tile-sizes), appends two `index` arguments, the
    workgroup's linear id and the dispatch's workgroup count (marked
    `strata_cpu.workgroup_id` and `strata_cpu.workgroup_count`), and tiles
    each op along its distributed loop with

    ```mlir
    scf.for %iv = (%lb + %id * T) to %ub step (T * %count)
    ```

    so any workgroup count covers the iteration space and ceil(N / T)
    workgroups give each one tile. The kernel gets
    `strata_cpu.distribution = {tile = T, extent = N}` (or
    `extent_arg`/`extent_dim` naming the memref dimension that holds N when it
    is dynamic), from which strata-cpu-wrap-kernel-abi derives the workgroup
    count the host should dispatch. Ops tiled along two loops (rows and
    columns) form a static grid of tiles, handed out the same way as one
    loop over the grid, rows outer; the kernel then gets `tiles` (the grid's
    size: the workgroup count) and `columns` (the tile's columns). Fails when
    the tiles of two ops would exchange data between workgroups, or ops tiled
    in two dimensions differ in their grids.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CPUTileAndVectorizePass : Pass<"strata-cpu-tile-and-vectorize",
                                   "::mlir::func::FuncOp"> {
  let summary = "Tiles linalg ops by their vector tile sizes and vectorizes "
                "the tiles";
  let description = [{
    Tiles each linalg op by its `strata_cpu.tile_sizes` vector tile
    (scf.for loops) and vectorizes each tile: a loop of static extent gets
    that many lanes, a dynamic one the tile size, with a mask. With `peel`
    the tile loops are peeled (innermost first), so that full tiles have
    static shapes and run without masks and only the last, partial tile of
    each loop is masked. Ops without tile sizes, and ops the vectorizer does
    not handle, stay as scalar linalg ops (lowered to loops later). The
    tile of a copy that permutes its input is read in the input's order and
    transposed in registers (shuffles), and written flat where it is
    contiguous.

    Then, so that a contraction's output tile stays in registers across its
    reduction loop, transfers of subviews are folded into transfers of the
    whole buffer and loop-invariant read/write pairs are hoisted out of the
    loop (linalg::hoistRedundantVectorTransfers). Hoisting assumes that
    distinct memref arguments do not alias, which the kernel convention
    guarantees (docs/codegen-cpu.md).

    Last, the reduction loop of each register tile (an innermost loop that
    carries vector accumulators, without masks) is unrolled whole where it
    has at most `reduction-unroll` steps, and by `reduction-unroll` steps
    (the remainder of its count, static or dynamic, one at a time) where
    its accumulators and the registers one step reads fit the
    target's `vector-registers` of `vector-bits` beside a broadcast and it
    is not inside another reduction loop.
  }];
  let options = [
    Option<"peel", "peel", "bool", /*default=*/"true",
           "Peel the tile loops so full tiles need no mask">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers in bits">,
    Option<"vectorRegisters", "vector-registers", "int64_t",
           /*default=*/"32", "Vector registers of the target">,
    Option<"reductionUnroll", "reduction-unroll", "int64_t",
           /*default=*/"4",
           "Steps of a register tile's reduction loop per iteration (1: "
           "not unrolled)">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def CPUApproximateMathPass : Pass<"strata-cpu-approximate-math",
                                  "::mlir::func::FuncOp"> {
  let summary = "Replaces transcendental math ops by vectorizable polynomial "
                "approximations";
  let description = [{
    Without it, `math.exp`, `math.tanh`, ... on a vector become one libm call
    per lane. This pass applies upstream's polynomial approximations (range
    reduction plus a minimax polynomial or rational function, accurate to a
    few ulp in f32) to the functions listed in `functions`, on vectors and
    scalars alike so that the vector body and its scalar remainder agree;
    f16 and bf16 operands are computed in f32. Ops not listed keep their
    LLVM intrinsic or libm call.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "Math functions to approximate (upstream's names: exp, expm1, "
               "tanh, log, log2, log1p, erf, ...)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def CPUWrapKernelABIPass : Pass<"strata-cpu-wrap-kernel-abi",
                                "::mlir::ModuleOp"> {
  let summary = "Gives each kernel the entry-point signature of "
                "drivers/cpu/kernel_abi.h";
  let description = [{
    Renames each kernel `@k` to a private `@k.body` and adds a public
    `func.func @k(%dispatch: !llvm.ptr) -> i32` that reads the
    strata_cpu_dispatch_v0_t it points to (LLVM dialect loads): the
    workgroup id and count (linearized as x + cx * (y + cy * z)), the
    binding pointers and lengths, and the push constants. It builds one memref
    descriptor per memref argument (binding i = memref argument i; dynamic
    sizes from push constants), calls the body, and returns 0.

    It returns 1 when the dispatch brings fewer bindings or constants than
    the kernel takes, and 2 when a binding is shorter than its memref. A
    kernel with `cf.assert` ops (the bounds checks of torch-mlir exports, for
    instance) gets them numbered (`strata_cpu.check`), its body returns an
    i32 status that the wrapper returns, and the entry's description lists
    each check's message prefixed with its location in the model
    (`check_messages`); strata-cpu-lower-checks later makes them return.
    Push constants: first each scalar argument in order (`i32` as is, `f32`
    bit-cast, `i64` as two, low word first, `index` zero-extended), then each dynamic dimension of each
    memref argument, in argument order, outer dimension first. A kernel
    without workgroup arguments runs on workgroup 0 only.

    Private functions with a body (kernel bodies, helpers) get internal
    linkage: only entry points are exported from the shared object.

    The wrapper carries `strata_cpu.entry_point`, the entry's description
    for the executable's metadata: binding_count, constant_count,
    binding_read_only, workgroup_size and workgroup_count (static) or
    workgroup_count_constant (ceil(constants[i] / workgroup_size[0])).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def CPUTreeReductionsPass : Pass<"strata-cpu-tree-reductions",
                                 "::mlir::func::FuncOp"> {
  let summary = "Float reductions of the innermost vector dimension as halving trees";
  let description = [{
    Rewrites each unmasked `vector.multi_reduction` of floats of kind add,
    maxnumf, minnumf, maximumf or minimumf that reduces only the innermost
    dimension, of 2^n lanes, into n steps that combine that dimension's two
    halves lane by lane (one vector op over all the other dimensions), then
    the accumulator. Upstream's lowering makes it one scalar step per lane in
    a single dependency chain (for maximumf each a max plus the compares and
    blends of its NaN and signed-zero rules). The min/max kinds are
    associative and commutative, so their results are the same; sums are
    regrouped as a tree, as tiling already regroups them. First, a loop
    that reduces one register of a row per step into its running value
    carries the register's lanes instead (one lane-by-lane op per step),
    starting from the running value broadcast (min/max) or zeros (sums, which
    add it at the end), and reduces the lanes once after the loop.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def CPULowerChecksPass : Pass<"strata-cpu-lower-checks", "::mlir::ModuleOp"> {
  let summary = "Makes a failed `cf.assert` in a kernel return its check's "
                "code instead of aborting";
  let description = [{
    Runs once the kernel bodies are control flow graphs (after
    `convert-scf-to-cf`). Each `cf.assert %ok, "msg"` numbered i by
    strata-cpu-wrap-kernel-abi becomes

    ```mlir
      cf.cond_br %ok, ^continue, ^failed_i
    ^failed_i:
      return %c(16 + i) : i32
    ```

    so the check survives, the access it guards is never made, and the
    runtime reports the check's message with its model location
    (drivers/cpu/kernel_abi.h). Upstream's lowering would call `puts` and
    `abort`, which no CPU executable may import and which would take the
    whole process down on a bad input. An assert that was not numbered, or
    sits in a function that does not return an i32 status, is an error at
    its location.
  }];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // STRATA_COMPILER_CODEGEN_CPU_PASSES_TD
