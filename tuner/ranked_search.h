// Random draws ranked by a learned cost model: each batch draws a pool of new schedules from the space, and once
// the model has learned (costmodel/xgboost_cost_model.h) proposes the ones it scores best, with a share of random
// picks from the rest so the model keeps seeing what it ranks low. Measured results train the model after every
// batch. The first step towards the model-guided search; before warm-up it proposes what RandomSearch would.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "costmodel/xgboost_cost_model.h"
#include "space/space_generator.h"
#include "tuner/search_strategy.h"

namespace ingot {

struct RankedSearchOptions {
  int pool_factor = 8;    // schedules drawn per proposal: the model picks n of n * pool_factor
  double epsilon = 0.25;  // share of each batch picked at random from the pool's rest instead of by score
};

class RankedSearch final : public SearchStrategy {
 public:
  RankedSearch(std::shared_ptr<const SpaceGenerator> space, uint64_t seed, std::shared_ptr<XGBoostCostModel> model,
               std::string workload_name, RankedSearchOptions options = {});
  std::vector<Schedule> propose(int n) override;
  // Teaches the model the batch's correct results, those measured before included (it retrains past its warm-up).
  void tell(const std::vector<TrialResult>& results) override;
  const XGBoostCostModel* learned_model() const override { return model_.get(); }
  std::optional<double> last_batch_accuracy() const override { return last_batch_accuracy_; }

 private:
  std::shared_ptr<const SpaceGenerator> space_;
  std::mt19937_64 rng_;
  std::shared_ptr<XGBoostCostModel> model_;
  std::string workload_name_;
  RankedSearchOptions options_;
  std::set<uint64_t> proposed_;
  std::map<uint64_t, double> proposed_scores_;  // the model's score of each proposal, when it had one
  std::optional<double> last_batch_accuracy_;
};

}  // namespace ingot
