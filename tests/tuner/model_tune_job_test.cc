// Whole-model tuning run for real on small models: tasks recorded with their model, rounds shared by the task
// scheduler, the assembled model verified and measured end to end next to its fixed schedule, and a second run that
// resumes without measuring anything twice.
#include "tuner/model_tune_job.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "analysis/target.h"
#include "ir/horizontal_batch.h"
#include "results/database.h"
#include "tests/tuner/test_directory.h"
#include "tuner/candidate.h"

namespace ingot {
namespace {

class ModelTuneJobTest : public TestDirectory {
 protected:
  std::string config_text(const std::string& workload, int64_t trials, const std::string& search = "") const {
    std::string text = "workload: " + workload +
                       "\ntarget: {kind: cpu, threads: 1}\nbudget: {trials: " + std::to_string(trials) +
                       "}\nseed: 3\ndatabase: " + (dir_ / "model.db").string() +
                       "\nmeasure: {warmup_runs: 0, min_repeat_ms: 1, min_repeats: 1, build_workers: 2}\n"
                       "search: {scope: tasks, batch: 2, cost_model: none" +
                       search + "}\n";
    return text;
  }
  // The summary of a whole job run from config_text(workload, 4, search), its config in `config`.
  ModelTuneSummary run_job(const std::string& workload, const std::string& search, const std::string& file,
                           RunConfig& config) const {
    config = parse_run_config(config_text(workload, 4, search), file);
    ModelTuneJob job = make_model_tune_job(config, file);
    return run_model_tune_job(job);
  }
};

TEST_F(ModelTuneJobTest, RecordsTheTasksOfTheModelWithTheirWeights) {
  RunConfig config = parse_run_config(config_text("{name: bert, params: {layers: 2, hidden: 16, heads: 2, "
                                                  "intermediate: 32, sequence: 8}}",
                                                  4),
                                      "bert.yaml");
  ModelTuneJob job = make_model_tune_job(config, "bert.yaml");
  ASSERT_EQ(job.tasks.size(), 11u);
  Database db = Database::open(config.database);
  std::vector<ModelTaskRecord> rows = db.model_tasks("bert");
  ASSERT_EQ(rows.size(), job.tasks.size());
  int64_t weights = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].task_index, int64_t(i));
    EXPECT_EQ(rows[i].weight, job.tasks[i].task.weight());
    EXPECT_EQ(rows[i].task_workload_hash, workload_key(job.tasks[i].task.program));
    EXPECT_EQ(rows[i].plan_strategy, "global");
    EXPECT_EQ(nlohmann::json::parse(rows[i].occurrences_json).size(), size_t(rows[i].weight));
    weights += rows[i].weight;
  }
  EXPECT_EQ(weights, job.plan.stage_count());
  // Each task's reference is the model's values at its first occurrence, so its starting schedule checks out.
  for (const TaskTuning& t : job.tasks) {
    EXPECT_EQ(t.options.expected_outputs.size(), t.task.program.outputs().size()) << t.task.name;
    EXPECT_EQ(t.options.fixed_inputs.size(), t.task.program.placeholders().size()) << t.task.name;
  }
  // Its weights fit any last-level cache: each task is measured with the caches as the model leaves them.
  for (const TaskTuning& t : job.tasks) EXPECT_EQ(t.options.runner.flush_cache_bytes, 0) << t.task.name;
  // A second job finds the same rows and adds none.
  make_model_tune_job(config, "bert.yaml");
  EXPECT_EQ(db.model_tasks("bert").size(), rows.size());
}

TEST(TaskFlushBytes, FlushesOnlyWhereTheModelsWeightsOutgrowTheLastLevelCache) {
  CpuLimits cpu;
  cpu.cores = 2;
  cpu.l2_bytes = 1 << 20;
  cpu.l3_bytes = 32 << 20;
  EXPECT_EQ(task_flush_bytes(20 << 20, cpu), 0);          // EfficientNet-B0, the paper LSTM
  EXPECT_EQ(task_flush_bytes(32 << 20, cpu), 0);          // exactly the cache
  EXPECT_EQ(task_flush_bytes(324 << 20, cpu), 68 << 20);  // BERT: twice L3 and both L2s
  cpu.l3_bytes = 8 << 20;
  EXPECT_EQ(task_flush_bytes(20 << 20, cpu), 64 << 20);  // at least 64 MiB
}

