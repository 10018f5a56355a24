// XGBoostModel at the learned cost model's size (issue 16): training on 10,000 rows x 300 columns in query groups
// of 200 with the default parameters (200 rounds, depth 8), and predicting 10,000 rows. Wall time, since XGBoost
// runs an OpenMP team. Arguments: objective (0 rank:pairwise, 1 reg:squarederror), threads (0: all cores), max_bin.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "costmodel/xgboost_model.h"

namespace ingot {
namespace {

constexpr int kRows = 10000, kColumns = 300;
constexpr unsigned kGroupSize = 200;

// Rows like schedule features: a third small integers (log2 of extents and tile sizes), a third fractions, a third
// mostly zero; the label (a run's speed) depends on a few columns of each kind, with noise.
TrainingSet feature_like_set(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> log_extent(0, 12);
  std::uniform_real_distribution<float> fraction(0.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  TrainingSet set;
  set.columns = kColumns;
  set.values.reserve(size_t(kRows) * kColumns);
  for (int row = 0; row < kRows; ++row) {
    for (int column = 0; column < kColumns; ++column) {
      if (column % 3 == 0) set.values.push_back(float(log_extent(rng)));
      if (column % 3 == 1) set.values.push_back(fraction(rng));
      if (column % 3 == 2) set.values.push_back(fraction(rng) < 0.8f ? 0.0f : fraction(rng));
    }
    const float* x = &set.values[size_t(row) * kColumns];
    set.labels.push_back(-std::abs(x[0] - 6) + 2 * x[4] * x[7] + x[11] - 0.5f * x[30] + noise(rng));
  }
  set.group_sizes.assign(kRows / kGroupSize, kGroupSize);
  return set;
}

XGBoostParams bench_params(const benchmark::State& state) {
  XGBoostParams params;
  params.objective = state.range(0) == 0 ? "rank:pairwise" : "reg:squarederror";
  params.threads = int(state.range(1));
  params.max_bin = int(state.range(2));
  return params;
}

// Of the pairs of rows within a group whose labels differ, the share whose scores are ordered as their labels.
double pairwise_accuracy(const std::vector<float>& scores, const TrainingSet& set) {
  size_t agreeing = 0, pairs = 0;
  for (size_t start = 0; start < set.rows(); start += kGroupSize)
    for (size_t i = start; i < start + kGroupSize; ++i)
      for (size_t j = i + 1; j < start + kGroupSize; ++j) {
        if (set.labels[i] == set.labels[j]) continue;
        ++pairs;
        agreeing += (set.labels[i] < set.labels[j]) == (scores[i] < scores[j]);
      }
  return double(agreeing) / double(pairs);
}

void BM_XGBoostTrain(benchmark::State& state) {
  const TrainingSet set = feature_like_set(1);
  const XGBoostParams params = bench_params(state);
  std::vector<float> held_out_scores;
  const TrainingSet held_out = feature_like_set(2);
  for (auto _ : state) {
    XGBoostModel model = XGBoostModel::train(set, params);
    state.PauseTiming();
    held_out_scores = model.predict(held_out.values.data(), held_out.rows());
    state.ResumeTiming();
  }
  // The speed of a setting is worth only as much as what it learns.
  state.counters["held_out_pair_accuracy"] = pairwise_accuracy(held_out_scores, held_out);
  state.SetLabel(params.objective + ", " + std::to_string(params.rounds) + " rounds, depth " +
                 std::to_string(params.max_depth) + ", " + std::to_string(params.max_bin) + " bins, threads " +
                 std::to_string(params.threads));
  state.counters["rows/s"] =
      benchmark::Counter(double(kRows) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_XGBoostTrain)
    ->Args({0, 0, 64})
    ->Args({0, 1, 64})
    ->Args({0, 0, 256})
    ->Args({1, 0, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_XGBoostPredict(benchmark::State& state) {
  const XGBoostParams params = bench_params(state);
  const XGBoostModel model = XGBoostModel::train(feature_like_set(1), params);
  const TrainingSet candidates = feature_like_set(2);
  for (auto _ : state) benchmark::DoNotOptimize(model.predict(candidates.values.data(), candidates.rows()));
  state.SetLabel(params.objective + ", threads " + std::to_string(params.threads));
  state.counters["rows/s"] =
      benchmark::Counter(double(kRows) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_XGBoostPredict)->Args({0, 0, 64})->Args({0, 1, 64})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ingot
