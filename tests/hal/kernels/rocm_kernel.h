// What the ROCm test kernels (<name>.cl, OpenCL C built by clang for
// amdgcn-amd-amdhsa with no device libraries) share: the kernel attribute
// with its fixed workgroup size, and the ids and counts of the dispatch from
// clang's AMDGPU builtins and the HSA dispatch packet.
#ifndef STRATA_TESTS_HAL_KERNELS_ROCM_KERNEL_H
#define STRATA_TESTS_HAL_KERNELS_ROCM_KERNEL_H

#define STRATA_KERNEL(threads) kernel __attribute__((reqd_work_group_size(threads, 1, 1)))

static inline uint workgroup_id(int dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_id_x()
                  : dim == 1 ? __builtin_amdgcn_workgroup_id_y() : __builtin_amdgcn_workgroup_id_z();
}

static inline uint thread_id(int dim) {
  return dim == 0 ? __builtin_amdgcn_workitem_id_x()
                  : dim == 1 ? __builtin_amdgcn_workitem_id_y() : __builtin_amdgcn_workitem_id_z();
}

// hsa_kernel_dispatch_packet_t: workgroup_size_x/y/z are 16-bit at bytes 4,
// 6, 8; grid_size_x/y/z (in threads) 32-bit at bytes 12, 16, 20.
static inline uint workgroup_count(int dim) {
  const constant uchar* packet = (const constant uchar*)__builtin_amdgcn_dispatch_ptr();
  const uint grid = ((const constant uint*)(packet + 12))[dim];
  const uint size = ((const constant ushort*)(packet + 4))[dim];
  return (grid + size - 1) / size;
}

// 2^(x log2(e)) on the hardware's exp2 (v_exp_f32).
static inline float exp_approx(float x) { return __builtin_amdgcn_exp2f(x * 1.4426950408889634f); }

#endif  // STRATA_TESTS_HAL_KERNELS_ROCM_KERNEL_H