// A small BERT in bf16 (precision: bf16) is tuned by its tasks like the f32 one: its dense layers' tasks carry bf16
// weights, each task checks out against the model's values, and the assembled model against the bf16 interpreter.
TEST_F(ModelTuneJobTest, ABf16ModelIsTunedByItsTasks) {
  RunConfig config = parse_run_config(config_text("{name: bert, params: {layers: 1, hidden: 32, heads: 2, "
                                                  "intermediate: 64, sequence: 16}}",
                                                  6) +
                                          "precision: bf16\n",
                                      "bert.yaml");
  if (!host_has_avx512_bf16()) {
    EXPECT_THROW(make_model_tune_job(config, "bert.yaml"), std::invalid_argument);
    GTEST_SKIP() << "this CPU has no AVX-512 BF16: the refusal was checked, a bf16 run was not";
  }
  ModelTuneJob job = make_model_tune_job(config, "bert.yaml");
  int bf16_tasks = 0;
  for (const TaskTuning& t : job.tasks)
    for (const Tensor& p : t.task.program.placeholders()) bf16_tasks += p->dtype == DType::kBFloat16;
  EXPECT_GE(bf16_tasks, 4) << "Q, K, V, the attention's output and the FFN's two layers";
  ModelTuneSummary s = run_model_tune_job(job);
  EXPECT_EQ(s.trials_done, 6);
  EXPECT_EQ(s.errors_now, 0);
  ASSERT_TRUE(s.fixed_seconds.has_value());
  EXPECT_TRUE(s.assembled_seconds.has_value()) << s.assembled_error;
  EXPECT_FALSE(Database::open(config.database).model_tasks("bert@bf16").empty());
}

