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

// BurstChooser: the way a recurring piece of work (a command buffer of one
// shape) runs, in order on one thread or split, decided by bursts of both
// ways run one right after the other. Each burst's first runs are not timed
// (they pay for the switch: a helper's wake-up, the caches holding what the
// other way left; kSplitWarmRuns). The work runs split for a burst; then,
// if that took under kInOrderCandidateNanos a run, in order for a burst,
// and the faster burst decides. From then on the decided way runs untimed,
// and once in kExploreEvery runs (16 times as many when the loser was over
// 1.1 times as slow, from the second comparison on) a burst of the other way
// and then one of the decided way compare them again. What decides is the
// ratio of the two bursts of a comparison, averaged over the comparisons:
// both bursts of one see the machine of the same moment.
//
// Comparing a fresh burst with a running average of the decided way's
// earlier runs (as this did before) compared two moments of the machine:
// where its speed drifts (a neighbour on the core's sibling thread), a slow
// spell in the decided way's average made the other way win, and the
// stale average then kept it chosen until the next, 16 times rarer,
// exploration (SGEMM 256 on 2 threads, called in bursts after 50 ms idle:
// in order in 3 of 16 runs, 0.17 ms a call, where split took 0.10).
class BurstChooser {
 public:
  // An in-order burst's runs; a split burst's (kSplitBurst) are as many
  // timed ones after its kSplitWarmRuns untimed ones.
  static constexpr uint64_t kBurst = 4;
  // A split burst's first kSplitWarmRuns runs are not timed and split every
  // group: the first wakes the helpers (a worker's wake-up can outlast a
  // small command buffer's run), the second runs each group split with
  // them there, so that the groups' own choices (between running alone and
  // split, cpu-task's RunGroup) see a split as it is while the command
  // buffer otherwise runs in order. Without them a group whose early
  // splits were slow (cold caches, helpers asleep) was only ever tried
  // split again in isolation, with the helpers asleep, and the split
  // bursts ran it alone: the sample MLP at batch 1 on 2 threads compared
  // in order against in order and ran in order at 37 us a call where
  // every group split took 27. An in-order burst's first run is not timed.
  static constexpr uint64_t kSplitWarmRuns = 2;
  static constexpr uint64_t kSplitBurst = kBurst - 1 + kSplitWarmRuns;
  static constexpr uint64_t kExploreEvery = 64;
  static constexpr uint64_t kInOrderCandidateNanos = 1000000;

  struct Turn {
    bool in_order;
    bool timed;
    // Every group of the run splits, whatever its own choice (a split
    // burst's untimed first runs; see kSplitWarmRuns).
    bool split_all;
  };

  // The way of the next run. Two threads running the work at once may
  // count a run once, which only shifts the rotation.
  Turn Next() {
    const uint64_t run = runs_.load(std::memory_order_relaxed);
    runs_.store(run + 1, std::memory_order_relaxed);
    const uint64_t first_bursts = Length(false) + Length(true);
    if (run < Length(false)) return InBurst(false, run);
    if (!decided_.load(std::memory_order_relaxed)) {
      if (SplitForGood()) return {false, false, false};
      if (run < first_bursts) return InBurst(true, run - Length(false));
      Decide();
    }
    const uint64_t since = run - first_bursts, period = period_.load(std::memory_order_relaxed);
    const uint64_t phase = since % period;
    const bool in_order = in_order_.load(std::memory_order_relaxed);
    if (since < period || phase == 0) {
      if (since >= period) timings_.Reset();
      return {in_order, false, false};
    }
    // Once a period: the other way's burst, the decided way's, a decision.
    const uint64_t other = Length(!in_order), decided = Length(in_order);
    if (phase <= other) return InBurst(!in_order, phase - 1);
    if (phase <= other + decided) return InBurst(in_order, phase - 1 - other);
    if (phase == other + decided + 1) Decide();
    return {in_order_.load(std::memory_order_relaxed), false, false};
  }

