#include "runtime/repeat_timing.h"

#include <chrono>

namespace ingot {

std::vector<double> time_repeats(const std::function<void()>& run, const RepeatOptions& options) {
  using Clock = std::chrono::steady_clock;
  for (int w = 0; w < options.warmup_runs; ++w) run();
  std::vector<double> seconds;
  Clock::time_point started = Clock::now();
  while (int(seconds.size()) < options.max_repeats) {
    Clock::time_point t0 = Clock::now();
    run();
    Clock::time_point t1 = Clock::now();
    seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    double spent_ms = std::chrono::duration<double, std::milli>(t1 - started).count();
    if (int(seconds.size()) >= options.min_repeats && spent_ms >= options.min_repeat_ms) break;
  }
  return seconds;
}

}  // namespace ingot
