#include "costmodel/evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

namespace ingot {
namespace {

// Groups whose run time is a known function of two of six columns, shared by every group: a model that learns it
// ranks held-out candidates and whole left-out groups well.
std::vector<SampleGroup> synthetic_groups(int groups, int per_group, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(0, 8);
  std::vector<SampleGroup> out;
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < per_group; ++i) {
      std::vector<float> row(6);
      for (float& v : row) v = value(rng);
      const double seconds = std::exp2(0.6 * row[1] - 0.4 * row[4] + 0.3 * g);
      add_sample(out, "g" + std::to_string(g), "group " + std::to_string(g), row, seconds);
    }
  return out;
}

XGBoostParams quick_params() {
  XGBoostParams params;
  params.rounds = 60;
  params.threads = 1;
  return params;
}

TEST(Evaluation, HeldOutCandidatesOfSeenGroupsAreRanked) {
  ModelEvaluation e = evaluate_held_out(synthetic_groups(3, 80, 1), quick_params(), 0.25, 7);
  EXPECT_EQ(e.per_group.size(), 3u);
  EXPECT_EQ(e.overall.candidates, 60);  // a quarter of each group
  EXPECT_EQ(e.training_rows, 180);
  EXPECT_GT(e.overall.pairwise_accuracy, 0.85);
  EXPECT_GT(e.overall.kendall_tau, 0.7);
}

TEST(Evaluation, LeftOutGroupsAreRankedByWhatTheOthersTaught) {
  ModelEvaluation e = evaluate_leave_one_group_out(synthetic_groups(3, 60, 2), quick_params());
  EXPECT_EQ(e.per_group.size(), 3u);
  EXPECT_EQ(e.overall.candidates, 180);
  EXPECT_GT(e.overall.pairwise_accuracy, 0.85);
}

TEST(Evaluation, TheSameSeedSplitsTheSameWay) {
  std::vector<SampleGroup> groups = synthetic_groups(2, 40, 3);
  ModelEvaluation a = evaluate_held_out(groups, quick_params(), 0.2, 5);
  ModelEvaluation b = evaluate_held_out(groups, quick_params(), 0.2, 5);
  EXPECT_EQ(metrics_json(a.overall), metrics_json(b.overall));
}

TEST(Evaluation, RefusesSharesAndSetsItCannotUse) {
  std::vector<SampleGroup> groups = synthetic_groups(2, 10, 4);
  EXPECT_THROW(evaluate_held_out(groups, quick_params(), 0.0, 1), std::invalid_argument);
  EXPECT_THROW(evaluate_held_out(groups, quick_params(), 1.0, 1), std::invalid_argument);
  EXPECT_THROW(evaluate_leave_one_group_out({groups[0]}, quick_params()), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
