// The evolutionary search: it starts from the fixed schedule, never proposes a schedule twice, is reproducible for a
// seed and the results it is told, climbs to a planted optimum of a synthetic cost far sooner than random draws from
// the same space, and in real tuning runs resumes after kill -9 with its model without measuring anything twice.
#include "tuner/evolutionary_search.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "analysis/strategies.h"
#include "configs/run_config.h"
#include "lower/lower.h"
#include "results/database.h"
#include "space/schedule_mutation.h"
#include "space/sketch_space.h"
#include "tests/support/fixed_targets.h"
#include "tests/tuner/test_directory.h"
#include "tuner/tune_job.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

std::shared_ptr<SketchSpace> sketch_space(const Program& p, const std::string& fusion = "global") {
  const Target target = test_support::avx512_cpu();
  PartitionPlan plan = make_plan(fusion, p, target);
  FixedScheduleOptions fixed;
  fixed.simd_fp32_lanes = 16;
  SamplerOptions sampler;
  sampler.layout = plan_layout(plan);
  return std::make_shared<SketchSpace>(p, plan, fixed, sampler);
}

// Decisions one schedule has and the other has not (as multisets of their text), plus 1 for another layout.
int decision_distance(const Schedule& a, const Schedule& b) {
  std::multiset<std::string> left, right;
  for (const Decision& d : a.decisions()) left.insert(d.to_string());
  for (const Decision& d : b.decisions()) right.insert(d.to_string());
  std::vector<std::string> diff;
  std::set_symmetric_difference(left.begin(), left.end(), right.begin(), right.end(), std::back_inserter(diff));
  return int(diff.size()) + (a.layout() == b.layout() ? 0 : 1);
}

// Proposes batches of 8 to search and tells it synthetic run times until it proposes `goal` or `max_trials` were
// proposed; returns the trials it took (max_trials + 1 when it never did).
int trials_to_reach(SearchStrategy& search, const Schedule& goal, int max_trials,
                    const std::function<double(const Schedule&)>& seconds) {
  int trials = 0;
  while (trials < max_trials) {
    std::vector<Schedule> batch = search.propose(8);
    if (batch.empty()) break;
    std::vector<TrialResult> results;
    int reached = 0;  // the whole batch is measured and told, as in a run
    for (Schedule& s : batch) {
      ++trials;
      if (s == goal && !reached) reached = trials;
      results.push_back(TrialResult{Candidate("w", "t", s), trials - 1, false, ErrorClass::kNone, seconds(s)});
    }
    search.tell(results);
    if (reached) return reached;
  }
  return max_trials + 1;
}

std::vector<TrialResult> told(const std::vector<Schedule>& batch, int64_t first_index, double seconds) {
  std::vector<TrialResult> out;
  for (const Schedule& s : batch) {
    out.push_back(TrialResult{Candidate("w", "t", s), first_index++, false, ErrorClass::kNone, seconds});
    seconds *= 1.1;
  }
  return out;
}

TEST(EvolutionarySearch, ProposesTheFixedScheduleFirstAndNeverTwice) {
  Program p = matmul(64, 48, 32);
  auto space = sketch_space(p);
  EvolutionarySearch search(space, 3, EvolutionSeeds{space->fixed_schedule(), {}}, nullptr, "mm");
  std::vector<Schedule> first = search.propose(8);
  ASSERT_EQ(first.size(), 8u);
  EXPECT_EQ(first[0], space->fixed_schedule());
  std::set<uint64_t> seen;
  int64_t index = 0;
  for (int batch = 0; batch < 6; ++batch) {
    std::vector<Schedule> proposed = batch == 0 ? first : search.propose(8);
    for (const Schedule& s : proposed) {
      EXPECT_TRUE(seen.insert(s.hash()).second) << "proposed twice: " << s.to_json();
      EXPECT_NO_THROW(lower(p, s)) << s.to_json();
    }
    search.tell(told(proposed, index, 1e-3));
    index += int64_t(proposed.size());
  }
  EXPECT_EQ(search.reference_seconds(), 1e-3);  // the fixed schedule's, told first
}

