// The learned cost model's costs where the search pays them: featurizing and scoring 10,000 sampled 512^3 matmul
// candidates (lowered outside the timed loop; lowering is timed on its own), and training on 10,000 candidate rows
// in 50 query groups. Labels are synthetic (a function of the rows): only the time is measured here; the model's
// accuracy on real measurements is `ingot costmodel eval`'s (docs/costmodel.md).
#include <benchmark/benchmark.h>

#include <cmath>
#include <numeric>
#include <random>

#include "costmodel/candidate_features.h"
#include "costmodel/xgboost_cost_model.h"
#include "costmodel/xgboost_model.h"
#include "lower/kernels.h"
#include "space/schedule_sampler.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

constexpr int kCandidates = 10000;

const Target& host_cpu() {
  static const Target target = resolve_target("cpu");
  return target;
}

const Program& matmul512() {
  static const Program program = make_workload("matmul", {});
  return program;
}

const std::vector<Schedule>& schedules() {
  static const std::vector<Schedule> all = [] {
    std::mt19937_64 rng(1);
    std::vector<Schedule> out;
    for (int i = 0; i < kCandidates; ++i) out.push_back(sample_schedule(matmul512(), rng));
    return out;
  }();
  return all;
}

const std::vector<LoopFunction>& lowered() {
  static const std::vector<LoopFunction> all = [] {
    std::vector<LoopFunction> out;
    for (const Schedule& s : schedules()) out.push_back(lower_as_compiled(matmul512(), s, host_cpu()));
    return out;
  }();
  return all;
}

std::vector<float> featurize(const LoopFunction& f) {
  return aggregate_stage_features(extract_stage_features(f, host_cpu()), int64_t(kernel_bodies(f.body).size()));
}

// Rows of every candidate, labelled by a synthetic function of them, in groups of 200.
const TrainingSet& training_set() {
  static const TrainingSet set = [] {
    TrainingSet t;
    t.columns = int(candidate_feature_names().size());
    for (const LoopFunction& f : lowered()) {
      std::vector<float> row = featurize(f);
      t.labels.push_back(float(std::exp2(-0.01 * std::accumulate(row.begin(), row.end(), 0.0))));
      t.values.insert(t.values.end(), row.begin(), row.end());
    }
    t.group_sizes.assign(kCandidates / 200, 200);
    return t;
  }();
  return set;
}

void BM_Lower10000Matmul512(benchmark::State& state) {
  for (auto _ : state)
    for (const Schedule& s : schedules()) benchmark::DoNotOptimize(lower_as_compiled(matmul512(), s, host_cpu()));
  state.SetLabel("sampled 512^3 matmul schedules, lower + merge_parallel_stages");
}
BENCHMARK(BM_Lower10000Matmul512)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_FeaturizeAndPredict10000Matmul512(benchmark::State& state) {
  const XGBoostParams params = XGBoostCostModelOptions().params;
  const XGBoostModel model = XGBoostModel::train(training_set(), params);
  for (auto _ : state) {
    std::vector<float> values;
    values.reserve(size_t(kCandidates) * candidate_feature_names().size());
    for (const LoopFunction& f : lowered()) {
      std::vector<float> row = featurize(f);
      values.insert(values.end(), row.begin(), row.end());
    }
    benchmark::DoNotOptimize(model.predict(values.data(), lowered().size()));
  }
  state.SetLabel("10,000 lowered candidates: features, aggregation, XGBoost prediction");
}
BENCHMARK(BM_FeaturizeAndPredict10000Matmul512)->Unit(benchmark::kMillisecond);

void BM_Train10000CandidateRows(benchmark::State& state) {
  const XGBoostParams params = XGBoostCostModelOptions().params;
  for (auto _ : state) benchmark::DoNotOptimize(XGBoostModel::train(training_set(), params));
  state.SetLabel("the model's parameters " + params.to_json() + ", 50 groups of 200, " +
                 std::to_string(candidate_feature_names().size()) + " columns");
}
BENCHMARK(BM_Train10000CandidateRows)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ingot