  void Record(bool in_order, uint64_t nanos) { timings_.Record(in_order, nanos); }

  // Whether the way is settled (decided, or split for good), and which;
  // false while the first bursts run.
  bool Settled(bool* in_order) const {
    if (decided_.load(std::memory_order_relaxed)) {
      *in_order = in_order_.load(std::memory_order_relaxed);
      return true;
    }
    if (runs_.load(std::memory_order_relaxed) > Length(false) && SplitForGood()) {
      *in_order = false;
      return true;
    }
    return false;
  }

  void Reset() {
    timings_.Reset();
    runs_.store(0, std::memory_order_relaxed);
    in_order_.store(false, std::memory_order_relaxed);
    decided_.store(false, std::memory_order_relaxed);
    period_.store(kExploreEvery, std::memory_order_relaxed);
    ratio_.store(kOne, std::memory_order_relaxed);
    comparisons_.store(0, std::memory_order_relaxed);
  }

 private:
  // Long when split, once the split burst is timed: split for good (not
  // tried in order).
  bool SplitForGood() const { return timings_.Get(/*alone=*/false).nanos > kInOrderCandidateNanos; }

  // Decides from the two bursts' timings; where one has none (another
  // thread's runs took its turns), keeps the way decided before (split the
  // first time).
  void Decide() {
    decided_.store(true, std::memory_order_relaxed);
    const WayTimings::Timing split = timings_.Get(/*alone=*/false), in_order = timings_.Get(/*alone=*/true);
    if (split.samples == 0 || in_order.samples == 0) return;
    const uint64_t comparison = comparisons_.load(std::memory_order_relaxed) + 1;
    comparisons_.store(comparison, std::memory_order_relaxed);
    // The ratio of the two bursts (in order over split), as a running
    // average over the comparisons: where the two ways take about as long
    // (ViT at batch 1), one comparison's noise would flip the way at every
    // exploration. The first comparison only picks the way until the next
    // replaces it: its split burst meets cold caches and groups that are
    // still timing their own ways (RunGroup), and measured ViT at batch 1
    // on 2 threads 1.35 and 1.46 times as slow as in order in two processes
    // where later ones measured it 0.8 to 1.05 times; averaged in and
    // counted as clear, it kept ViT in order for over a thousand calls.
    const uint64_t ratio = std::min<uint64_t>(uint64_t{in_order.nanos} * kOne / split.nanos, 1000 * kOne);
    const uint64_t old = ratio_.load(std::memory_order_relaxed);
    const uint64_t average = comparison <= 2 ? ratio : (3 * old + ratio) / 4;
    ratio_.store(average, std::memory_order_relaxed);
    in_order_.store(average < kOne, std::memory_order_relaxed);
    // Over 1.1 times as slow is clear: each exploration of the loser costs
    // a burst of it, which at 1.2 times (ViT at batch 1 split) and once in
    // 64 runs was about 1 % of the time.
    const bool clear = comparison > 1 && (10 * average > 11 * kOne || 11 * average < 10 * kOne);
    period_.store(clear ? 16 * kExploreEvery : kExploreEvery, std::memory_order_relaxed);
  }

  static constexpr uint64_t kOne = 1024;  // a ratio of 1 in ratio_

  static constexpr uint64_t Length(bool in_order) { return in_order ? kBurst : kSplitBurst; }
  static Turn InBurst(bool in_order, uint64_t index) {
    const uint64_t warm = in_order ? 1 : kSplitWarmRuns;
    return {in_order, index >= warm, !in_order && index < warm};
  }

  WayTimings timings_;
  std::atomic<uint64_t> runs_{0};
  std::atomic<bool> in_order_{false};
  std::atomic<bool> decided_{false};
  std::atomic<uint64_t> period_{kExploreEvery};
  std::atomic<uint64_t> ratio_{kOne};
  // Comparisons made (Decide).
  std::atomic<uint64_t> comparisons_{0};
};

}  // namespace strata::cpu
