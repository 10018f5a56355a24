// Times a run the way every in-process measurement in ingot is taken: warm-up runs first, then timed repeats
// until both a minimum count and a minimum total time are reached (never more than a maximum count). Used by
// local_run (CPU) and cuda_run (GPU); nothing may compile while it runs.
#pragma once

#include <functional>
#include <vector>

namespace ingot {

struct RepeatOptions {
  int warmup_runs = 1;
  double min_repeat_ms = 100;
  int min_repeats = 3;
  int max_repeats = 1000;
};

// The seconds of every timed run, in order.
std::vector<double> time_repeats(const std::function<void()>& run, const RepeatOptions& options);

}  // namespace ingot
