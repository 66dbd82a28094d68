// compile-module's phases: --compile-to stops after one and prints its IR,
// --print-pipeline names the passes, an unknown phase and an op outside the
// input dialects are errors with the source location.
// RUN: compile-module %s --compile-to=input | FileCheck --check-prefix=INPUT %s
// RUN: compile-module %s --compile-to=dispatch | FileCheck --check-prefix=DISPATCH %s
// RUN: compile-module %s --compile-to=executables | FileCheck --check-prefix=EXEC %s
// RUN: compile-module %s -o %t.smod --print-pipeline 2>&1 | FileCheck --check-prefix=PIPELINE %s
// RUN: not compile-module %s --compile-to=nowhere 2>&1 | FileCheck --check-prefix=PHASE %s
// RUN: not compile-module %S/Inputs/unsupported.mlir -o %t.bad 2>&1 | FileCheck --check-prefix=BADOP %s

// INPUT: linalg.generic
// INPUT-NOT: tosa.
// DISPATCH: func.func @relu_dispatch_0({{.*}}) -> tensor<7xf32> attributes {flow.kernel}
// DISPATCH: flow.dispatch @relu_dispatch_0
// How the host dispatches each kernel, and the executables, travel in the IR:
// EXEC: func.func @relu_dispatch_0({{.*}}) -> tensor<7xf32> attributes {flow.kernel, flow.variants = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: {{[0-9]+}}, 1, 1>}]}
// EXEC: flow.executable_binary "kernels" format "cpu-elf-x86_64" data dense_resource<kernels_cpu_elf_x86_64> : tensor<{{[0-9]+}}xi8> metadata dense_resource<kernels_cpu_elf_x86_64_metadata> : tensor<{{[0-9]+}}xi8>
// PIPELINE: // input: any(func.func(tosa-to-linalg-named
// PIPELINE: // dispatch: any(strata-assert-shapes,strata-form-dispatches
// PIPELINE: // vm: any(lower-affine,convert-scf-to-cf{{.*}}strata-plan-transients,strata-batch-submissions,strata-host-to-vm,
// PHASE: unknown phase 'nowhere' for --compile-to; expected one of input, global-opt, dispatch, executables, vm, module
// BADOP: unsupported.mlir:3:8: error: unsupported op 'gpu.thread_id' in a model

func.func @relu(%x: tensor<7xf32>) -> tensor<7xf32> {
  %r = tosa.clamp %x {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<7xf32>) -> tensor<7xf32>
  return %r : tensor<7xf32>
}
