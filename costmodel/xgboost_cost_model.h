// The learned cost model: gradient-boosted trees (costmodel/xgboost_model.h) over candidate features
// (costmodel/candidate_features.h), trained with a ranking loss on the candidates measured so far, one query group
// per workload. Before it has learned from warmup_samples measurements it scores every schedule 0, so a search
// ranking by it keeps its own order. One model serves one target: features and run times of other targets differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/target.h"
#include "costmodel/cost_model.h"
#include "costmodel/evaluation.h"
#include "costmodel/samples.h"
#include "costmodel/xgboost_model.h"

namespace ingot {

struct XGBoostCostModelOptions {
  XGBoostParams params = default_params();
  int64_t warmup_samples = 32;  // correct measurements before the first training
  // Share of the samples held out to score each retraining (its metrics); 0 skips that check and its second
  // training.
  double holdout = 0.2;

  // One training thread: XGBoost's rank:pairwise samples its pairs per thread, so the thread count is part of what
  // makes a model (and the search it ranks for) reproducible on every machine. Trees of depth 6 and 32 histogram bins
  // rank the task data set as well as depth 8 to 10, 200 to 300 rounds and 64 bins did, in a fifth of the time; 70
  // rounds, not 100, keep training 10,000 rows under 2 s with 16 pairs per row (held-out accuracy 0.004 lower;
  // docs/costmodel.md, "Bench").
  static XGBoostParams default_params() {
    XGBoostParams params;
    params.threads = 1;
    params.max_depth = 6;
    params.rounds = 70;
    params.max_bin = 32;
    return params;
  }
};

class XGBoostCostModel final : public CostModel {
 public:
  explicit XGBoostCostModel(Target target, XGBoostCostModelOptions options = {});

  // Scores by the trained model (higher = predicted faster); all 0 before training. A schedule lowering refuses
  // scores below every valid one.
  std::vector<double> predict(const Program& program, const std::vector<Schedule>& schedules) const override;
  // Learns the correct measurements (failed ones carry no run time to rank) and retrains once warmup_samples are
  // there.
  void update(const Program& program, const std::vector<MeasuredSchedule>& measured) override;
  void save(const std::string& path) const override;
  void load(const std::string& path) override;

  // Adds samples without retraining (a resumed run's measurements, a database's data set); a correct measurement of
  // a schedule of program taking seconds. Throws ScheduleError when the schedule does not lower.
  void add_measured(const Program& program, const std::string& workload_name, const Schedule& schedule, double seconds);
  // Trains on every sample now (warm-up or not) and, with a holdout share, scores a training on the rest first.
  // Throws std::invalid_argument when there are no samples.
  void retrain();

  bool trained() const { return model_.has_value(); }
  int64_t sample_count() const { return ingot::sample_count(samples_); }
  const std::vector<SampleGroup>& samples() const { return samples_; }
  // The held-out metrics of the last retraining, when it made them.
  const std::optional<RankingMetrics>& last_metrics() const { return last_metrics_; }
  const XGBoostCostModelOptions& options() const { return options_; }
  const Target& target() const { return target_; }
  // Samples the current trees were trained on (0 before training; a loaded model's count).
  int64_t trained_samples() const { return trained_samples_; }
  // How many times trees were trained or loaded: a caller that stores the model compares it with what it stored.
  int64_t generation() const { return generation_; }

  // The model as JSON: {"format": "ingot-xgboost-cost-model", "feature_set_version", "columns", "samples",
  // "params", "booster": XGBoost's JSON}. Throws std::logic_error before training.
  std::string to_json() const;
  // Replaces the trees (not the samples) by a model to_json wrote. Throws CostModelError, naming what is wrong, for
  // text that is not such a model, or for another feature-set version or width: a model of other features would
  // rank by the wrong columns.
  void load_json(const std::string& json);

 private:
  Target target_;
  XGBoostCostModelOptions options_;
  std::vector<SampleGroup> samples_;
  std::optional<XGBoostModel> model_;
  std::optional<RankingMetrics> last_metrics_;
  int64_t trained_samples_ = 0;
  int64_t generation_ = 0;
};

// The feature-set version a to_json model was made with; throws CostModelError when the text is not such a model.
int model_feature_set_version(const std::string& json);

}  // namespace ingot
