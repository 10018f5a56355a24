// The model-ranked random search: before warm-up it is the random search; once its model has learned, it proposes
// the schedules the model scores best; in a real tuning run its model retrains, is stored in the database, and a
// resumed run relearns what it was told and proposes the same candidates.
#include "tuner/ranked_search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <sstream>

#include "costmodel/candidate_features.h"
#include "results/database.h"
#include "tests/support/fixed_targets.h"
#include "tests/tuner/test_directory.h"
#include "tuner/measured_dataset.h"
#include "tuner/tune_job.h"
#include "tuner/tuning_loop.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

XGBoostCostModelOptions quick_options(int64_t warmup) {
  XGBoostCostModelOptions options;
  options.params.rounds = 40;
  options.params.threads = 1;
  options.warmup_samples = warmup;
  return options;
}

// A run time the features determine (the model can learn it exactly).
double synthetic_seconds(const Program& p, const Schedule& s, const Target& target) {
  std::vector<float> row = candidate_features(p, s, target);
  return std::exp2(-0.01 * std::accumulate(row.begin(), row.end(), 0.0));
}

TEST(RankedSearch, BeforeWarmUpProposesWhatTheRandomSearchDoes) {
  Program p = matmul(16, 16, 16);
  auto space = std::make_shared<SamplerSpace>(p);
  auto model = std::make_shared<XGBoostCostModel>(test_support::avx512_cpu(), quick_options(100));
  RankedSearch ranked(space, 5, model, "mm");
  RandomSearch random(space, 5);
  EXPECT_EQ(ranked.propose(4), random.propose(4));
  EXPECT_FALSE(ranked.last_batch_accuracy().has_value());
}

TEST(RankedSearch, ATrainedModelPicksWhatItScoresBestAndTheSameSeedPicksTheSame) {
  Program p = matmul(32, 32, 32);
  const Target target = test_support::avx512_cpu();
  auto space = std::make_shared<SamplerSpace>(p);
  auto model = std::make_shared<XGBoostCostModel>(target, quick_options(1));
  RandomSearch teacher(space, 99);
  for (const Schedule& s : teacher.propose(60)) model->add_measured(p, "mm", s, synthetic_seconds(p, s, target));
  model->retrain();

  RankedSearch a(space, 7, model, "mm"), b(space, 7, model, "mm");
  std::vector<Schedule> picked = a.propose(8);
  EXPECT_EQ(picked, b.propose(8));
  std::vector<Schedule> random = RandomSearch(space, 7).propose(8);
  auto mean_seconds = [&](const std::vector<Schedule>& schedules) {
    double sum = 0;
    for (const Schedule& s : schedules) sum += synthetic_seconds(p, s, target);
    return sum / double(schedules.size());
  };
  EXPECT_LT(mean_seconds(picked), mean_seconds(random));
}

class RankedTuning : public TestDirectory {};

TEST_F(RankedTuning, StoresItsRetrainedModelsAndAResumedRunProposesTheSame) {
  const std::string db_path = (dir_ / "ranked.db").string();
  const std::string config_text = R"(workload:
  name: matmul
  params: {m: 16, n: 16, k: 16}
target: {kind: cpu, threads: 1}
budget: {trials: 12}
seed: 2
database: )" + db_path + R"(
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}
search: {strategy: ranked, fusion: unfused}
)";
  // A small warm-up so that this short run trains: the job's model is the search's.
  XGBoostCostModelOptions options = quick_options(4);
  TuneJob first = make_tune_job(parse_run_config(config_text, "ranked.yaml"), "", TuneJobOptions{options});
  ASSERT_TRUE(first.cost_model);
  EXPECT_EQ(first.notes, "");  // a new database holds nothing to start from
  std::vector<std::optional<double>> accuracies;
  first.options.batch_size = 4;
  TuneSummary s = run_tune_job(first, [&](const TuneProgress& p) { accuracies.push_back(p.model_batch_accuracy); });
  EXPECT_EQ(s.measured_now, 12);
  ASSERT_TRUE(first.cost_model->trained());

  Database db = Database::open(db_path);
  std::vector<CostModelRecord> stored = db.cost_models(s.target);
  ASSERT_FALSE(stored.empty());
  EXPECT_EQ(stored.back().sample_count, first.cost_model->trained_samples());
  EXPECT_EQ(stored.back().feature_set_version, kFeatureSetVersion);
  EXPECT_EQ(stored.back().model_json, first.cost_model->to_json());
  // The batches after the first training were scored before they were measured.
  EXPECT_TRUE(std::any_of(accuracies.begin(), accuracies.end(), [](auto& a) { return a.has_value(); }));

  // Resumed with the same seed, the search relearns the stored results in order and proposes the same candidates:
  // nothing is measured again, and its model is the one the first run stored.
  TuneJob resumed = make_tune_job(parse_run_config(config_text, "ranked.yaml"), "", TuneJobOptions{options});
  EXPECT_EQ(resumed.notes, "");  // only this workload's own tuning models are stored: relearned, not loaded
  resumed.options.batch_size = 4;
  TuneSummary again = run_tune_job(resumed);
  EXPECT_EQ(again.measured_now, 0);
  EXPECT_EQ(again.skipped, 12);
  EXPECT_EQ(resumed.cost_model->to_json(), first.cost_model->to_json());
  EXPECT_EQ(db.cost_models(s.target).size(), stored.size());  // relearning stores nothing new

  // A model trained elsewhere (ingot costmodel train) is where a run starts; one of another feature set is ignored.
  CostModelRecord trained = stored.back();
  trained.trained_on = "all workloads";
  const int64_t trained_id = db.add_cost_model(trained);
  TuneJob warm = make_tune_job(parse_run_config(config_text, "ranked.yaml"));
  EXPECT_NE(warm.notes.find("starting from stored model " + std::to_string(trained_id)), std::string::npos)
      << warm.notes;
  EXPECT_TRUE(warm.cost_model->trained());
  CostModelRecord other = trained;
  other.feature_set_version = kFeatureSetVersion + 1;
  db.add_cost_model(other);
  TuneJob ignoring = make_tune_job(parse_run_config(config_text, "ranked.yaml"));
  EXPECT_NE(ignoring.notes.find("ignoring the stored model"), std::string::npos) << ignoring.notes;
  EXPECT_FALSE(ignoring.cost_model->trained());

  // The dataset loader finds the same candidates by rebuilding the workload from the run's config.
  XGBoostCostModel from_db(first.target, options);
  std::ostringstream messages;
  EXPECT_EQ(add_measured_dataset(from_db, {&db}, DatasetFilter{s.target, ""}, messages), 12);
  EXPECT_EQ(messages.str(), "");
  EXPECT_EQ(from_db.samples().front().name, "matmul");
}