TEST_F(ModelTuneJobTest, TunesTheTasksThenMeasuresTheAssembledModelAndResumes) {
  const std::string mlp = "{name: mlp, params: {batch: 8, in: 16, hidden: 32, out: 16}}";
  RunConfig config = parse_run_config(config_text(mlp, 6), "mlp.yaml");
  ModelTuneJob job = make_model_tune_job(config, "mlp.yaml");
  ASSERT_EQ(job.tasks.size(), 2u);
  std::vector<int> round_tasks;
  ModelTuneSummary s = run_model_tune_job(job, [&](const ModelTuneProgress& p) {
    if (round_tasks.empty() || round_tasks.back() != p.task) round_tasks.push_back(p.task);
  });
  EXPECT_EQ(s.trials_done, 6);
  EXPECT_EQ(s.errors_now, 0);
  // Warm-up: a round for each task, in order; the model end to end last.
  ASSERT_GE(round_tasks.size(), 3u);
  EXPECT_EQ(round_tasks[0], 0);
  EXPECT_EQ(round_tasks[1], 1);
  EXPECT_EQ(round_tasks.back(), -1);
  for (const TaskStatus& t : s.tasks) {
    EXPECT_TRUE(t.best_seconds.has_value()) << t.name;
    EXPECT_TRUE(t.start_seconds.has_value()) << t.name;
    EXPECT_LE(*t.best_seconds, *t.start_seconds) << t.name;
  }
  ASSERT_TRUE(s.fixed_seconds.has_value());
  ASSERT_TRUE(s.assembled_seconds.has_value()) << s.assembled_error;
  EXPECT_TRUE(s.assembled_error.empty());
  Database db = Database::open(config.database);
  // The model's own candidates: the fixed schedule, the assembled one (one candidate when they are equal) and the
  // models each task was tried in alone (where the assembly did not beat the fixed schedule; such a model is the
  // assembled one where only that task changed).
  size_t tried_in_model = 0;
  for (const TaskStatus& t : s.tasks) tried_in_model += t.in_model_speedup.has_value();
  const size_t model_candidates = db.history("mlp").size();
  EXPECT_GE(model_candidates, 1u);
  EXPECT_LE(model_candidates, 2u + tried_in_model);
  EXPECT_EQ(db.history("mlp/task0").size() + db.history("mlp/task1").size(), 6u);
  // At the end the fixed schedule and the model's best are timed side by side (measure.side_by_side: 3), and the tasks'
  // many short runs compared nothing.
  const std::string target = cpu_target_key(1);
  if (model_candidates >= 2) {
    ASSERT_TRUE(s.side_by_side.has_value());
    ASSERT_EQ(s.side_by_side->entries.size(), model_candidates) << "the fixed schedule and up to 3 others";
    EXPECT_TRUE(s.side_by_side->entries[0].is_reference);
    EXPECT_EQ(s.side_by_side->entries[0].schedule_json, job.fixed_schedule.to_json());
    bool assembled_compared = false;
    for (size_t i = 1; i < model_candidates; ++i) {
      assembled_compared = assembled_compared || s.side_by_side->entries[i].schedule_json == s.assembled_schedule_json;
      EXPECT_TRUE(s.side_by_side->entries[i].speedup.has_value());
    }
    EXPECT_TRUE(assembled_compared);
    EXPECT_TRUE(s.side_by_side->naive.has_value());
    EXPECT_EQ(db.latest_side_by_side("mlp", target).size(), model_candidates * size_t(s.side_by_side->rounds) + 1)
        << "5 rounds of each (more where a verdict was close), and naive once";
  } else {
    EXPECT_FALSE(s.side_by_side.has_value()) << "one schedule has nothing to be compared with";
  }
  EXPECT_EQ(db.history("mlp").size(), model_candidates) << "the comparison is no measurement";
  // A task whose best is not its start had its start and best few timed side by side (up to 3 of them, 5 rounds, no
  // naive baseline), and the model was assembled from the fastest there.
  size_t task_rounds = 0;
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    const TaskStatus& t = s.tasks[i];
    const std::vector<SideBySideRow> rows = db.latest_side_by_side(t.name, target);
    task_rounds += rows.size();
    if (!t.compared_kept_seconds) {
      EXPECT_TRUE(rows.empty()) << t.name;
      continue;
    }
    EXPECT_FALSE(t.too_small_to_compare) << t.name;
    ASSERT_TRUE(t.compared_start_seconds.has_value()) << t.name;
    std::optional<SideBySideComparison> compared = stored_side_by_side(db, t.name, target);
    ASSERT_TRUE(compared.has_value()) << t.name;
    ASSERT_GE(compared->entries.size(), 2u) << t.name;
    ASSERT_LE(compared->entries.size(), 4u) << t.name;
    EXPECT_GE(compared->rounds, 5) << t.name;
    EXPECT_LE(compared->rounds, 10) << t.name;
    EXPECT_EQ(rows.size(), compared->entries.size() * size_t(compared->rounds)) << t.name << ": no naive row";
    EXPECT_TRUE(compared->entries[0].is_reference) << t.name;
    EXPECT_EQ(compared->entries[0].schedule_json, job.tasks[i].start.to_json()) << t.name;
    EXPECT_EQ(compared->entries[0].median_seconds, t.compared_start_seconds) << t.name;
    EXPECT_EQ(compared->kept()->median_seconds, t.compared_kept_seconds) << t.name;
  }
  // A task tried in the model alone (the assembly of all did not beat the fixed schedule) had a kept schedule of its
  // own, and stayed only where it beat the model without it.
  for (const TaskStatus& t : s.tasks) {
    if (t.in_model_speedup) {
      EXPECT_TRUE(t.compared_kept_seconds.has_value()) << t.name;
    }
    if (t.kept_in_model) {
      ASSERT_TRUE(t.in_model_speedup.has_value()) << t.name;
      EXPECT_GT(*t.in_model_speedup, 1) << t.name;
    }
  }
  const std::optional<double> compared_estimate_seconds = compared_estimate(s.tasks, false);
  ASSERT_TRUE(compared_estimate_seconds.has_value());
  EXPECT_GT(*compared_estimate_seconds, 0);

  // The same job again measures nothing and times no task again (their stored comparisons decide as before); a larger
  // budget measures only the new trials.
  ModelTuneJob again = make_model_tune_job(config, "mlp.yaml");
  ModelTuneSummary repeat = run_model_tune_job(again);
  EXPECT_EQ(repeat.measured_now, 0);
  EXPECT_EQ(repeat.assembled_schedule_json, s.assembled_schedule_json);
  size_t task_rounds_again = 0;
  for (const TaskStatus& t : repeat.tasks) task_rounds_again += db.latest_side_by_side(t.name, target).size();
  EXPECT_EQ(task_rounds_again, task_rounds);
  for (size_t i = 0; i < s.tasks.size(); ++i) {
    EXPECT_EQ(repeat.tasks[i].compared_kept_seconds, s.tasks[i].compared_kept_seconds) << s.tasks[i].name;
    EXPECT_EQ(repeat.tasks[i].in_model_speedup, s.tasks[i].in_model_speedup) << s.tasks[i].name;
  }
  config.budget.trials = 10;
  ModelTuneJob more = make_model_tune_job(config, "mlp.yaml");
  ModelTuneSummary longer = run_model_tune_job(more);
  EXPECT_EQ(longer.trials_done, 10);
  EXPECT_EQ(db.history("mlp/task0").size() + db.history("mlp/task1").size(), 10u);
  // The new trials, the assembled model when it changed, and the models a changed task was tried in alone.
  size_t tried_again = 0;
  for (const TaskStatus& t : longer.tasks) tried_again += t.in_model_speedup.has_value();
  EXPECT_LE(longer.measured_now, 4 + 1 + int64_t(tried_again));
}

