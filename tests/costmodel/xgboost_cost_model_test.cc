// The learned cost model end to end on real schedules: sampled matmul schedules, featurized and timed by a synthetic
// cost the features can see, are ranked on held-out schedules; warm-up, save and load, and refused models.
#include "costmodel/xgboost_cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "costmodel/candidate_features.h"
#include "costmodel/features.h"
#include "costmodel/ranking_metrics.h"
#include "space/schedule_sampler.h"
#include "tests/support/fixed_targets.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

size_t column(const std::string& name) {
  const std::vector<std::string>& names = candidate_feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::invalid_argument("no candidate feature " + name);
  return size_t(it - names.begin());
}

// A run time the features determine: more vectorized work and fewer integer operations run faster.
double synthetic_seconds(const std::vector<float>& row) {
  return std::exp2(-0.5 * row[column("sum.vectorized_float_ops")] + 0.25 * row[column("sum.int_add_sub")]);
}

std::vector<Schedule> sampled_schedules(const Program& program, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Schedule> out;
  for (int i = 0; i < n; ++i) out.push_back(sample_schedule(program, rng));
  return out;
}

XGBoostCostModelOptions quick_options() {
  XGBoostCostModelOptions options;
  options.params.rounds = 60;
  options.params.threads = 1;
  options.warmup_samples = 8;
  return options;
}

// A model trained on the given schedules of p, timed by synthetic_seconds.
XGBoostCostModel trained_model(const Program& p, const std::vector<Schedule>& schedules) {
  const Target target = test_support::avx512_cpu();
  XGBoostCostModel model(target, quick_options());
  for (const Schedule& s : schedules)
    model.add_measured(p, "mm", s, synthetic_seconds(candidate_features(p, s, target)));
  model.retrain();
  return model;
}

TEST(XGBoostCostModel, ScoresZeroUntilWarmedUp) {
  Program p = matmul(32, 32, 32);
  XGBoostCostModel model(test_support::avx512_cpu(), quick_options());
  std::vector<Schedule> schedules = sampled_schedules(p, 6, 1);
  EXPECT_EQ(model.predict(p, schedules), std::vector<double>(6, 0.0));
  std::vector<MeasuredSchedule> measured;
  for (const Schedule& s : schedules) measured.push_back({s, 1e-3});
  measured.push_back({schedules[0], std::nullopt});  // a failure: nothing to learn
  model.update(p, measured);
  EXPECT_EQ(model.sample_count(), 6);
  EXPECT_FALSE(model.trained());
}

TEST(XGBoostCostModel, RanksHeldOutSchedulesByALearnedCost) {
  Program p = matmul(64, 64, 64);
  const Target target = test_support::avx512_cpu();
  XGBoostCostModel model(target, quick_options());
  std::vector<Schedule> training = sampled_schedules(p, 160, 2), held_out = sampled_schedules(p, 60, 3);
  std::vector<MeasuredSchedule> measured;
  for (const Schedule& s : training) measured.push_back({s, synthetic_seconds(candidate_features(p, s, target))});
  model.update(p, measured);
  ASSERT_TRUE(model.trained());
  ASSERT_TRUE(model.last_metrics().has_value());
  RankedGroup group;
  group.scores = model.predict(p, held_out);
  for (const Schedule& s : held_out) group.seconds.push_back(synthetic_seconds(candidate_features(p, s, target)));
  RankingMetrics metrics = ranking_metrics({group});
  EXPECT_GT(metrics.pairwise_accuracy, 0.85);  // random scores rank half the pairs
  EXPECT_GT(metrics.top5, 0.9);
}

TEST(XGBoostCostModel, SavesAndLoadsTheSameScores) {
  Program p = matmul(32, 32, 32);
  const Target target = test_support::avx512_cpu();
  std::vector<Schedule> schedules = sampled_schedules(p, 30, 4);
  XGBoostCostModel model = trained_model(p, schedules);
  XGBoostCostModel loaded(target, quick_options());
  loaded.load_json(model.to_json());
  EXPECT_TRUE(loaded.trained());
  EXPECT_EQ(loaded.trained_samples(), 30);
  EXPECT_EQ(loaded.predict(p, schedules), model.predict(p, schedules));
  EXPECT_EQ(model_feature_set_version(model.to_json()), kFeatureSetVersion);
}

TEST(XGBoostCostModel, RefusesModelsOfOtherFeaturesOrCorruptText) {
  Program p = matmul(16, 16, 16);
  const Target target = test_support::avx512_cpu();
  XGBoostCostModel model = trained_model(p, sampled_schedules(p, 12, 5));
  nlohmann::json saved = nlohmann::json::parse(model.to_json());
  XGBoostCostModel other(target, quick_options());

  nlohmann::json older = saved;
  older["feature_set_version"] = kFeatureSetVersion + 1;
  try {
    other.load_json(older.dump());
    FAIL() << "no error";
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("feature set version " + std::to_string(kFeatureSetVersion + 1)),
              std::string::npos)
        << e.what();
  }
  nlohmann::json corrupt = saved;
  corrupt["booster"] = saved["booster"].get<std::string>().substr(0, 100);
  EXPECT_THROW(other.load_json(corrupt.dump()), CostModelError);
  EXPECT_THROW(other.load_json("not json"), CostModelError);
  EXPECT_THROW(other.load_json("{\"format\": \"something else\"}"), CostModelError);
  EXPECT_FALSE(other.trained());
  EXPECT_THROW(XGBoostCostModel(target).to_json(), std::logic_error);
}

TEST(XGBoostCostModel, ScoresASchedulesLoweringRefusesBelowEveryOther) {
  Program p = matmul(16, 16, 16);
  std::vector<Schedule> schedules = sampled_schedules(p, 12, 6);
  XGBoostCostModel model = trained_model(p, schedules);
  Schedule invalid;
  invalid.split("C", "no_such_axis", 2);
  std::vector<double> scores = model.predict(p, {schedules[0], invalid});
  EXPECT_TRUE(std::isfinite(scores[0]));
  EXPECT_TRUE(std::isinf(scores[1]) && scores[1] < 0);
}

}  // namespace
}  // namespace ingot
