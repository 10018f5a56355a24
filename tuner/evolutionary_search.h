// The model-guided evolutionary search (as Ansor's): a population of schedules, started from the fixed strategy
// schedule, the best candidates measured before and random sketch samples, evolves by mutation (one decision
// changed, space/schedule_mutation.h) and crossover (stages of two parents mixed); a learned cost model ranks the
// population for a few generations, and the best it predicts, less what was proposed before, plus an epsilon share
// of fresh samples, are proposed. Measurements retrain the model. Without a trained model (warm-up, or no model) the
// measured times rank the parents instead. Same seed, same seeds and same results told: same proposals.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"
#include "costmodel/xgboost_cost_model.h"
#include "space/space_generator.h"
#include "tuner/search_strategy.h"

namespace ingot {

struct EvolutionOptions {
  int population = 64;                 // schedules kept per generation
  int generations = 4;                 // of model-ranked evolution per batch (once the model has learned)
  double mutation_probability = 0.85;  // of a child being a mutation; the rest are crossovers
  double epsilon = 0.1;                // share of each batch drawn fresh from the space
  int simd_fp32_lanes = 16;            // the target's; mutations re-derive explicit vectors for it
  bool operator==(const EvolutionOptions&) const = default;
};

// Where the search starts: the fixed schedule (proposed first unless it was measured before) and schedules
// measured before (parents from the start, never proposed again).
struct EvolutionSeeds {
  std::optional<Schedule> fixed;
  std::vector<MeasuredSchedule> measured;
};

class EvolutionarySearch final : public SearchStrategy {
 public:
  // model may be null: the search then ranks only by measured times (the bench's "evolutionary without the model").
  EvolutionarySearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed, EvolutionSeeds seeds,
                     std::shared_ptr<XGBoostCostModel> model, std::string workload_name, EvolutionOptions options = {});
  std::vector<Schedule> propose(int n) override;
  // Keeps the batch's correct results as parents and teaches them to the model (results measured before included,
  // in order, so a resumed run's search grows as the interrupted one's did).
  void tell(const std::vector<TrialResult>& results) override;
  const XGBoostCostModel* learned_model() const override { return model_.get(); }
  std::optional<double> last_batch_accuracy() const override { return last_batch_accuracy_; }
  std::optional<double> reference_seconds() const override { return fixed_seconds_; }
  std::optional<Schedule> reference_schedule() const override { return seeds_.fixed; }

  // A schedule of the population.
  struct Member {
    Schedule schedule;
    uint64_t hash = 0;
    double fitness = 0;  // higher is better: the model's score, or minus the measured time
  };

 private:
  bool model_ranks() const { return model_ && model_->trained(); }
  std::vector<Member> parents();
  std::vector<Member> evolve_by_model(std::vector<Member> population);
  std::vector<Schedule> children(const std::vector<Member>& parents, int count, std::set<uint64_t>& seen);
  const Member& tournament(const std::vector<Member>& members);
  void score(std::vector<Member>& members);

  std::shared_ptr<const SpaceGenerator> space_;
  std::mt19937_64 rng_;
  EvolutionSeeds seeds_;
  std::shared_ptr<XGBoostCostModel> model_;
  std::string workload_name_;
  EvolutionOptions options_;
  std::set<uint64_t> proposed_;                 // proposed or measured before: never proposed (again)
  std::vector<Member> measured_;                // correct results, in the order told
  std::map<uint64_t, double> proposed_scores_;  // the model's score of each proposal, when it had one
  std::map<uint64_t, double> score_cache_;      // scores of the current model generation
  int64_t scored_generation_ = -1;
  std::optional<double> last_batch_accuracy_;
  std::optional<double> fixed_seconds_;
};

}  // namespace ingot