TEST(EvolutionarySearch, SchedulesMeasuredBeforeAreParentsNeverProposals) {
  Program p = matmul(64, 48, 32);
  auto space = sketch_space(p);
  std::mt19937_64 rng(1);
  Schedule measured = *mutate(p, space->fixed_schedule(), rng);
  EvolutionarySearch search(
      space, 3, EvolutionSeeds{space->fixed_schedule(), {{space->fixed_schedule(), 2e-3}, {measured, 1e-3}}}, nullptr,
      "mm");
  EXPECT_EQ(search.reference_seconds(), 2e-3);
  for (const Schedule& s : search.propose(16)) {
    EXPECT_NE(s, space->fixed_schedule());
    EXPECT_NE(s, measured);
  }
}

TEST(EvolutionarySearch, SameSeedAndResultsSameProposals) {
  Program p = matmul(64, 48, 32);
  auto space = sketch_space(p);
  EvolutionarySearch a(space, 11, EvolutionSeeds{space->fixed_schedule(), {}}, nullptr, "mm");
  EvolutionarySearch b(space, 11, EvolutionSeeds{space->fixed_schedule(), {}}, nullptr, "mm");
  EvolutionarySearch other(space, 12, EvolutionSeeds{space->fixed_schedule(), {}}, nullptr, "mm");
  bool differs = false;
  for (int batch = 0; batch < 4; ++batch) {
    std::vector<Schedule> x = a.propose(6), y = b.propose(6), z = other.propose(6);
    ASSERT_EQ(x, y) << "batch " << batch;
    differs = differs || x != z;
    a.tell(told(x, batch * 6, 1e-3));
    b.tell(told(y, batch * 6, 1e-3));
    other.tell(told(z, batch * 6, 1e-3));
  }
  EXPECT_TRUE(differs);
}

// The optimum: the fixed schedule a few mutations away (4 decisions differ); the run time grows with the decisions that
// differ from it. Random draws from the same sketch space essentially never hit it; the evolution walks to it.
TEST(EvolutionarySearch, ClimbsToAPlantedOptimumFasterThanRandomSearch) {
  // A GEMM with bias and GELU: its fixed schedule has register tiles, splits and two fused stages to move.
  Program p = make_workload("task:bert_ffn", {{"sequence", 32}, {"hidden", 64}, {"intermediate", 256}});
  auto space = sketch_space(p);
  std::mt19937_64 planting(2025);
  Schedule goal = space->fixed_schedule();
  for (int m = 0; m < 20 && decision_distance(goal, space->fixed_schedule()) < 4; ++m)
    goal = *mutate(p, goal, planting);
  ASSERT_GE(decision_distance(goal, space->fixed_schedule()), 4);
  auto seconds = [&](const Schedule& s) { return 1e-3 * (1 + decision_distance(s, goal)); };
  // One seed's count moves with every change of the fixed schedule (it moves the planted goal): the median of three
  // seeds is the claim. With 16 knobs, seeds 5, 6 and 7 reached it in 193, 330 and more than 600 trials; random
  // search (seed 5) not in 800.
  const int budget = 800;
  std::vector<int> evolution_trials;
  for (uint64_t seed : {5, 6, 7}) {
    EvolutionarySearch evolution(space, seed, EvolutionSeeds{space->fixed_schedule(), {}}, nullptr, "mm");
    evolution_trials.push_back(trials_to_reach(evolution, goal, budget, seconds));
  }
  std::sort(evolution_trials.begin(), evolution_trials.end());
  RandomSearch random(space, 5);
  const int random_trials = trials_to_reach(random, goal, budget, seconds);
  EXPECT_LE(evolution_trials[1], budget / 2)
      << evolution_trials[0] << ", " << evolution_trials[1] << ", " << evolution_trials[2];
  EXPECT_GT(random_trials, budget) << "random search found it";

  // Ranked by a learned model, it gets there too.
  XGBoostCostModelOptions quick;
  quick.warmup_samples = 16;
  quick.params.rounds = 30;
  quick.holdout = 0;
  auto model = std::make_shared<XGBoostCostModel>(test_support::avx512_cpu(), quick);
  EvolutionOptions small;
  small.population = 24;
  small.generations = 2;
  EvolutionarySearch guided(space, 5, EvolutionSeeds{space->fixed_schedule(), {}}, model, "mm", small);
  const int guided_trials = trials_to_reach(guided, goal, budget, seconds);
  EXPECT_LE(guided_trials, budget);
  EXPECT_TRUE(model->trained());
  EXPECT_TRUE(guided.last_batch_accuracy().has_value());
}

