// Search strategies propose schedules for one program and are told the measured results. Proposals are
// reproducible: the same program, seed and history give the same sequence, which is what lets an
// interrupted tuning run resume without measuring anything twice.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "ir/program.h"
#include "ir/schedule.h"
#include "tuner/schedule_sampler.h"

namespace ingot {

struct TrialResult {
  Schedule schedule;
  std::optional<double> seconds;  // median run time, or nullopt for a failed candidate
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Up to n schedules never proposed before; fewer when the space is exhausted.
  virtual std::vector<Schedule> propose(int n) = 0;
  virtual void tell(const std::vector<TrialResult>& results) = 0;
};

// Random sampling of valid schedules (tuner/schedule_sampler.h), without repeats. It does not learn from
// results, so its sequence depends only on the program and the seed.
class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(Program program, uint64_t seed, SamplerOptions options = {});
  std::vector<Schedule> propose(int n) override;
  void tell(const std::vector<TrialResult>&) override {}

 private:
  Program program_;
  std::mt19937_64 rng_;
  SamplerOptions options_;
  std::set<uint64_t> proposed_;
};

}  // namespace ingot
