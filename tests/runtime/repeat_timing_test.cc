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
  EXPECT_GE(seconds.size(), 5u);  // each run takes at least 2 ms
  EXPECT_EQ(runs, int(seconds.size()));
  for (double s : seconds) EXPECT_GE(s, 0.002);
}

TEST(RepeatTiming, StopsAtTheMaximumCount) {
  std::vector<double> seconds = time_repeats([] {}, {0, 1e9, 1, 3});
  EXPECT_EQ(seconds.size(), 3u);
}

}  // namespace
}  // namespace ingot