class EvolutionaryTuning : public TestDirectory {
 protected:
  std::string config(const std::string& db, int trials) const {
    return R"(workload:
  name: matmul
  params: {m: 32, n: 32, k: 32}
target: {kind: cpu, threads: 1}
budget: {trials: )" +
           std::to_string(trials) + R"(}
seed: 4
database: )" +
           (dir_ / db).string() +
           R"(
measure: {warmup_runs: 0, min_repeat_ms: 40, max_repeats: 1000000, min_repeats: 1, build_workers: 2}
search: {batch: 4, population: 16, generations: 2}
)";
  }
  static TuneJobOptions quick_model() {
    TuneJobOptions o;
    o.model.warmup_samples = 4;
    o.model.params.rounds = 30;
    return o;
  }
  static std::vector<std::string> measured(const std::string& path) {
    std::vector<std::string> out;
    for (const MeasuredCandidate& m : Database::open(path).history()) out.push_back(m.candidate.schedule_json);
    return out;
  }
};

// The default strategy is the model-guided evolution, its first candidate the fixed schedule; killed with SIGKILL
// once its model has learned, a resumed run relearns what was measured, proposes the same candidates again and
// measures none of them twice.
TEST_F(EvolutionaryTuning, IsTheDefaultAndResumesAfterSigkillWithItsModel) {
  const std::string text = config("killed.db", 12);
  RunConfig parsed = parse_run_config(text, "evo.yaml");
  ASSERT_EQ(parsed.search.strategy, "evolutionary");
  const std::string db_path = (dir_ / "killed.db").string();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TuneJob job = make_tune_job(parsed, "", quick_model());
    run_tune_job(job);
    ::_exit(0);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  size_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(db_path)) {
      try {
        seen = Database::open(db_path).history().size();
      } catch (const std::exception&) {
        seen = 0;
      }
    }
    if (seen >= 6) break;  // past the first batch of 4: the model has trained
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_GE(seen, 6u) << "the child never measured six candidates";
  const size_t before = Database::open(db_path).history().size();
  ASSERT_LT(before, 12u) << "killed too late to test a resume";
  const std::vector<std::string> measured_before = measured(db_path);

  TuneJob resumed = make_tune_job(parsed, "", quick_model());
  ASSERT_TRUE(resumed.cost_model);
  EXPECT_EQ(resumed.search->propose(1).front(), Schedule::from_json(measured_before.front()));
  resumed = make_tune_job(parsed, "", quick_model());
  TuneSummary s = run_tune_job(resumed);
  EXPECT_EQ(s.skipped, int64_t(before));
  EXPECT_EQ(s.measured_now, int64_t(12 - before));
  EXPECT_TRUE(resumed.cost_model->trained());
  ASSERT_TRUE(s.reference_seconds.has_value());  // the fixed schedule was measured
  std::vector<std::string> all = measured(db_path);
  EXPECT_EQ(all.size(), 12u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size()) << "a candidate was measured twice";
  EXPECT_TRUE(std::equal(measured_before.begin(), measured_before.end(), all.begin()));
  EXPECT_TRUE(Database::open(db_path).check().ok);
}

// A run with another seed starts from the best candidates the first one measured: they are never proposed again.
TEST_F(EvolutionaryTuning, AnotherSeedStartsFromTheBestMeasuredBefore) {
  RunConfig first = parse_run_config(config("shared.db", 4), "evo.yaml");
  first.search.cost_model = "none";
  TuneJob job = make_tune_job(first);
  TuneSummary s = run_tune_job(job);
  ASSERT_EQ(s.measured_now, 4);
  RunConfig second = first;
  second.seed = 5;
  TuneJob next = make_tune_job(second);
  std::set<std::string> before;
  for (const std::string& json : measured(second.database)) before.insert(json);
  for (const Schedule& proposal : next.search->propose(12)) EXPECT_FALSE(before.count(proposal.to_json()));
  EXPECT_TRUE(next.search->reference_seconds().has_value());  // the fixed schedule was measured by the first run
}

}  // namespace
}  // namespace ingot
