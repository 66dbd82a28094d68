// Transform-dialect schedules that lower the sample models with upstream MLIR alone: the
// baseline of tests/benchmarks/model_bench.py. One entry point per benchmarked function,
// applied to a module that holds that function and a timing `main`
// (driver.mlir.in):
//
//   mlir-opt DRIVER --transform-preload-library=transform-library-paths=schedules.mlir \
//            --transform-interpreter=entry-point=mlp_batch1
//
// Contractions (linalg.matmul, linalg.batch_matmul) are tiled to register tiles of
// M x N x 4: after vectorization, hoisting of the M x N accumulator out of the K loop and
// the outer-product lowering, each step of the K loop is 4 x M broadcasts and 4 x M vector
// FMAs of width N. Tiles divide the static shapes (no masks, no remainder loops). Every
// other structured op is tiled to 1 along all loops but the innermost, which stays whole and
// becomes the vector. The rest (vectorize, bufferize, hoist, lower vector ops) is shared.
module attributes {transform.with_named_sequence} {

  // MLP 784-512-512-10, batch 1: 64 outputs of the single row per tile (4 zmm
  // accumulators; 32 was slower, 128 and 256 no faster); the 10-wide last layer is one tile.
  transform.named_sequence @mlp_batch1(%module: !transform.any_op {transform.consumed}) {
    %matmuls = transform.structured.match ops{["linalg.matmul"]} in %module
        : (!transform.any_op) -> !transform.any_op
    %hidden1, %hidden2, %last = transform.split_handle %matmuls
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %hidden = transform.merge_handles %hidden1, %hidden2 : !transform.any_op
    %t0, %l0:3 = transform.structured.tile_using_for %hidden tile_sizes [1, 64, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t1, %l1:3 = transform.structured.tile_using_for %last tile_sizes [1, 10, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @tile_rows_and_lower failures(propagate) (%module) : (!transform.any_op) -> ()
    transform.yield
  }

  // The same MLP, batch 32: 8 x 32 register tiles (16 zmm accumulators); 8 x 10 for the
  // last layer.
  transform.named_sequence @mlp_batch32(%module: !transform.any_op {transform.consumed}) {
    %matmuls = transform.structured.match ops{["linalg.matmul"]} in %module
        : (!transform.any_op) -> !transform.any_op
    %hidden1, %hidden2, %last = transform.split_handle %matmuls
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %hidden = transform.merge_handles %hidden1, %hidden2 : !transform.any_op
    %t0, %l0:3 = transform.structured.tile_using_for %hidden tile_sizes [8, 32, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %t1, %l1:3 = transform.structured.tile_using_for %last tile_sizes [8, 10, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @tile_rows_and_lower failures(propagate) (%module) : (!transform.any_op) -> ()
    transform.yield
  }

  // Encoder block (seq 128, width 256, 4 heads, FFN 1024): linalg.softmax decomposed into
  // its max, exp, sum and divide ops first; 8 x 32 register tiles for the six projections,
  // one head at a time for the two batch matmuls.
  transform.named_sequence @encoder(%module: !transform.any_op {transform.consumed}) {
    %softmax = transform.structured.match ops{["linalg.softmax"]} in %module
        : (!transform.any_op) -> !transform.any_op
    %decomposed = transform.structured.decompose_interface %softmax
        : (!transform.any_op) -> !transform.any_op
    %matmuls = transform.structured.match ops{["linalg.matmul"]} in %module
        : (!transform.any_op) -> !transform.any_op
    %t0, %l0:3 = transform.structured.tile_using_for %matmuls tile_sizes [8, 32, 4]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %batch = transform.structured.match ops{["linalg.batch_matmul"]} in %module
        : (!transform.any_op) -> !transform.any_op
    %t1, %l1:4 = transform.structured.tile_using_for %batch tile_sizes [1, 8, 32, 4]
        : (!transform.any_op)
        -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @tile_rows_and_lower failures(propagate) (%module) : (!transform.any_op) -> ()
    transform.yield
  }

  // Non-contraction structured ops with 2 or 3 loops.
  transform.named_sequence @match_rank2(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic", "linalg.fill", "linalg.transpose"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %rank = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %two = transform.param.constant 2 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %two : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }
  transform.named_sequence @match_rank3(%op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.operation_name %op ["linalg.generic", "linalg.fill", "linalg.transpose"] : !transform.any_op
    transform.match.structured %op : !transform.any_op {
    ^bb0(%s: !transform.any_op):
      %rank = transform.match.structured.rank %s : (!transform.any_op) -> !transform.param<i64>
      %three = transform.param.constant 3 : i64 -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %three : !transform.param<i64>
      transform.match.structured.yield
    }
    transform.yield %op : !transform.any_op
  }

  // Tiles the remaining structured ops to their innermost loop, then lowers the module.
  transform.named_sequence @tile_rows_and_lower(%module: !transform.any_op {transform.consumed}) {
    %rank2 = transform.collect_matching @match_rank2 in %module : (!transform.any_op) -> !transform.any_op
    %t2, %l2 = transform.structured.tile_using_for %rank2 tile_sizes [1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %rank3 = transform.collect_matching @match_rank3 in %module : (!transform.any_op) -> !transform.any_op
    %t3, %l3:2 = transform.structured.tile_using_for %rank3 tile_sizes [1, 1, 0]
        : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.include @vectorize_and_bufferize failures(propagate) (%module) : (!transform.any_op) -> ()
    transform.yield
  }

  transform.named_sequence @vectorize_and_bufferize(%module: !transform.any_op {transform.consumed}) {
    %funcs = transform.structured.match ops{["func.func"]} in %module
        : (!transform.any_op) -> !transform.any_op
    // `main` calls the benchmarked function in a timed loop: keep LLVM from inlining it
    // there and moving any of its work out of the loop (func-to-llvm keeps `passthrough`,
    // not `no_inline`).
    %noinline = transform.param.constant ["noinline"] -> !transform.any_param
    transform.annotate %funcs "passthrough" = %noinline : !transform.any_op, !transform.any_param
    %vectorized = transform.structured.vectorize_children_and_apply_patterns %funcs
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %vectorized {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.linalg.tiling_canonicalization
    } : !transform.any_op
    %bufferized = transform.bufferization.one_shot_bufferize layout{IdentityLayoutMap} %module
        {bufferize_function_boundaries = true} : (!transform.any_op) -> !transform.any_op
    %memref_funcs = transform.structured.match ops{["func.func"]} in %bufferized
        : (!transform.any_op) -> !transform.any_op
    // Canonicalization drops the memref loop-carried values bufferization leaves, which
    // would otherwise keep the accumulator's transfers inside the K loop.
    transform.apply_patterns to %memref_funcs {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %hoisted = transform.structured.hoist_redundant_vector_transfers %memref_funcs
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %hoisted {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = innerreduction
      transform.apply_patterns.vector.split_transfer_full_partial split_transfer_strategy = "linalg-copy"
      transform.apply_patterns.vector.transfer_to_scf max_transfer_rank = 1 full_unroll = true
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_shape_cast
      // No lower_transpose: no vector.transpose is left by here, and with it in this set
      // mlir-opt 22 ran out of memory (over 20 GB) on the encoder.
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
