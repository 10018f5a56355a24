// Time to extract the cost model's stage features (costmodel/features.h) from lowered programs: the paper LSTM
// under the `global` strategy (7992 stores, merged into a few rows) and 512^3 matmul candidates (the hand schedule
// and a sampled one), each lowered once outside the timed loop. The search featurizes every candidate it ranks.
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "costmodel/features.h"
#include "lower/lower.h"
#include "space/hand_schedules.h"
#include "space/schedule_sampler.h"
#include "space/strategy_schedule.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

const Target& host_cpu() {
  static const Target target = resolve_target("cpu");
  return target;
}

int64_t store_count(const LoopFunction& f) {
  int64_t stores = 0;
  for_each_stmt(f.body, [&](const Stmt& s) { stores += as<StoreNode>(s) != nullptr; });
  return stores;
}

void featurize(benchmark::State& state, const LoopFunction& f) {
  size_t rows = 0;
  for (auto _ : state) {
    std::vector<StageFeatures> features = extract_stage_features(f, host_cpu());
    rows = features.size();
    benchmark::DoNotOptimize(features.data());
  }
  state.SetLabel(std::to_string(store_count(f)) + " stores, " + std::to_string(rows) + " rows");
}

void BM_FeaturesPaperLstmGlobal(benchmark::State& state) {
  static const LoopFunction lowered = [] {
    Program p = make_workload("lstm", {});
    return lower(p, make_strategy_program(p, "global", host_cpu()).schedule);
  }();
  featurize(state, lowered);
}
BENCHMARK(BM_FeaturesPaperLstmGlobal)->Unit(benchmark::kMillisecond);

void BM_FeaturesMatmul512Hand(benchmark::State& state) {
  static const LoopFunction lowered = [] {
    Program p = make_workload("matmul", {});
    return lower(p, hand_schedule(p));
  }();
  featurize(state, lowered);
}
BENCHMARK(BM_FeaturesMatmul512Hand)->Unit(benchmark::kMicrosecond);

void BM_FeaturesMatmul512Sampled(benchmark::State& state) {
  static const LoopFunction lowered = [] {
    Program p = make_workload("matmul", {});
    std::mt19937_64 rng(1);
    return lower(p, sample_schedule(p, rng));
  }();
  featurize(state, lowered);
}
BENCHMARK(BM_FeaturesMatmul512Sampled)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ingot
