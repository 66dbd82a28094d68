//===- Passes.td - GPU code generation passes -------------*- tablegen -*-===//
//
// The passes that take bufferized dispatch kernels (func.func on memrefs, as
// the shared front of the code generators leaves them) to gpu.func kernels,
// and those that finish the SPIR-V back end where stock MLIR stops.
// buildGPUCodegenPipeline (Pipeline.h) lists them in order;
// docs/codegen-gpu.md describes the conventions they implement.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_GPU_PASSES_TD
#define STRATA_COMPILER_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def GPUSplatsToFillsPass : Pass<"strata-gpu-splats-to-fills",
                                "::mlir::func::FuncOp"> {
  let summary = "Splat tensor constants in kernels become fills";
  let description = [{
    A splat tensor constant (`dense<0> : tensor<1x8xi64>`) would bufferize
    into a global constant, which GPU kernels do not have: it becomes a
    `linalg.fill` of a `tensor.empty` instead, computed where it is used.
    Kernels with other tensor constants are refused with the constant's
    location.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GPUExactOpsPass : Pass<"strata-gpu-exact-ops"> {
  let summary = "Ops whose GPU lowerings differ from their definition become exact expansions";
  let description = [{
    Rewrites the scalar ops named in `ops` (all of them by default) into
    arithmetic every GPU back end lowers exactly as the op is defined:

    - `ipowi`: `math.ipowi` by repeated squaring in an `scf.while` (the
      CPU's helper function, which a GPU kernel cannot call): x^0 = 1; a
      negative exponent gives 1 for x = 1, +-1 for x = -1, 0 otherwise;
    - `maximumf`, `minimumf`: compares and selects, NaN when either operand
      is, and for equal operands the bitwise AND (maximum) or OR (minimum) of
      the two, so -0 orders below +0 (SPIR-V's FMax and libdevice's fmaxf
      leave that open);
    - `trunc`: `math.trunc` as floor of the magnitude with the operand's sign
      (SPIR-V has no lowering of it in MLIR 22).
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "Ops to rewrite: ipowi, maximumf, minimumf, trunc (default: all)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def GPULinalgToLoopsPass : Pass<"strata-gpu-linalg-to-loops",
                                "::mlir::func::FuncOp"> {
  let summary = "Linalg ops become parallel loop nests over tied sizes";
  let description = [{
    Each linalg op becomes an `scf.parallel` nest over its parallel loops
    (reductions inside as `scf.for`). Before that, the sizes the op relates
    are tied: when two operands' dimensions index the same loop (a matmul's
    M in its input and its output), every `memref.dim` of either becomes the
    same value. The host has checked each such relation before the dispatch
    (strata-assert-shapes), so this only makes equal sizes look equal, and
    loops over the same iterations then fuse.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def GPUMatrixTilesPass : Pass<"strata-gpu-matrix-tiles", "::mlir::func::FuncOp"> {
  let summary = "Computes a kernel's matmul in tiles: on the matrix cores, or staged in workgroup memory";
  let description = [{
    Runs on a bufferized kernel before its linalg ops become loops. A kernel
    that is an optional `linalg.fill` of C, one `linalg.matmul` C += A * B
    (f32 * f32 or f16 * f16, accumulated in f32; N and K static, N a multiple
    of 32 and K of the instruction's K step; M static or dynamic) and then
    elementwise `linalg.generic`s that rewrite C (bias, activation, residual)
    becomes a grid-stride loop over 32x32 tiles of C, one per workgroup of 64
    invocations at a time. Each tile's K loop runs on what `kind` names:

    - `mfma` (AMD CDNA, gfx908 and later gfx9: one wave of 64): 2x2
      fragments of `amdgpu.mfma 16x16x4` (f32) or `16x16x16` (f16);
    - `wmma32` (AMD RDNA3, gfx11: two waves of 32): 1x2 fragments each of
      `amdgpu.wmma 16x16x16` (f16); f32 has no WMMA there, so f32 kernels
      take the scalar body;
    - `scalar`: each invocation computes 16 elements of one column with
      FMAs;
    - `shared` (NVIDIA and Vulkan GPUs, f32 arithmetic; operands may be f32,
      f16 or bf16): tiles of 128 or 64 rows and columns (halved while fewer
      than 128 tiles cover C), one per workgroup of rows * cols / 64
      invocations; per step of 8 along K the workgroup copies the tiles of
      A and B to workgroup memory, and each invocation accumulates 8x8
      elements of C in registers, loading the next step's elements while
      this one computes. N must be at least 64 (the last tile's columns
      past N masked) and K may be any static extent (the last step's
      elements past K are zeros); a static M under 32 is left to the general
      distribution.
    - `mma` (NVIDIA sm_80 and later): f16 and bf16 matmuls on the tensor
      cores, f32 ones as `shared`. The same tiles of C, one per workgroup of
      four warps; per step of 32 along K the workgroup copies A's tile and
      B's, transposed, to workgroup memory as words of two elements
      adjacent along K, and each warp accumulates a quarter of the tile in
      f32 with `nvvm.mma.sync` m16n8k16. K must be a multiple of 32, or of
      8 where the tiles are copied by `cp.async` (the last step's chunks
      past K read nothing and are zero-filled: cp.async's src-size). With
      `mma-stages` of 2 or more (default 3) the tiles are copied by
      `cp.async` into that many buffers, in their memory layout with
      XOR-swizzled 16-byte chunks, B's fragments loaded transposed; with 1,
      through registers into one buffer, B transposed as it is stored.
      Buffers past the 48 KiB a CUDA kernel may declare are dynamic shared
      memory (`strata.dynamic_workgroup_memory`), up to
      `mma-workgroup-memory` bytes.
    - `wgmma` (NVIDIA sm_90a only): as `mma`, except that where the tiles
      are copied by `cp.async` (2 or more stages, static strides), a
      warpgroup of four warps takes the tile (of the wide tiles, each of
      two warpgroups 64 rows by 256 columns), the
      buffers hold A K-major and B N-major in unswizzled core matrices (8
      rows of 16 bytes, 128 contiguous bytes), and per step of 32 along K
      the warpgroup issues `nvvm.wgmma.mma_async` m64nNk16 (N the tile's
      columns) for each 16 of K and each 64 rows, reading both operands
      from workgroup memory through matrix descriptors, committed as one
      group; one group stays in flight (`wgmma.wait_group 1` frees the step
      before's buffer for the next copies). Copies are made visible to
      wgmma's async proxy by `fence.proxy.async` before the step's barrier.

    With `shared`, `mma` and `wgmma`, a kernel that is an optional fill of its
    output, one `linalg.conv_2d_nhwc_hwcf` (static except the batch,
    contiguous operands) and elementwise ops on the output is the same
    matmul read in place (implicit GEMM): row m of A is output pixel
    (n, oh, ow), column k filter tap (kh, kw, c), so A[m, k] is the input
    element that pixel reads at that tap; B is the filter viewed as
    (KH * KW * C) x F, C the output as (N * OH * OW) x F. The tensor cores
    need C a multiple of 8 (A's runs of 8 along K are 8 channels of one
    tap). On the FMAs (f32), a convolution of static shape, or a matmul of
    static M whose N is not a multiple of 64 or K of 8, takes the tiles
    from `fma-tiles-from` tiles on (128: with fewer, one output element per
    invocation keeps more of a large GPU busy).

    Fragments are loaded from the bindings in each instruction's lane layout
    (rows of A past M are clamped, and their results never stored), and the
    elementwise ops run on each accumulator element before it is stored
    (under `row < M` when M is not a multiple of 32). Every kind has the same
    grid, workgroup size and count, so the code objects of several
    architectures share one entry-point list. Kernels that do not match are
    left to `strata-gpu-linalg-to-loops` and `strata-gpu-distribute`, which
    skips kernels that already have `strata.workgroup_size`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::spirv::SPIRVDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"mfma\"",
           "The instructions of the tiles: mfma, wmma32, scalar, shared, mma or wgmma">,
    Option<"maxWorkgroupCount", "max-workgroup-count", "int64_t",
           /*default=*/"65535",
           "Most workgroups the host may dispatch along x">,
    Option<"fmaTilesFrom", "fma-tiles-from", "int64_t",
           /*default=*/"128",
           "Fewest tiles of C with which an f32 convolution of static shape, "
           "or a matmul of static M whose N is not a multiple of 64 or K of "
           "8, takes the `shared` tiles (fewer: one output element per "
           "invocation)">,
    Option<"mmaStages", "mma-stages", "int64_t", /*default=*/"3",
           "Workgroup-memory buffers of the tensor-core tiles (`mma`), filled "
           "by cp.async ahead of the steps that read them (1: one buffer, "
           "the next step loaded through registers)">,
    Option<"mmaWideTiles", "mma-wide-tiles", "bool", /*default=*/"false",
           "Tensor-core tiles of 128x256 (eight warps of 64x64) where N is a "
           "multiple of 256 and such tiles still fill a large GPU">,
    Option<"mmaWorkgroupMemory", "mma-workgroup-memory", "int64_t",
           /*default=*/"49152",
           "Bytes of workgroup memory the tensor-core buffers may take: "
           "past 49152 (what a CUDA kernel may declare statically) the "
           "kernel's is dynamic (strata.dynamic_workgroup_memory); the CUDA "
           "target gives its archs' opt-in maximum">,
  ];
}

def GPUDistributePass : Pass<"strata-gpu-distribute", "::mlir::func::FuncOp"> {
  let summary = "Distributes a kernel's parallel loops over workgroups and "
                "invocations";
  let description = [{
    Runs on a bufferized kernel whose linalg ops became `scf.parallel` loops.
    First it fuses adjacent loops over the same iterations when each reads
    what the earlier one wrote only at the iteration that wrote it; distinct
    bindings never alias (the kernel ABI forbids a written binding to
    overlap another). Then it picks one of two shapes and records it on the
    kernel, for the outliner and the host:

    - *grid*: the body is one `scf.parallel` and ops without side effects.
      The loop becomes a grid-stride loop over its linearized iteration
      space: invocation `block_id.x * size + thread_id.x` takes iterations
      `start, start + grid_dim.x * size, ...`, so any workgroup count is
      correct and the host picks ceil(iterations / size), capped at the
      device's limit. `strata.workgroup_count` says how the host computes
      the iterations: a static count, or a factor times push constants.
    - *workgroup*: anything else (several loops whose iterations depend on
      each other, temporaries shared between them) runs as one workgroup of
      `workgroup-invocations` invocations: they share each parallel loop
      (also inside sequential loops, which every invocation runs) and wait
      for each other (`gpu.barrier`) after it; other work with side effects
      runs in invocation 0, then all wait; except a loop that folds terms
      into one location (a sum over everything), which every invocation
      shares: each folds its iterations' terms, and invocation 0 folds
      their values (Reduction.h). Temporaries move to workgroup memory,
      where every invocation sees them.
    - *serial*: a kernel with unstructured control flow runs as one
      invocation.

    `strata.workgroup_size` gets the workgroup size. With `target-env`, the
    sizes and the workgroup memory are capped by its resource limits.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::spirv::SPIRVDialect"];
  let options = [
    Option<"workgroupSize", "workgroup-size", "int64_t", /*default=*/"64",
           "Invocations per workgroup of a grid kernel">,
    Option<"maxWorkgroupCount", "max-workgroup-count", "int64_t",
           /*default=*/"65535",
           "Most workgroups the host may dispatch along x">,
    Option<"workgroupInvocations", "workgroup-invocations", "int64_t",
           /*default=*/"256",
           "Invocations of the one workgroup of a workgroup kernel">,
    Option<"maxWorkgroupMemory", "max-workgroup-memory", "int64_t",
           /*default=*/"32768",
           "Bytes of workgroup memory a kernel may use for temporaries">,
    Option<"targetEnv", "target-env", "std::string", /*default=*/"\"\"",
           "A #spirv.target_env whose resource limits (invocations per "
           "workgroup, workgroup size, shared memory) cap the sizes above">,
  ];
}

def GPULowerChecksPass : Pass<"strata-gpu-lower-checks",
                              "::mlir::func::FuncOp"> {
  let summary = "Kernel checks write a status word and guard what follows";
  let description = [{
    A `cf.assert` in a kernel (the bounds check of an embedding look-up)
    becomes, for check i: when the condition fails, the word of a status
    binding is set to i + 1; and the rest of the check's block runs only
    when it holds, so the access it guards never happens. The status
    binding is a `memref<1xi32>` argument appended to the kernel (marked
    `strata.check_status`); the outliner puts it at binding `binding_count`
    as schemas/vulkan_executable.fbs says, and the kernel's
    `strata.check_messages` say what each check tests and where in the
    model it comes from. The driver zeroes the word before the dispatch and
    fails the submission with the message of a non-zero one.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::ub::UBDialect"];
}

def GPUPadsToGridsPass : Pass<"strata-gpu-pads-to-grids",
                              "::mlir::func::FuncOp"> {
  let summary = "A tensor.pad becomes one elementwise op over its result";
  let description = [{
    Bufferized as it stands, a `tensor.pad` is a fill of the result and a
    copy into its interior: two loops over different iterations, which the
    distributor cannot fuse, so the kernel ran as one workgroup (a ResNet's
    padded 112x112x64 activation on one multiprocessor). Each pad becomes a
    `linalg.generic` over the result instead, whose element at i is the
    source's at i - low where that is inside the source and the padding
    value elsewhere (the source index clamped, so that every load is in
    bounds): one loop, distributed over a grid. The padding region's body
    is computed in the generic, its indices being the generic's. Padded
    dimensions need a static source extent of at least 1 (an empty source
    dimension has nothing to clamp to); others may be dynamic.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def GPUBoolBytesPass : Pass<"strata-gpu-bool-bytes", "::mlir::func::FuncOp"> {
  let summary = "Boolean buffers hold one byte per element";
  let description = [{
    The host stores an i1 tensor as one byte per element (0 or 1), and
    SPIR-V has no 1-bit storage: every memref of i1 (bindings, views,
    temporaries) becomes a memref of i8, loads compare the byte with 0 and
    stores write 0 or 1.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GPUOutlineKernelsPass : Pass<"strata-gpu-outline-kernels",
                                 "::mlir::ModuleOp"> {
  let summary = "Moves distributed kernels into a gpu.module as gpu.func "
                "entry points with the GPU kernel ABI";
  let description = [{
    Each kernel `func.func` becomes a `gpu.func` of `gpu.module @kernels`:

    - every memref argument becomes a 1-D binding `memref<?xT>` (binding i
      = memref argument i, as on the CPU) that the body reinterprets with
      the original shape, its dynamic sizes read from the push constants;
    - the push constants (scalar arguments in order, `i64` as two words, low
      first; then the dynamic dimensions of each memref argument) are one
      `memref<Nxi32>` argument in descriptor set `push-constant-set`, which
      strata-spirv-push-constants turns into the push-constant block;
    - `spirv.entry_point_abi` carries `strata.workgroup_size`, and the
      `spirv.target_env` given as an option is attached to the gpu.module.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::spirv::SPIRVDialect"];
  let options = [
    Option<"targetEnv", "target-env", "std::string", /*default=*/"\"\"",
           "The #spirv.target_env to attach (empty: the SPIR-V default)">,
  ];
}

def GPUFoldFlatViewsPass : Pass<"strata-gpu-fold-flat-views",
                                "::mlir::gpu::GPUModuleOp"> {
  let summary = "Loads and stores through flat views of a binding use the "
                "binding";
  let description = [{
    After flatten-memref every access goes through a 1-D (or 0-D)
    `memref.reinterpret_cast` of a 1-D binding, which the SPIR-V conversion
    cannot lower: an access at index i of a view with offset o and stride s
    becomes an access of the binding at o + i * s. `memref.dim` of a view
    becomes its size operand.
  }];
}

def GPUPrivateTemporariesPass : Pass<"strata-gpu-private-temporaries",
                                     "::mlir::gpu::GPUModuleOp"> {
  let summary = "Kernel temporaries live in each invocation's private memory";
  let description = [{
    A temporary (`memref.alloca` after bufferization and stack promotion)
    without a memory space is private to one invocation: a grid kernel
    reads each element in the iteration that wrote it (the distributor
    fuses only such loops), and a serial kernel is one invocation. Its type
    gets the SPIR-V `Function` storage class, and the loads and stores of
    it follow. Temporaries the distributor put in workgroup memory become
    workgroup attributions of the gpu.func (SPIR-V `Workgroup` variables),
    within the target's shared-memory limit.
  }];
  let dependentDialects = ["::mlir::spirv::SPIRVDialect"];
}

def SPIRVPushConstantsPass : Pass<"strata-spirv-push-constants",
                                  "::mlir::spirv::ModuleOp"> {
  let summary = "Turns the push-constant binding into a push-constant block";
  let description = [{
    Stock MLIR gives every kernel argument a storage buffer; per-argument
    push-constant variables do not validate. The outliner gives all scalar
    arguments one `memref<Nxi32>` in descriptor set 3; this pass turns each
    such variable into a `PushConstant` variable (no descriptor set or
    binding) and rewrites the pointer types derived from it.
  }];
}

def SPIRVVectorAccessPass : Pass<"strata-spirv-vector-access",
                                 "::mlir::spirv::ModuleOp"> {
  let summary = "Moves four adjacent elements of a binding as one 4-vector";
  let description = [{
    Bindings are runtime arrays of scalars, and logical addressing has no
    pointer casts, so a kernel that reads or writes four adjacent elements
    of a binding together (a matmul tile's row of B or of C) does it in
    four accesses, which a driver cannot merge without knowing that the
    first index is a multiple of 4. Where the index arithmetic shows it
    (sums and constant multiples of values, every coefficient and the
    constant a multiple of 4), a `CompositeConstruct` of four such loads,
    or four such stores in a row with nothing between them that writes
    memory, synchronizes or reads that binding, becomes one load or store
    of a 4-vector through a second variable on the same descriptor set and
    binding: a runtime array of 4-vectors, indexed by the index divided by
    4. A binding that is written gets the second variable only where every
    access of it is so grouped (the first variable is then removed), so
    that no written binding has two variables the driver may assume do not
    alias.
  }];
}

def SPIRVFloatControlsPass : Pass<"strata-spirv-float-controls",
                                  "::mlir::spirv::ModuleOp"> {
  let summary = "Asks for IEEE denormals, NaN, infinities and signed zeros";
  let description = [{
    Vulkan lets a device flush denormals and assume that no value is NaN,
    infinite or a signed zero unless a kernel asks otherwise
    (`SPV_KHR_float_controls`): NVIDIA's driver flushes f32 subnormals and
    loses NaN through clamps. The CPU's results keep them, so every entry
    point gets the execution modes `DenormPreserve` and
    `SignedZeroInfNanPreserve` for each float width the module computes in.
    Where a device does not support a mode for a width (its
    `VkPhysicalDeviceFloatControlsProperties`), the Vulkan driver removes
    that mode before it creates the shader module.
  }];
}

def LLVMKernelABIPass : Pass<"strata-llvm-kernel-abi",
                             "::mlir::gpu::GPUModuleOp"> {
  let summary = "Gives the outlined kernels the CUDA and ROCm kernel ABI";
  let description = [{
    The outliner leaves each kernel with `memref<?xT>` bindings, one
    `memref<Nxi32>` of constants and the memory spaces SPIR-V names
    (schemas/cuda_executable.fbs states the ABI this pass implements, which
    schemas/rocm_executable.fbs shares; global memory is address space 1
    and workgroup memory 3 on both NVPTX and AMDGPU):
    - each binding becomes a global pointer (`!llvm.ptr<1>`, `noalias`:
      the ABI forbids a written binding to overlap another), its loads,
      stores and atomics addressed by `llvm.getelementptr` at their 1-D
      index, so the parameter is one pointer (bare pointers need static
      shapes, which bindings do not have);
    - the constants become that many `i32` parameters after the pointers,
      each load at a constant index replaced by its parameter;
    - workgroup temporaries become workgroup attributions of the
      `gpu.func` (shared memory), private ones plain allocas;
    - the workgroup size becomes `known_block_size` (`.maxntid` in PTX),
      and the SPIR-V attributes are dropped;
    - for NVVM (not `rocdl`), scalar `math.sqrt` calls libdevice's
      correctly rounded `__nv_fsqrt_rn` / `__nv_dsqrt_rn` (PTX `sqrt.rn`),
      not the approximate `__nv_sqrtf` that `convert-gpu-to-nvvm` would
      call; AMDGPU's square root is correctly rounded already.
    A use it cannot rewrite fails the pass, naming the op.
  }];
  let options = [
    Option<"rocdl", "rocdl", "bool", /*default=*/"false",
           "Kernels for ROCDL (AMD GPUs) rather than NVVM">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // STRATA_COMPILER_CODEGEN_GPU_PASSES_TD