// A stop (SIGINT in `ingot tune`) during the first round: that round's measurement is kept, no other round starts,
// and the model is not measured end to end.
TEST_F(ModelTuneJobTest, AStopEndsTheRoundsWithoutTheEndToEndMeasurement) {
  RunConfig config =
      parse_run_config(config_text("{name: mlp, params: {batch: 8, in: 16, hidden: 32, out: 16}}", 6), "mlp.yaml");
  ModelTuneJob job = make_model_tune_job(config, "mlp.yaml");
  std::atomic<bool> stop{false};
  job.options.stop = &stop;
  ModelTuneSummary s = run_model_tune_job(job, [&](const ModelTuneProgress& p) {
    if (p.round.measured_now == 1) stop = true;
  });
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.measured_now, 1);
  EXPECT_EQ(s.trials_done, 1);
  EXPECT_FALSE(s.fixed_seconds.has_value());
  Database db = Database::open(config.database);
  EXPECT_EQ(db.history("mlp/task0").size(), 1u);
  EXPECT_EQ(db.check().claims, 0);
  EXPECT_TRUE(db.history("mlp").empty());  // the model itself was never measured
}

// A stop after the rounds (during the model's end-to-end phases) ends the job as stopped: nothing is decided from a
// phase it cut short, no partition move is tried and no final comparison is made.
TEST_F(ModelTuneJobTest, AStopAfterTheRoundsEndsTheJobAsStopped) {
  RunConfig config = parse_run_config(
      config_text("{name: mlp, params: {batch: 8, in: 16, hidden: 32, out: 16}}", 4, ", partition_moves: 2"),
      "mlp.yaml");
  ModelTuneJob job = make_model_tune_job(config, "mlp.yaml");
  std::atomic<bool> stop{false};
  job.options.stop = &stop;
  ModelTuneSummary s = run_model_tune_job(job, [&](const ModelTuneProgress& p) {
    if (p.task == -1) stop = true;
  });
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.trials_done, 4);
  EXPECT_TRUE(s.partition_trials.empty());
  EXPECT_FALSE(s.side_by_side.has_value());
  EXPECT_EQ(Database::open(config.database).check().claims, 0);
}

