#include "tuner/search_strategy.h"

namespace ingot {

namespace {
// After this many samples in a row that were all proposed before, the space counts as exhausted.
constexpr int kMaxRepeatsInARow = 200;
}  // namespace

RandomSearch::RandomSearch(Program program, uint64_t seed, SamplerOptions options)
    : program_(std::move(program)), rng_(seed), options_(options) {}

std::vector<Schedule> RandomSearch::propose(int n) {
  std::vector<Schedule> out;
  int repeats = 0;
  while (int(out.size()) < n && repeats < kMaxRepeatsInARow) {
    Schedule s = sample_schedule(program_, rng_, options_);
    if (!proposed_.insert(s.hash()).second) {
      ++repeats;
      continue;
    }
    repeats = 0;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ingot
