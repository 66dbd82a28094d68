//===- PaddedWindows.h - The limit of pads read through windows -*- C++ -*-===//
//
// The largest padded input (in bytes) the CPU code generator reads through
// per-workgroup windows (strata-cpu-window-padded-inputs): a kernel that is
// not split reads its window whole, from the local memory the runtime gives
// each thread. Dispatch formation only puts pads up to this size into their
// convolution's kernel; a larger one would stay a temporary there, in a
// scratch binding, and keep the kernel from being split.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_CODEGEN_PADDEDWINDOWS_H
#define STRATA_COMPILER_CODEGEN_PADDEDWINDOWS_H

#include <cstdint>

namespace strata::codegen {

inline constexpr int64_t kMaxWindowedPadBytes = int64_t{8} << 20;

} // namespace strata::codegen

#endif // STRATA_COMPILER_CODEGEN_PADDEDWINDOWS_H
