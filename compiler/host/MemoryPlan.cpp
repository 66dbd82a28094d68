//===- MemoryPlan.cpp - Pack transient buffers by lifetime ----------------===//

#include "compiler/host/MemoryPlan.h"

#include <algorithm>
#include <numeric>

#include "llvm/Support/MathExtras.h"

namespace strata::host {

ArenaPlan planArena(llvm::ArrayRef<Lifetime> buffers, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), -1);
  llvm::SmallVector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  llvm::SmallVector<size_t> placed;
  for (size_t i : order) {
    const Lifetime &buffer = buffers[i];
    // Byte ranges of the placed buffers alive at the same time, by offset.
    llvm::SmallVector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed)
      if (buffers[j].first <= buffer.last && buffer.first <= buffers[j].last)
        busy.push_back({plan.offsets[j], plan.offsets[j] + buffers[j].bytes});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + buffer.bytes <= begin)
        break;
      offset = std::max(offset,
                        static_cast<int64_t>(llvm::alignTo(end, alignment)));
    }
    plan.offsets[i] = offset;
    plan.size = std::max(plan.size, offset + buffer.bytes);
    placed.push_back(i);
  }
  plan.size = llvm::alignTo(plan.size, alignment);
  return plan;
}

} // namespace strata::host
