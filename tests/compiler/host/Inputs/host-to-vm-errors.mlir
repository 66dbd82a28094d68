// IR the host lowering refuses: what the plan or the submits left out.

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}
flow.executable_binary "kernels" format "cpu-elf-x86_64" data dense<[1]> : tensor<1xi8> metadata dense<[2]> : tensor<1xi8>

func.func @no_submit(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{'func.return' op comes after dispatches that no flow.submit runs (strata-batch-submissions places them)}}
  return %a : tensor<16xf32>
}

// -----

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}
flow.executable_binary "kernels" format "cpu-elf-x86_64" data dense<[1]> : tensor<1xi8> metadata dense<[2]> : tensor<1xi8>

func.func @early_read(%x: tensor<16xf32>, %i: index) -> f32 {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{'tensor.extract' op reads a tensor that a dispatch no flow.submit ran writes (strata-batch-submissions places them)}}
  %e = tensor.extract %a[%i] : tensor<16xf32>
  flow.submit
  return %e : f32
}

// -----

#s = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 128 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @s(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #s}
flow.executable_binary "kernels" format "cpu-elf-x86_64" data dense<[1]> : tensor<1xi8> metadata dense<[2]> : tensor<1xi8>

func.func @unplanned_scratch(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'flow.dispatch' op dispatches a kernel that takes 128 bytes of scratch without a flow.scratch_offset (strata-plan-transients places it)}}
  %a = flow.dispatch @s(%x) : (tensor<16xf32>) -> tensor<16xf32>
  flow.submit
  return %a : tensor<16xf32>
}

// -----

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}
flow.executable_binary "kernels" format "cpu-elf-x86_64" data dense<[1]> : tensor<1xi8> metadata dense<[2]> : tensor<1xi8>

func.func @arena_before_allocation(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'flow.dispatch' op places results in its block's arena before a dispatch allocates it (flow.arena_bytes)}}
  %a = flow.dispatch @k(%x) {flow.transient_offsets = array<i64: 0>} : (tensor<16xf32>) -> tensor<16xf32>
  %b = flow.dispatch @k(%a) : (tensor<16xf32>) -> tensor<16xf32>
  flow.submit
  return %b : tensor<16xf32>
}

// -----

#v = [{format = "cpu-elf-x86_64", ordinal = 0 : i32, scratch_bytes = 0 : i64, workgroup_count = array<i32: 1, 1, 1>, workgroup_size = array<i32: 1, 1, 1>}]
func.func private @k(tensor<16xf32>) -> tensor<16xf32> attributes {flow.kernel, flow.variants = #v}

// expected-error @+1 {{'func.func' op dispatches kernels, but the module has no flow.executable_binary with their executable}}
func.func @no_executable(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = flow.dispatch @k(%x) : (tensor<16xf32>) -> tensor<16xf32>
  flow.submit
  return %a : tensor<16xf32>
}

// -----

// expected-error @+1 {{'flow.executable_binary' op has data of type 'tensor<2xf32>', expected tensor<Nxi8> (the bytes)}}
flow.executable_binary "kernels" format "cpu-elf-x86_64" data dense<[1.0, 2.0]> : tensor<2xf32> metadata dense<[2]> : tensor<1xi8>
