// Search strategies propose schedules for one program, drawn from a search space (space/space_generator.h), and are
// told the results of each batch (as MetaSchedule's SearchStrategy). Proposals are reproducible: the same space, seed
// and history give the same sequence, which is what lets an interrupted tuning run resume without measuring anything
// twice.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "costmodel/xgboost_cost_model.h"
#include "ir/program.h"
#include "ir/schedule.h"
#include "results/error_class.h"
#include "space/schedule_sampler.h"
#include "space/space_generator.h"
#include "tuner/candidate.h"

namespace ingot {

// What became of one proposed candidate (tuner/tuning_loop.h).
struct TrialResult {
  Candidate candidate;
  int64_t trial_index = 0;  // its position in the run's candidate sequence
  // Not measured by this run: measured before (by an earlier run or another tuner) or being measured by another
  // tuner now. error_class and seconds are then those of its first stored measurement, when there is one yet.
  bool skipped = false;
  ErrorClass error_class = ErrorClass::kNone;  // of this run's measurement, or the stored one
  std::optional<double> seconds;               // median run time of a correct measurement; nullopt otherwise
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Up to n schedules never proposed before; fewer when the space is exhausted.
  virtual std::vector<Schedule> propose(int n) = 0;
  // The results of the candidates of one batch of proposals, in sequence order, after the batch (tuning_loop.h says
  // which proposals a batch reports).
  virtual void tell(const std::vector<TrialResult>& results) = 0;
  // The learned cost model the strategy ranks by and trains, if any: the tuning loop stores it in the database each
  // time it was retrained.
  virtual const XGBoostCostModel* learned_model() const { return nullptr; }
  // The model's pairwise ranking accuracy on the last batch it scored before it was measured, when there was one.
  virtual std::optional<double> last_batch_accuracy() const { return std::nullopt; }
  // The measured time of the schedule the search starts from (the fixed strategy schedule), once it was told.
  virtual std::optional<double> reference_seconds() const { return std::nullopt; }
  // The schedule the search starts from, which its best is compared with (the fixed strategy schedule), if any.
  virtual std::optional<Schedule> reference_schedule() const { return std::nullopt; }
};

// Random draws from a space, without repeats. It does not learn from results, so its sequence depends only on the
// space and the seed.
class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed);
  // Over SamplerSpace(program, options).
  RandomSearch(Program program, uint64_t seed, SamplerOptions options = {});
  std::vector<Schedule> propose(int n) override;
  void tell(const std::vector<TrialResult>&) override {}

 private:
  std::shared_ptr<const SpaceGenerator> space_;
  std::mt19937_64 rng_;
  std::set<uint64_t> proposed_;
};

// Given schedules, each proposed once in order: measuring a few known schedules through the tuning loop (whole-model
// tuning's end-to-end comparison of the fixed and the assembled schedule).
class ListSearch : public SearchStrategy {
 public:
  // reference: what reference_schedule() answers (the end-of-run side-by-side comparison's reference).
  explicit ListSearch(std::vector<Schedule> schedules, std::optional<Schedule> reference = std::nullopt);
  std::vector<Schedule> propose(int n) override;
  void tell(const std::vector<TrialResult>& results) override;
  std::optional<Schedule> reference_schedule() const override { return reference_; }
  // Every result told, in order.
  const std::vector<TrialResult>& results() const { return results_; }

 private:
  std::vector<Schedule> schedules_;
  std::optional<Schedule> reference_;
  size_t next_ = 0;
  std::vector<TrialResult> results_;
};

}  // namespace ingot
