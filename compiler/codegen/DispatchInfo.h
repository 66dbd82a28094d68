//===- DispatchInfo.h - How the host dispatches a kernel --------*- C++ -*-===//
//
// What every code generator tells the host compiler about each kernel it
// compiled: the workgroup size, how to compute the workgroup count, and the
// scratch it takes. Header-only; shared by codegen/cpu, codegen/gpu and
// host/.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_DISPATCHINFO_H
#define STRATA_COMPILER_CODEGEN_DISPATCHINFO_H

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace strata::codegen {

struct DispatchInfo {
  std::array<uint32_t, 3> workgroupSize = {1, 1, 1};
  /// The workgroup count, when the compiler knows it; otherwise
  /// x = ceil(countFactor * product of push constants countWords /
  /// workgroupSize[0]), at most countMax (0: no limit), y = z = 1. Kernels
  /// stride over their work, so any count is correct; this one gives the
  /// most parallelism without idle workgroups.
  std::optional<std::array<uint32_t, 3>> workgroupCount;
  int64_t countFactor = 1;
  std::vector<uint32_t> countWords;
  uint32_t countMax = 0;
  /// Bytes of scratch the kernel takes as its last binding (0: none); the
  /// host provides it.
  uint64_t scratchBytes = 0;

  bool sameCount(const DispatchInfo &other) const {
    return workgroupSize[0] == other.workgroupSize[0] &&
           workgroupCount == other.workgroupCount &&
           countFactor == other.countFactor &&
           countWords == other.countWords && countMax == other.countMax;
  }
};

} // namespace strata::codegen

#endif // STRATA_COMPILER_CODEGEN_DISPATCHINFO_H