// Two passes of one config (random search, same seed: the same candidates) in two databases: the loader counts each
// candidate once, with its least median of the two passes, and rebuilds the workload from the first database.
TEST_F(RankedTuning, TwoDatabasesCountEachCandidateOnceAtItsLeastMedian) {
  auto config_text = [&](const std::string& db_name) {
    return R"(workload:
  name: matmul
  params: {m: 16, n: 16, k: 16}
target: {kind: cpu, threads: 1}
budget: {trials: 6}
seed: 3
database: )" +
           (dir_ / db_name).string() + R"(
measure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}
search: {strategy: random, fusion: unfused}
)";
  };
  std::string target;
  for (const char* name : {"first.db", "second.db"}) {
    TuneJob job = make_tune_job(parse_run_config(config_text(name), "pass.yaml"));
    TuneSummary summary = run_tune_job(job);
    ASSERT_EQ(summary.measured_now, 6) << name;
    target = summary.target;
  }
  Database first = Database::open((dir_ / "first.db").string());
  Database second = Database::open((dir_ / "second.db").string());
  // One candidate measured once more in the second database, faster than either pass could: its least median must
  // come from there whatever the two passes measured.
  const MeasuredCandidate some = second.history().front();
  MeasurementRecord faster;
  faster.candidate_hash = some.candidate.hash;
  faster.run_id = some.measurement.run_id;
  faster.target_description = some.measurement.target_description;
  faster.run_seconds = {1e-9};
  second.add_measurement(faster);
  auto one = best_correct_medians(first.history(), target), two = best_correct_medians(second.history(), target);
  ASSERT_EQ(two.at(some.candidate.hash).second, 1e-9);
  ASSERT_EQ(one.size(), 6u);
  std::vector<double> least;  // in hash order, as the loader adds them
  for (const auto& [hash, measured] : one) {
    ASSERT_EQ(two.count(hash), 1u) << "the second pass proposed another candidate";
    least.push_back(std::min(measured.second, two.at(hash).second));
  }

  XGBoostCostModel model(test_support::avx512_cpu(), quick_options(100));
  std::ostringstream messages;
  EXPECT_EQ(add_measured_dataset(model, {&first, &second}, DatasetFilter{target, ""}, messages), 6);
  EXPECT_EQ(messages.str(), "");
  ASSERT_EQ(model.samples().size(), 1u);
  EXPECT_EQ(model.samples().front().seconds, least);
  // Each database alone: its own times.
  XGBoostCostModel alone(test_support::avx512_cpu(), quick_options(100));
  EXPECT_EQ(add_measured_dataset(alone, {&second}, DatasetFilter{target, ""}, messages), 6);
  std::vector<double> second_times;
  for (const auto& [hash, measured] : two) second_times.push_back(measured.second);
  EXPECT_EQ(alone.samples().front().seconds, second_times);
}

}  // namespace
}  // namespace ingot
