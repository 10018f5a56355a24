#include "costmodel/candidate_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "space/schedule_sampler.h"
#include "tests/support/fixed_targets.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

size_t stage_column(const std::string& name) {
  const std::vector<std::string>& names = stage_feature_names();
  return size_t(std::find(names.begin(), names.end(), name) - names.begin());
}

float candidate_value(const std::vector<float>& row, const std::string& name) {
  const std::vector<std::string>& names = candidate_feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::invalid_argument("no candidate feature " + name);
  return row[size_t(it - names.begin())];
}

// A stage row with the given raw values (logged as the features are), every other value 0.
StageFeatures stage(const std::string& store, int64_t multiplicity,
                    const std::vector<std::pair<std::string, double>>& raw_values) {
  StageFeatures s{store, multiplicity, std::vector<float>(stage_feature_names().size(), 0.0f)};
  for (const auto& [name, value] : raw_values) s.values[stage_column(name)] = float(std::log2(1 + value));
  return s;
}

TEST(CandidateFeatures, SumsCountsMaximizesStructureAndKeepsTheHeaviestStage) {
  std::vector<StageFeatures> stages = {
      stage("small", 3, {{"float_ops", 7}, {"vector_lanes", 16}, {"target_threads", 2}}),
      stage("big", 1, {{"float_ops", 1023}, {"vector_lanes", 8}, {"target_threads", 2}}),
  };
  std::vector<float> row = aggregate_stage_features(stages, 2);
  ASSERT_EQ(row.size(), candidate_feature_names().size());
  EXPECT_FLOAT_EQ(candidate_value(row, "sum.float_ops"), std::log2(1 + 3 * 7 + 1023));
  EXPECT_FLOAT_EQ(candidate_value(row, "max.vector_lanes"), std::log2(17));
  EXPECT_FLOAT_EQ(candidate_value(row, "heaviest.float_ops"), 10);  // the big stage: 1023 ops against 3 x 7
  EXPECT_FLOAT_EQ(candidate_value(row, "heaviest.vector_lanes"), std::log2(9));
  EXPECT_FLOAT_EQ(candidate_value(row, "stages"), std::log2(5));  // 3 + 1 stores
  EXPECT_FLOAT_EQ(candidate_value(row, "kernels"), std::log2(3));
}

TEST(CandidateFeatures, EstimatesDivideWorkByTheParallelismTheTargetHas) {
  // 1024 float ops, all in 16-lane vectors, in a parallel loop of 64 iterations on a 2-thread target.
  StageFeatures s = stage("out", 1,
                          {{"float_ops", 1024},
                           {"vectorized_float_ops", 1024},
                           {"vector_lanes", 16},
                           {"parallel_extent_product", 64},
                           {"target_threads", 2},
                           {"buf0_lines", 100}});
  std::vector<float> row = aggregate_stage_features({s}, 1);
  EXPECT_NEAR(candidate_value(row, "estimated_compute"), std::log2(1 + 1024.0 / 16 / 2), 1e-4);
  EXPECT_NEAR(candidate_value(row, "estimated_lines"), std::log2(1 + 100.0 / 2), 1e-4);
  EXPECT_NEAR(candidate_value(row, "heaviest_parallelism"), std::log2(3), 1e-4);
}

TEST(CandidateFeatures, ParallelCyclesCountTheRoundsOfTheThreads) {
  // 3000 cycles over 3 parallel iterations on 2 threads: one thread runs two of them, 2000 cycles; 3000 cycles over
  // 4 iterations: 1500. A stage without a parallel loop keeps its cycles.
  auto cycles = [](double parallel_extent) {
    std::vector<std::pair<std::string, double>> values = {{"estimated_cycles", 3000}, {"target_threads", 2}};
    if (parallel_extent > 0) values.push_back({"parallel_extent_product", parallel_extent});
    std::vector<float> row = aggregate_stage_features({stage("out", 1, values)}, 1);
    return std::exp2(double(candidate_value(row, "estimated_parallel_cycles"))) - 1;
  };
  EXPECT_NEAR(cycles(3), 2000, 0.5);
  EXPECT_NEAR(cycles(4), 1500, 0.5);
  EXPECT_NEAR(cycles(0), 3000, 0.5);
  // Stores add up with their multiplicity.
  std::vector<float> row = aggregate_stage_features(
      {stage("a", 2, {{"estimated_cycles", 100}, {"target_threads", 2}}), stage("b", 1, {{"estimated_cycles", 50}})},
      1);
  EXPECT_NEAR(std::exp2(double(candidate_value(row, "estimated_parallel_cycles"))) - 1, 250, 0.1);
}

TEST(CandidateFeatures, RefusesARowOfAnotherWidth) {
  StageFeatures s{"x", 1, {1, 2, 3}};
  EXPECT_THROW(aggregate_stage_features({s}, 1), std::invalid_argument);
}

TEST(CandidateFeatures, EveryValueOfRealCandidatesIsFinite) {
  Program p = matmul_bias_relu(32, 48, 64);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 10; ++i) {
    std::vector<float> row = candidate_features(p, sample_schedule(p, rng), test_support::avx512_cpu());
    ASSERT_EQ(row.size(), candidate_feature_names().size());
    for (float v : row) EXPECT_TRUE(std::isfinite(v));
  }
}

}  // namespace
}  // namespace ingot