// After the rounds, plan moves measured end to end: each a correct program of the model, kept only when faster side
// by side with the best plan before it (measure.side_by_side: 3), or by its one measurement without comparisons.
TEST_F(ModelTuneJobTest, ThePartitionSearchMeasuresMovedPlansEndToEnd) {
  RunConfig config;
  ModelTuneSummary s = run_job("{name: mlp, params: {batch: 8, in: 16, hidden: 32, out: 16}}", ", partition_moves: 4",
                               "mlp.yaml", config);
  ASSERT_EQ(s.partition_trials.size(), 4u);
  ASSERT_TRUE(s.fixed_seconds.has_value());
  double best = std::min(*s.fixed_seconds, s.assembled_seconds.value_or(*s.fixed_seconds));
  int measured = 0;
  for (const PartitionTrial& t : s.partition_trials) {
    if (t.kernels == 0) {
      EXPECT_EQ(t.error, "no place for the move") << t.move;
      continue;
    }
    ++measured;
    ASSERT_TRUE(t.seconds.has_value()) << t.move << ": " << t.error;
    ASSERT_TRUE(t.speedup.has_value()) << t.move;
    if (*t.speedup <= 1) {
      EXPECT_FALSE(t.kept) << t.move;
    }
    best = std::min(best, *t.seconds);
  }
  EXPECT_GT(measured, 0);
  EXPECT_GE(s.best_plan_kernels, 1);
  ASSERT_TRUE(s.best_seconds.has_value());
  EXPECT_LE(*s.best_seconds, best);
  // Every moved plan's program is a candidate of the model, with its plan's layout.
  Database db = Database::open(config.database);
  EXPECT_GE(db.history("mlp").size(), size_t(measured));
}

// A model with batchable groups (ir/horizontal_batch.h) tries them first: an LSTM's input projections, one kind for
// every layer of the same width, batched into one GEMM per layer in one move, the plan made again; the program it gives
// is a correct candidate of the model whose schedule starts with the batch decisions.
TEST_F(ModelTuneJobTest, TheFirstMoveBatchesTheLayersInputProjections) {
  RunConfig config;
  ModelTuneSummary s = run_job("{name: lstm, params: {layers: 3, steps: 4, hidden: 16, input: 16}}",
                               ", partition_moves: 2", "lstm.yaml", config);
  ASSERT_EQ(s.partition_trials.size(), 2u);
  const PartitionTrial& batch = s.partition_trials[0];
  EXPECT_EQ(batch.move, "batch");
  ASSERT_TRUE(batch.seconds.has_value()) << batch.error;
  EXPECT_TRUE(batch.error.empty()) << batch.error;
  EXPECT_NE(s.partition_trials[1].move, "batch");  // one kind: the second move is a plan move
  int batched = 0;
  for (const MeasuredCandidate& c : Database::open(config.database).history("lstm")) {
    const Schedule schedule = Schedule::from_json(c.candidate.schedule_json);
    if (batch_groups_of(schedule).empty()) continue;
    ++batched;
    EXPECT_EQ(batch_groups_of(schedule).size(), 3u);  // one group per layer
    EXPECT_EQ(c.measurement.error_class, ErrorClass::kNone);
  }
  EXPECT_GE(batched, 1);
  // The same job again makes the same moves and measures none of them again.
  const size_t measurements = Database::open(config.database).history("lstm").size();
  ModelTuneSummary repeat = run_job("{name: lstm, params: {layers: 3, steps: 4, hidden: 16, input: 16}}",
                                    ", partition_moves: 2", "lstm.yaml", config);
  ASSERT_EQ(repeat.partition_trials.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(repeat.partition_trials[i].move, s.partition_trials[i].move);
    EXPECT_EQ(repeat.partition_trials[i].seconds, s.partition_trials[i].seconds);
    EXPECT_EQ(repeat.partition_trials[i].kept, s.partition_trials[i].kept);
  }
  EXPECT_EQ(Database::open(config.database).history("lstm").size(), measurements);
}

