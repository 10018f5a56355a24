// Whole-model tuning (search.scope: tasks): the model's plan is cut into tasks (tuner/model_tasks.h), each tuned alone
// by its own evolutionary search starting from the model's fixed schedule at its stage, all sharing one cost model; a
// task scheduler (tuner/task_scheduler.h) gives each round of trials to the task where it should cut the model's
// estimated latency most. At the end the tasks' bests are assembled into one schedule of the model, which is verified
// against the interpreter and measured end to end next to the model's fixed schedule. `ingot tune` runs it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/partition_plan.h"
#include "analysis/target.h"
#include "configs/run_config.h"
#include "ir/program.h"
#include "space/strategy_schedule.h"
#include "tuner/model_tasks.h"
#include "tuner/search_strategy.h"
#include "tuner/task_scheduler.h"
#include "tuner/tune_job.h"
#include "tuner/tuning_loop.h"

namespace ingot {

// One task of the job, with what tuning it alone takes.
struct TaskTuning {
  ModelTask task;
  TuneOptions options;  // the job's, with the model's values at the task's inputs and outputs
  std::shared_ptr<const SpaceGenerator> space;
  std::unique_ptr<SearchStrategy> search;  // evolutionary, from `start`
  Schedule start;                          // the model's fixed schedule at the task's first occurrence
};

struct ModelTuneJob {
  std::string workload_name;
  Program program;
  Target target;
  PartitionPlan plan;
  TuneOptions options;                 // the model's, with the interpreter's outputs as expected_outputs
  Schedule fixed_schedule;             // the plan's strategy schedule of the whole model
  FixedScheduleOptions fixed_options;  // the target's, with the knobs' defaults
  std::vector<TaskTuning> tasks;
  std::shared_ptr<XGBoostCostModel> cost_model;  // shared by the tasks' searches; null with search.cost_model none
  std::unique_ptr<TaskScheduler> scheduler;
  int round_trials = 8;  // trials per round: search.batch, or 8
  int partition_moves =
      0;              // search.partition_moves: batch and plan moves tried after the rounds, each measured end to end
  std::string notes;  // one line each, for the user
  // measure.side_by_side: after the partition search, the fixed schedule and this many of the model's best are timed
  // side by side (tuner/side_by_side_comparison.h). options.side_by_side is 0: the tasks' runs compare nothing.
  int side_by_side = 0;
};

// The bytes a task's runner writes before each of its runs (RunnerOptions::flush_cache_bytes): none where the model's
// weights fit the last-level cache (its stages find them there), else twice the caches, at least 64 MiB.
int64_t task_flush_bytes(int64_t model_weight_bytes, const CpuLimits& cpu);

// Checks and throws as make_tune_job does, and std::invalid_argument (naming config_path) for a search.strategy other
// than evolutionary. Computes the model's values with the interpreter once (the tasks' inputs and references) and
// records the tasks in the database (model_tasks).
ModelTuneJob make_model_tune_job(const RunConfig& config, const std::string& config_path = "",
                                 const TuneJobOptions& job_options = {});

struct TaskStatus {
  std::string name;
  int64_t weight = 0;
  int64_t trials = 0;
  std::optional<double> best_seconds;   // the best correct result the task's search was told
  std::optional<double> start_seconds;  // of its starting schedule (the model's fixed schedule at its stage)
  // After the rounds (ModelTuneJob::side_by_side > 0), where the best is not the start: the start and the task's best
  // few timed side by side. The schedule kept for the model is the one kept there (SideBySideComparison::kept); these
  // are its median and the start's. Unset where nothing was compared.
  std::optional<double> compared_start_seconds, compared_kept_seconds;
  bool too_small_to_compare = false;  // its best would take under 0.1% off the model's estimate: it keeps its start
  // Where the model assembled from every task's kept schedule did not beat the fixed schedule side by side: the model
  // with this task's kept schedule too, over the model without it, side by side (unset where not tried), and whether
  // it beat it and stayed in the model.
  std::optional<double> in_model_speedup;
  bool kept_in_model = false;
};

struct ModelTuneProgress {
  std::vector<TaskStatus> tasks;
  int task = -1;              // the task of the round in progress; -1 while measuring the model end to end
  int64_t trials_done = 0;    // over all tasks, resumed ones included
  int64_t trials_budget = 0;  // 0 when only minutes bound the run
  std::optional<double> estimated_seconds;        // sum of weight x best over the tasks, once each has a best
  std::optional<double> fixed_estimated_seconds;  // the same sum over the starting schedules
  double elapsed_seconds = 0;
  std::optional<double> eta_seconds;
  TuneProgress round;  // the round's own progress line
};

// One plan move of the partition search, measured end to end.
struct PartitionTrial {
  std::string move;  // plan_move_name (analysis/plan_mutation.h), or "batch" (a kind of batchable group batched)
  int64_t kernels = 0, stages = 0;
  std::optional<double> seconds;  // nullopt: no place for the move, or the program failed (error says why)
  std::string error;
  // Over the best before it, timed side by side with it (ModelTuneJob::side_by_side > 0); unset when not compared.
  std::optional<double> speedup;
  // Faster than the best before it (side by side where compared, else by `seconds`): the search went on from it.
  bool kept = false;
};

struct ModelTuneSummary {
  std::vector<TaskStatus> tasks;
  int64_t trials_done = 0, measured_now = 0, errors_now = 0;
  bool exhausted = false;  // every task's search ran out of new schedules
  bool stopped = false;    // job.options.stop ended the rounds; the model was not measured end to end
  std::string workload_hash;
  // The model measured end to end: its fixed schedule and the schedule assembled from the tasks' bests (nullopt when
  // it failed: wrong_answer, a compile or run error; assembled_error says which).
  std::optional<double> fixed_seconds, assembled_seconds;
  std::string assembled_error;
  std::optional<double> assembled_speedup;  // over the fixed schedule, side by side (ModelTuneJob::side_by_side > 0)
  std::string assembled_schedule_json;      // the fixed schedule's when every task's best is its start
  std::optional<double> best_seconds;       // the model's best correct measurement in the database, over every run
  std::vector<PartitionTrial> partition_trials;
  // The plan the partition search ended on (the job's when no move was kept or none was tried).
  std::string best_plan_strategy;
  int64_t best_plan_kernels = 0, best_plan_stages = 0;
  // The fixed schedule and the model's best few timed side by side at the end (ModelTuneJob::side_by_side).
  std::optional<SideBySideComparison> side_by_side;
};

// The estimate of the tasks' side-by-side comparisons: the sum over tasks of weight x the kept schedule's median there
// (the start's with `starts`), taking a task's own measurement where it was not compared; nullopt until every task
// has one.
std::optional<double> compared_estimate(const std::vector<TaskStatus>& tasks, bool starts);

// The tasks whose kept schedule is tried in the model one at a time (run_model_tune_job), in order: those `changed`
// (kept schedule not the start) and compared side by side whose estimated gain, weight x (start - kept) there, is at
// least 1% of the model's estimate (compared_estimate of the starts), the largest first.
std::vector<size_t> tasks_to_try_in_the_model(const std::vector<TaskStatus>& tasks, const std::vector<bool>& changed);

// Runs rounds until the budget (trials over all tasks, or minutes) is spent or every search is exhausted, then
// (with job.side_by_side) times each task's start and best few side by side and keeps what beats the start: one
// measurement of each candidate, the least of hundreds, is fastest partly by chance. Then measures the model assembled
// from the kept schedules end to end and side by side with the fixed schedule; where it does not beat it, tries the
// tasks' kept schedules in the model one at a time, the largest estimated gain first, keeping each that beats the model
// without it. Then tries job.partition_moves moves: batch moves, then plan moves (the partition search). Comparisons
// stored by an earlier run of the same job are read, not timed again. job.options.stop stops it as it stops tune()
// (tuner/tuning_loop.h), without the end-to-end measurement. Resuming with the same config and database replays the
// same rounds, measuring none of their candidates again.
ModelTuneSummary run_model_tune_job(ModelTuneJob& job,
                                    const std::function<void(const ModelTuneProgress&)>& on_progress = {});

}  // namespace ingot
