// Kernels the plan cannot size: their variants are missing or malformed.

func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel}

func.func @uncompiled(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'flow.dispatch' op dispatches 'k', whose flow.variants is missing: the kernel has not been compiled into an executable}}
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = [{format = "cpu-elf-x86_64", ordinal = 0 : i32}]}

func.func @malformed(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'flow.dispatch' op dispatches 'k', whose flow.variants entry 0 needs format (string), ordinal (integer), workgroup_size (array<i32> of 3) and scratch_bytes (integer)}}
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %a : tensor<16xf32>
}

// -----

func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = [
  {format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>},
  {format = "vulkan-spirv", ordinal = 3 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 64, 1, 1>}]}

func.func @formats_disagree(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'flow.dispatch' op dispatches 'k', whose flow.variants entry 1 (vulkan-spirv) differs from the first in its ordinal or scratch}}
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %a : tensor<16xf32>
}