TEST_F(ModelTuneJobTest, WithoutComparisonsAMoveIsKeptByItsOneMeasurement) {
  std::string text =
      config_text("{name: mlp, params: {batch: 8, in: 16, hidden: 32, out: 16}}", 4, ", partition_moves: 4");
  text.replace(text.find("build_workers: 2"), 16, "build_workers: 2, side_by_side: 0");
  RunConfig config = parse_run_config(text, "mlp.yaml");
  ModelTuneJob job = make_model_tune_job(config, "mlp.yaml");
  ModelTuneSummary s = run_model_tune_job(job);
  ASSERT_TRUE(s.fixed_seconds.has_value());
  double best = std::min(*s.fixed_seconds, s.assembled_seconds.value_or(*s.fixed_seconds));
  for (const PartitionTrial& t : s.partition_trials) {
    if (!t.seconds) continue;
    EXPECT_FALSE(t.speedup.has_value()) << t.move;
    EXPECT_EQ(t.kept, *t.seconds < best) << t.move;
    best = std::min(best, *t.seconds);
  }
  for (const TaskStatus& t : s.tasks) EXPECT_FALSE(t.compared_kept_seconds.has_value()) << t.name;
  EXPECT_FALSE(s.assembled_speedup.has_value());
  EXPECT_TRUE(Database::open(config.database).latest_side_by_side("mlp", cpu_target_key(1)).empty());
}

TEST(TasksToTryInTheModel, TheLargestEstimatedGainsFirstAndNoneTooSmallToResolve) {
  auto task = [](int64_t weight, std::optional<double> start, std::optional<double> kept) {
    TaskStatus t;
    t.weight = weight;
    t.start_seconds = t.best_seconds = 1.0;  // single measurements: not used where compared
    t.compared_start_seconds = start;
    t.compared_kept_seconds = kept;
    return t;
  };
  // Starts side by side: 12 x 3 + 12 x 1 + 24 x 0.5 + 1 x 2 + 1 x 40 (uncompared: its single 1.0) = 63 ms.
  std::vector<TaskStatus> tasks{task(12, 3.0, 2.9), task(12, 1.0, 0.8), task(24, 0.5, 0.45), task(1, 2.0, 1.99),
                                task(1, std::nullopt, std::nullopt)};
  tasks[4].start_seconds = tasks[4].best_seconds = 1.0;
  const double estimate = *compared_estimate(tasks, true);
  EXPECT_DOUBLE_EQ(estimate, 36 + 12 + 12 + 2 + 1);
  // Gains: 1.2, 2.4, 1.2, 0.01 (under 1% of 63), none.
  EXPECT_EQ(tasks_to_try_in_the_model(tasks, {true, true, true, true, true}), (std::vector<size_t>{1, 0, 2}));
  // A task whose kept schedule is its start has nothing to try.
  EXPECT_EQ(tasks_to_try_in_the_model(tasks, {true, false, false, true, true}), (std::vector<size_t>{0}));
}

TEST_F(ModelTuneJobTest, RefusesASearchOtherThanEvolutionary) {
  RunConfig config = parse_run_config(config_text("{name: mlp}", 4, ", strategy: random"), "x.yaml");
  try {
    make_model_tune_job(config, "x.yaml");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x.yaml: search.scope: tasks"), std::string::npos) << e.what();
  }
}

TEST_F(ModelTuneJobTest, RefusesAGpuTargetBeforeAnythingRuns) {
  std::string text = config_text("{name: mlp}", 4);
  text.replace(text.find("kind: cpu"), 9, "kind: sm_90");
  try {
    make_model_tune_job(parse_run_config(text, "x.yaml"), "x.yaml");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x.yaml: search.scope: tasks tunes on the CPU only"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

}  // namespace
}  // namespace ingot
