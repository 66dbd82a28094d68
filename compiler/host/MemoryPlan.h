//===- MemoryPlan.h - Pack transient buffers by lifetime --------*- C++ -*-===//
//
// Places buffers with known sizes and lifetimes in one arena so that two
// buffers share bytes only when their lifetimes do not overlap. Lifetimes are
// closed intervals of op positions: a dispatch's output, defined at position
// i, never shares with an input still read at i.
//
// Greedy best fit by decreasing size: each buffer goes to the lowest offset
// that no live buffer occupies. Offsets are aligned.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_HOST_MEMORYPLAN_H
#define STRATA_COMPILER_HOST_MEMORYPLAN_H

#include <cstdint>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace strata::host {

struct Lifetime {
  int64_t first = 0; ///< position of the op that defines the buffer
  int64_t last = 0;  ///< position of its last use (>= first)
  int64_t bytes = 0;
};

struct ArenaPlan {
  llvm::SmallVector<int64_t> offsets; ///< one per Lifetime, in order
  int64_t size = 0;                   ///< arena bytes (the peak)
};

ArenaPlan planArena(llvm::ArrayRef<Lifetime> buffers, int64_t alignment = 64);

} // namespace strata::host

#endif // STRATA_COMPILER_HOST_MEMORYPLAN_H
