// BurstChooser (drivers/cpu/way_timings.h): the way cpu-task runs a command
// buffer of one shape, in order or split, decided by bursts of both ways run
// one after the other.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "drivers/cpu/way_timings.h"

namespace strata::cpu {
namespace {

using Turn = BurstChooser::Turn;
constexpr uint64_t kBurst = BurstChooser::kBurst;
constexpr uint64_t kSplitBurst = BurstChooser::kSplitBurst;
constexpr uint64_t kPeriod = BurstChooser::kExploreEvery;

// Runs `count` runs in which a split run takes `split` ns and one in order
// `in_order` ns; returns the ways taken (true: in order).
std::vector<bool> Run(BurstChooser& chooser, uint64_t count, uint64_t split, uint64_t in_order,
                      uint64_t* timed = nullptr) {
  std::vector<bool> ways;
  for (uint64_t i = 0; i < count; ++i) {
    const Turn turn = chooser.Next();
    if (turn.timed) {
      chooser.Record(turn.in_order, turn.in_order ? in_order : split);
      if (timed) ++*timed;
    }
    ways.push_back(turn.in_order);
  }
  return ways;
}

std::vector<bool> Ways(std::initializer_list<std::pair<uint64_t, bool>> runs) {
  std::vector<bool> ways;
  for (auto [count, in_order] : runs) ways.insert(ways.end(), count, in_order);
  return ways;
}

TEST_CASE("burst chooser: a burst split, one in order, then the faster way") {
  BurstChooser chooser;
  uint64_t timed = 0;
  // Split faster: split, in order, then split.
  CHECK(Run(chooser, kSplitBurst + kBurst + 10, 100, 150, &timed) ==
        Ways({{kSplitBurst, false}, {kBurst, true}, {10, false}}));
  // The first runs of each burst are not timed, nor the decided way's runs.
  CHECK(timed == 2 * (kBurst - 1));

  BurstChooser slower_split;
  CHECK(Run(slower_split, kSplitBurst + kBurst + 10, 300, 100) ==
        Ways({{kSplitBurst, false}, {kBurst, true}, {10, true}}));
}

TEST_CASE("burst chooser: long when split, split for good") {
  BurstChooser chooser;
  uint64_t timed = 0;
  const uint64_t long_run = BurstChooser::kInOrderCandidateNanos + 1;
  const std::vector<bool> ways = Run(chooser, 40 * kPeriod, long_run, 1, &timed);
  CHECK(ways == std::vector<bool>(40 * kPeriod, false));
  CHECK(timed == kBurst - 1);
}

TEST_CASE("burst chooser: explorations compare both ways at the same moment") {
  BurstChooser chooser;
  // Split decided (100 against 105: within 1.1 times, explored every period).
  Run(chooser, kSplitBurst + kBurst, 100, 105);
  // The rest of the first period: split, untimed.
  uint64_t timed = 0;
  CHECK(Run(chooser, kPeriod, 100, 105, &timed) == std::vector<bool>(kPeriod, false));
  CHECK(timed == 0);
  // The second comparison, at the start of the second period, replaces the
  // first; both say split.
  CHECK(Run(chooser, kPeriod, 100, 105) ==
        Ways({{1, false}, {kBurst, true}, {kSplitBurst, false}, {kPeriod - kBurst - kSplitBurst - 1, false}}));
  // The machine slows down while split runs, and in order is now faster at
  // the same moment (172 against 180). Each period explores (after one run
  // the decided way, a burst in order, then one split); the bursts' ratios
  // move the average, so that one comparison's noise does not flip the
  // way: it changes at the third.
  CHECK(Run(chooser, kBurst + kSplitBurst + 2, 180, 172) ==
        Ways({{1, false}, {kBurst, true}, {kSplitBurst, false}, {1, false}}));
  Run(chooser, kPeriod - kBurst - kSplitBurst - 2, 180, 172);
  CHECK(Run(chooser, kPeriod, 180, 172).back() == false);
  const std::vector<bool> third = Run(chooser, kPeriod, 180, 172);
  CHECK(third == Ways({{1, false}, {kBurst, true}, {kSplitBurst, false}, {kPeriod - kBurst - kSplitBurst - 1, true}}));
  // Calm again, split faster (100 against 105): the next exploration (a
  // burst split, then one in order) takes it back.
  CHECK(Run(chooser, kPeriod, 100, 105) ==
        Ways({{1, true}, {kSplitBurst, false}, {kBurst, true}, {kPeriod - kSplitBurst - kBurst - 1, false}}));
}

TEST_CASE("burst chooser: the second comparison replaces the first") {
  // The first bursts meet cold caches: split measures 3 times as slow and
  // in order is picked, yet not as a clear winner.
  BurstChooser chooser;
  CHECK(Run(chooser, kSplitBurst + kBurst + kPeriod, 300, 100) ==
        Ways({{kSplitBurst, false}, {kBurst, true}, {kPeriod, true}}));
  // Warm, split is 1.2 times as fast. The next period's comparison decides
  // alone (averaged with the first, the way would stay in order).
  CHECK(Run(chooser, kPeriod, 100, 120) ==
        Ways({{1, true}, {kSplitBurst, false}, {kBurst, true}, {kPeriod - kSplitBurst - kBurst - 1, false}}));
  // And, 1.2 times being clear, the next exploration is at the next
  // multiple of 16 periods.
  const std::vector<bool> ways = Run(chooser, 14 * kPeriod, 100, 120);
  CHECK(std::count(ways.begin(), ways.end(), true) == 0);
  CHECK(Run(chooser, 1 + kBurst + kSplitBurst, 100, 120) == Ways({{1, false}, {kBurst, true}, {kSplitBurst, false}}));
}

TEST_CASE("burst chooser: a clear loser is tried 16 times as rarely") {
  // In order 1.2 times as slow (over 1.1: clear), from the second
  // comparison on: the first one's period explores as usual.
  BurstChooser chooser;
  Run(chooser, kSplitBurst + kBurst, 100, 120);
  CHECK(Run(chooser, kPeriod, 100, 120) == std::vector<bool>(kPeriod, false));
  CHECK(Run(chooser, kPeriod, 100, 120) ==
        Ways({{1, false}, {kBurst, true}, {kSplitBurst, false}, {kPeriod - kBurst - kSplitBurst - 1, false}}));
  // The next exploration: at the next multiple of 16 periods.
  const std::vector<bool> ways = Run(chooser, 14 * kPeriod, 100, 120);
  CHECK(std::count(ways.begin(), ways.end(), true) == 0);
  const std::vector<bool> next = Run(chooser, 1 + kBurst + kSplitBurst, 100, 120);
  CHECK(next == Ways({{1, false}, {kBurst, true}, {kSplitBurst, false}}));
  // 1.08 times as slow is not clear: explored in the first period after.
  BurstChooser close;
  Run(close, kSplitBurst + kBurst, 100, 108);
  const std::vector<bool> close_ways = Run(close, kPeriod + kBurst + kSplitBurst + 1, 100, 108);
  CHECK(std::count(close_ways.begin(), close_ways.end(), true) == kBurst);
}

TEST_CASE("burst chooser: settled once decided, or split for good") {
  BurstChooser chooser;
  bool in_order = false;
  CHECK(!chooser.Settled(&in_order));
  Run(chooser, kSplitBurst + kBurst, 300, 100);  // in order 3 times as fast
  CHECK(!chooser.Settled(&in_order));  // decided by the next run
  Run(chooser, 1, 300, 100);
  CHECK(chooser.Settled(&in_order));
  CHECK(in_order);

  BurstChooser long_split;
  Run(long_split, kSplitBurst, BurstChooser::kInOrderCandidateNanos + 1, 1);
  CHECK(!long_split.Settled(&in_order));
  Run(long_split, 1, BurstChooser::kInOrderCandidateNanos + 1, 1);
  in_order = true;
  CHECK(long_split.Settled(&in_order));
  CHECK(!in_order);
}

TEST_CASE("burst chooser: Reset starts anew") {
  BurstChooser chooser;
  Run(chooser, kSplitBurst + kBurst + 3, 300, 100);
  chooser.Reset();
  CHECK(Run(chooser, kSplitBurst + kBurst + 3, 100, 300) == Ways({{kSplitBurst, false}, {kBurst, true}, {3, false}}));
}

TEST_CASE("burst chooser: a split burst's untimed first runs split every group") {
  // In order decided (1.05 times as fast: not clear), so that each
  // period's exploration starts with a split burst.
  BurstChooser chooser;
  std::vector<int> split_all, timed;
  for (uint64_t i = 0; i < kSplitBurst + kBurst + 2 * kPeriod; ++i) {
    const Turn turn = chooser.Next();
    if (turn.timed) chooser.Record(turn.in_order, turn.in_order ? 100 : 105);
    if (turn.split_all) {
      CHECK(!turn.in_order);
      CHECK(!turn.timed);
      split_all.push_back(static_cast<int>(i));
    }
    if (turn.timed && !turn.in_order) timed.push_back(static_cast<int>(i));
  }
  bool in_order = false;
  CHECK(chooser.Settled(&in_order));
  CHECK(in_order);
  // The first burst (runs 0 to kSplitBurst - 1) and the exploration of the
  // second period (after its one run in order).
  const int second = static_cast<int>(kSplitBurst + kBurst + kPeriod + 1);
  CHECK(split_all == std::vector<int>{0, 1, second, second + 1});
  CHECK(timed == std::vector<int>{2, 3, 4, second + 2, second + 3, second + 4});
}

}  // namespace
}  // namespace strata::cpu
