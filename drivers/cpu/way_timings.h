// WayTimings: how long a piece of work took when run one of two ways, by
// one thread alone or split over several, as running averages that any
// thread may read and record without a lock. cpu-task keeps them per
// entry point (for the barrier groups it leads) and per command buffer shape
// (for whole command buffers), and runs the work the way that has been
// faster.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace strata::cpu {

class WayTimings {
 public:
  // A running average of the measured runs in nanoseconds (0 until one is
  // recorded) and how many runs it has seen (at most 255).
  struct Timing {
    uint32_t nanos;
    uint32_t samples;
  };

  Timing Get(bool alone) const {
    const uint64_t word = words_[alone].load(std::memory_order_relaxed);
    return {static_cast<uint32_t>(word), static_cast<uint32_t>(word >> 32)};
  }

  // Records a run of `nanos`. A lost update (two threads recording at once)
  // only delays the average.
  void Record(bool alone, uint64_t nanos) {
    // At least 1 ns, so that a recorded way never reads as unmeasured.
    const uint64_t sample = std::clamp<uint64_t>(nanos, 1, UINT32_MAX);
    const Timing timing = Get(alone);
    const uint64_t old = timing.nanos;
    // The first sample stands alone. A faster one pulls the average halfway
    // down, a slower one an eighth of the way up: the slow outliers (a page
    // fault of a first call, a preempted core) are what the average must not
    // follow, and an early run inflated by them would otherwise keep a way
    // from being chosen until it is tried again.
    const uint64_t average = old == 0 ? sample : sample < old ? (old + sample) / 2 : (7 * old + sample) / 8;
    words_[alone].store(std::min<uint64_t>(timing.samples + 1, 255) << 32 | average, std::memory_order_relaxed);
  }

  void Reset() {
    for (std::atomic<uint64_t>& word : words_) word.store(0, std::memory_order_relaxed);
  }

 private:
  // Per way (split, alone): samples << 32 | average nanoseconds.
  std::atomic<uint64_t> words_[2] = {0, 0};
};

}  // namespace strata::cpu
