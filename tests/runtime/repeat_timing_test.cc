// time_repeats: warm-up runs are not timed, and timing stops once both the minimum count and the minimum time are
// reached, or at the maximum count.
#include "runtime/repeat_timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace ingot {
namespace {

TEST(RepeatTiming, WarmupRunsAreNotTimed) {
  int runs = 0;
  std::vector<double> seconds = time_repeats([&] { ++runs; }, {2, 0, 5, 100});
  EXPECT_EQ(seconds.size(), 5u);
  EXPECT_EQ(runs, 7);
  for (double s : seconds) EXPECT_GE(s, 0);
}

TEST(RepeatTiming, RepeatsUntilTheMinimumTime) {
  int runs = 0;
  auto sleep_2ms = [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  std::vector<double> seconds = time_repeats(sleep_2ms, {0, 10, 1, 100});
  EXPECT_EQ(runs, int(seconds.size()));
  ASSERT_GE(seconds.size(), 2u);  // a 2 ms run cannot reach 10 ms alone
  for (double s : seconds) EXPECT_GE(s, 0.002);
  // It stopped once 10 ms had passed, long before the maximum count: the runs before the last took less than 10 ms
  // (how many runs that is depends on the machine's load).
  double before_last = 0;
  for (size_t n = 0; n + 1 < seconds.size(); ++n) before_last += seconds[n];
  EXPECT_LT(before_last, 0.010);
  EXPECT_LT(seconds.size(), 100u);
}

TEST(RepeatTiming, StopsAtTheMaximumCount) {
  std::vector<double> seconds = time_repeats([] {}, {0, 1e9, 1, 3});
  EXPECT_EQ(seconds.size(), 3u);
}

}  // namespace
}  // namespace ingot
