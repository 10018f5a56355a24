#include "tuner/model_tune_job.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

#include "analysis/plan_mutation.h"
#include "analysis/program_analysis.h"
#include "analysis/strategies.h"
#include "compile/cpp_compiler.h"
#include "interp/interpreter.h"
#include "interp/rounding_noise.h"
#include "ir/dtype.h"
#include "ir/hash.h"
#include "ir/horizontal_batch.h"
#include "results/database.h"
#include "space/sketch_space.h"
#include "space/strategy_schedule.h"
#include "tuner/candidate.h"
#include "tuner/evolutionary_search.h"
#include "tuner/measured_dataset.h"

namespace ingot {
namespace {

// What a task's search was told, kept in the order told: the scheduler decides from this, not from the database's
// best over every run, so a resumed job (told the same stored results) makes the same choices as the interrupted one.
class ObservedSearch final : public SearchStrategy {
 public:
  explicit ObservedSearch(std::unique_ptr<SearchStrategy> inner) : inner_(std::move(inner)) {}
  std::vector<Schedule> propose(int n) override { return inner_->propose(n); }
  void tell(const std::vector<TrialResult>& results) override {
    for (const TrialResult& r : results)
      if (r.error_class == ErrorClass::kNone && r.seconds) correct_.emplace_back(*r.seconds, r.candidate.schedule());
    inner_->tell(results);
  }
  const XGBoostCostModel* learned_model() const override { return inner_->learned_model(); }
  std::optional<double> last_batch_accuracy() const override { return inner_->last_batch_accuracy(); }
  std::optional<double> reference_seconds() const override { return inner_->reference_seconds(); }

  // The fastest correct result told (the first of equal ones).
  std::optional<double> best_seconds() const {
    if (correct_.empty()) return std::nullopt;
    return fastest()->first;
  }
  std::optional<Schedule> best_schedule() const {
    if (correct_.empty()) return std::nullopt;
    return fastest()->second;
  }
  // The `count` fastest distinct schedules told, fastest first (ties in the order told).
  std::vector<Schedule> best_few(int count) const {
    std::vector<std::pair<double, Schedule>> ranked = correct_;
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Schedule> out;
    for (const auto& [seconds, schedule] : ranked) {
      if (int(out.size()) >= count) break;
      if (std::find(out.begin(), out.end(), schedule) == out.end()) out.push_back(schedule);
    }
    return out;
  }

 private:
  std::vector<std::pair<double, Schedule>>::const_iterator fastest() const {
    return std::min_element(correct_.begin(), correct_.end(),
                            [](const auto& a, const auto& b) { return a.first < b.first; });
  }

  std::unique_ptr<SearchStrategy> inner_;
  std::vector<std::pair<double, Schedule>> correct_;  // every correct result told, in the order told
};

ObservedSearch& observed(TaskTuning& t) { return static_cast<ObservedSearch&>(*t.search); }

std::string with_path(const std::string& config_path, const std::string& message) {
  return (config_path.empty() ? "" : config_path + ": ") + message;
}

std::vector<TaskStatus> task_statuses(ModelTuneJob& job) {
  std::vector<TaskStatus> out;
  for (size_t i = 0; i < job.tasks.size(); ++i) {
    TaskTuning& t = job.tasks[i];
    out.push_back(TaskStatus{t.task.name, t.task.weight(), job.scheduler->trials(int(i)), observed(t).best_seconds(),
                             observed(t).reference_seconds(), std::nullopt, std::nullopt, false, std::nullopt, false});
  }
  return out;
}

// The sum over tasks of weight x the time `seconds` gives each; nullopt until every task has one.
std::optional<double> weighted_sum(const std::vector<TaskStatus>& tasks,
                                   const std::function<std::optional<double>(const TaskStatus&)>& seconds) {
  double sum = 0;
  for (const TaskStatus& t : tasks) {
    const std::optional<double> s = seconds(t);
    if (!s) return std::nullopt;
    sum += double(t.weight) * *s;
  }
  return sum;
}

std::optional<double> weighted_sum(const std::vector<TaskStatus>& tasks, bool starts) {
  return weighted_sum(tasks, [&](const TaskStatus& t) { return starts ? t.start_seconds : t.best_seconds; });
}

// The reference and the contenders timed side by side (base.side_by_side_rounds rounds, no naive baseline), or the
// first stored comparison of exactly them: a resumed or repeated job decides as the first one did and times nothing
// twice. A later comparison of the same schedules (the job's final one) overturns no decision already taken. nullopt
// when a stop cut the comparison short (nothing is decided from part of it).
std::optional<SideBySideComparison> compare_schedules(const Program& program, const std::string& name,
                                                      const TuneOptions& base, const Schedule& reference,
                                                      const std::vector<Schedule>& contenders,
                                                      const std::function<void(const TuneProgress&)>& on_progress) {
  const std::string workload = workload_key(program);
  const std::string target = cpu_target_key(base.threads, base.target_isa, base.toolchain);
  std::vector<std::string> hashes{Candidate(workload, target, reference).hash_hex()};
  for (const Schedule& s : contenders) hashes.push_back(Candidate(workload, target, s).hash_hex());
  {
    Database db = Database::open(base.database_path);
    db.add_workload(WorkloadRecord{workload, name, program.to_string(), ""});
    std::optional<SideBySideComparison> stored = first_complete_comparison(
        db, workload, target, hashes.front(), {hashes.begin() + 1, hashes.end()}, base.side_by_side_rounds);
    if (stored) return stored;
  }
  ListSearch nothing({}, reference);
  TuneOptions options = base;
  options.trials = 1;
  options.minutes = 0;
  options.side_by_side = int(contenders.size());
  options.side_by_side_contenders = contenders;
  options.side_by_side_naive = false;
  std::optional<SideBySideComparison> timed = tune(program, name, options, nothing, on_progress).side_by_side;
  if (timed &&
      is_complete_comparison(*timed, hashes.front(), {hashes.begin() + 1, hashes.end()}, base.side_by_side_rounds))
    return timed;
  return std::nullopt;
}

const SideBySideEntry* entry_of(const SideBySideComparison& comparison, const Schedule& schedule) {
  const std::string json = schedule.to_json();
  for (const SideBySideEntry& e : comparison.entries)
    if (e.schedule_json == json) return &e;
  return nullptr;
}

// The tasks' kept schedules tried in the model one at a time, from the fixed schedule (`model`), the largest estimated
// gain first: each stays when the model with it beats the model without it side by side. Returns each task's
// schedule in the model it ends on (the start where its kept schedule did not hold) and leaves that model's schedule
// in `model`.
std::vector<Schedule> keep_tasks_that_hold_in_the_model(ModelTuneJob& job, const std::vector<ModelTask>& tasks,
                                                        const std::vector<Schedule>& kept, Schedule& model,
                                                        std::vector<TaskStatus>& statuses,
                                                        const std::function<void(const TuneProgress&)>& on_progress) {
  std::vector<Schedule> current;
  std::vector<bool> changed;
  for (size_t i = 0; i < job.tasks.size(); ++i) {
    current.push_back(job.tasks[i].start);
    changed.push_back(kept[i] != job.tasks[i].start);
  }
  for (size_t i : tasks_to_try_in_the_model(statuses, changed)) {
    if (job.options.stop && job.options.stop->load()) break;
    std::vector<Schedule> trial = current;
    trial[i] = kept[i];
    const Schedule schedule = assemble_schedule(job.plan, tasks, trial, job.fixed_schedule);
    ListSearch one({schedule});
    TuneOptions options = job.options;
    options.trials = 1;
    options.minutes = 0;
    tune(job.program, job.workload_name, options, one, on_progress);
    if (one.results().empty() || one.results().front().error_class != ErrorClass::kNone) continue;
    std::optional<SideBySideComparison> compared =
        compare_schedules(job.program, job.workload_name, job.options, model, {schedule}, on_progress);
    const SideBySideEntry* e = compared ? entry_of(*compared, schedule) : nullptr;
    if (!e) continue;
    statuses[i].in_model_speedup = e->speedup;
    if (!e->beats_reference()) continue;
    statuses[i].kept_in_model = true;
    current = std::move(trial);
    model = schedule;
  }
  return current;
}

// A moved model: the program its plan is of (the model with its batch decisions applied), those decisions, the plan.
struct MovedModel {
  Program program;
  Schedule batches;
  PartitionPlan plan;
};

// The batch move of one kind of group (ir/horizontal_batch.h): every batchable group of that kind in `from` batched,
// and the plan made again by the model's strategy, which the batched computes constrain anew (an LSTM's wavefront
// over layers becomes layer by layer, each layer's input projections one GEMM).
// nullopt where `from` has no group of that kind (an earlier batch changed them). The groups are batched one at a
// time, each on the program the ones before it made: one that no longer can be (a group batched before it made one
// of its members read another) is left out.
std::optional<MovedModel> batch_move(const MovedModel& from, const std::string& kind, const ModelTuneJob& job,
                                     const std::string& strategy) {
  MovedModel moved{from.program, from.batches, {}};
  for (const BatchGroup& g : batchable_groups(from.program)) {
    if (batch_group_kind(from.program, g) != kind) continue;
    try {
      moved.program = batch_computes(moved.program, g);
    } catch (const std::invalid_argument&) {
      continue;
    }
    moved.batches.batch(g.batched, g.members, g.stacked);
  }
  if (moved.batches.decisions().size() == from.batches.decisions().size()) return std::nullopt;
  moved.plan = make_plan(strategy, analyze(moved.program, job.target));
  moved.plan.strategy = strategy + "+moves";
  return moved;
}

// The partition search: from the plan the tasks were tuned on and its schedule `best_schedule`,
// search.partition_moves moves, each measured end to end and kept when the model it gives beats the best so far side
// by side (with job.side_by_side; else when its one measurement is the faster). The first moves batch the model's
// batchable groups, a kind at a time (a move each); then plan moves (analysis/plan_mutation.h). A moved plan's stages
// that equal a tuned task (up to names) take that task's schedule; new stages take the moved plan's fixed schedule.
// Returns the schedule of the model it ended on.
Schedule search_partitions(ModelTuneJob& job, const std::vector<ModelTask>& tuned_tasks,
                           const std::vector<Schedule>& tuned_bests, Schedule best_schedule, ModelTuneSummary& summary,
                           const std::function<void(const TuneProgress&)>& on_progress) {
  summary.best_plan_strategy = job.plan.strategy;
  summary.best_plan_kernels = job.plan.kernel_count();
  summary.best_plan_stages = job.plan.stage_count();
  if (job.partition_moves <= 0) return best_schedule;
  std::map<uint64_t, std::pair<const ModelTask*, const Schedule*>> tuned;
  for (size_t i = 0; i < tuned_tasks.size(); ++i)
    tuned.emplace(tuned_tasks[i].structure, std::make_pair(&tuned_tasks[i], &tuned_bests[i]));
  MovedModel best{job.program, Schedule(), job.plan};
  ProgramAnalysis analysis = analyze(best.program, job.target);
  std::optional<double> best_seconds = summary.assembled_seconds;
  if (summary.fixed_seconds && (!best_seconds || *summary.fixed_seconds < *best_seconds))
    best_seconds = summary.fixed_seconds;
  // The kinds of batchable group, in program order, each tried once.
  std::vector<std::string> batch_kinds;
  for (const BatchGroup& g : batchable_groups(job.program)) {
    std::string kind = batch_group_kind(job.program, g);
    if (std::find(batch_kinds.begin(), batch_kinds.end(), kind) == batch_kinds.end()) batch_kinds.push_back(kind);
  }
  // Its own engine, so that the moves depend on the seed alone and not on how the rounds went.
  std::mt19937_64 rng(job.options.seed);
  for (int n = 0; n < job.partition_moves; ++n) {
    if (job.options.stop && job.options.stop->load()) break;
    std::optional<MovedModel> moved;
    PartitionTrial trial{"", 0, 0, std::nullopt, "", std::nullopt, false};
    if (size_t(n) < batch_kinds.size()) {
      trial.move = "batch";
      try {
        moved = batch_move(best, batch_kinds[size_t(n)], job, job.plan.strategy);
      } catch (const std::exception& e) {  // a plan the strategy cannot make of the batched program
        trial.error = e.what();
        summary.partition_trials.push_back(trial);
        continue;
      }
    } else {
      const PlanMove move = all_plan_moves()[size_t(rng() % all_plan_moves().size())];
      trial.move = plan_move_name(move);
      if (std::optional<PartitionPlan> plan = move_plan(best.plan, analysis, move, rng))
        moved = MovedModel{best.program, best.batches, std::move(*plan)};
    }
    if (!moved) {
      trial.error = "no place for the move";
      summary.partition_trials.push_back(trial);
      continue;
    }
    trial.kernels = moved->plan.kernel_count();
    trial.stages = moved->plan.stage_count();
    const Schedule moved_fixed = strategy_schedule(moved->program, moved->plan, job.fixed_options);
    std::vector<ModelTask> tasks = extract_tasks(moved->program, moved->plan, job.workload_name);
    std::vector<Schedule> schedules;
    for (const ModelTask& t : tasks) {
      auto it = tuned.find(t.structure);
      schedules.push_back(it == tuned.end() ? task_schedule(moved_fixed, t, job.fixed_options)
                                            : schedule_for_task(*it->second.second, *it->second.first, t));
    }
    const Schedule moved_schedule =
        after_batches(moved->batches, assemble_schedule(moved->plan, tasks, schedules, moved_fixed));
    ListSearch one({moved_schedule});
    TuneOptions options = job.options;
    options.trials = 1;
    options.minutes = 0;
    tune(job.program, job.workload_name, options, one, on_progress);
    for (const TrialResult& r : one.results()) {
      trial.seconds = r.seconds;
      if (r.error_class != ErrorClass::kNone) trial.error = to_string(r.error_class);
    }
    if (trial.seconds && job.side_by_side > 0) {
      // One measurement of each says little on a machine whose speed drifts: the move is kept only when it is faster
      // timed call by call with the best plan so far.
      std::optional<SideBySideComparison> compared =
          compare_schedules(job.program, job.workload_name, job.options, best_schedule, {moved_schedule}, on_progress);
      const SideBySideEntry* e = compared ? entry_of(*compared, moved_schedule) : nullptr;
      if (e) trial.speedup = e->speedup;
      trial.kept = e && e->beats_reference();
    } else {
      trial.kept = trial.seconds && (!best_seconds || *trial.seconds < *best_seconds);
    }
    if (trial.kept) {
      best_seconds = trial.seconds;
      if (moved->batches.decisions().size() != best.batches.decisions().size())
        analysis = analyze(moved->program, job.target);
      best = std::move(*moved);
      best_schedule = moved_schedule;
    }
    summary.partition_trials.push_back(trial);
  }
  summary.best_plan_strategy = best.plan.strategy;
  summary.best_plan_kernels = best.plan.kernel_count();
  summary.best_plan_stages = best.plan.stage_count();
  Database db = Database::open(job.options.database_path);
  if (auto best_measured = db.best(workload_key(job.program),
                                   cpu_target_key(job.options.threads, job.options.target_isa, job.options.toolchain)))
    summary.best_seconds = best_measured->measurement.statistics->median;
  return best_schedule;
}

}  // namespace

std::vector<size_t> tasks_to_try_in_the_model(const std::vector<TaskStatus>& tasks, const std::vector<bool>& changed) {
  // On the Intel Xeon VM one comparison of the whole model moved by about 5%: a smaller gain is not resolved there.
  constexpr double kSmallestModelGain = 0.01;
  std::vector<size_t> out;
  const std::optional<double> fixed_estimate = compared_estimate(tasks, true);
  if (!fixed_estimate) return out;
  std::vector<std::pair<double, size_t>> order;  // (estimated gain, task)
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskStatus& t = tasks[i];
    if (!changed.at(i) || !t.compared_start_seconds || !t.compared_kept_seconds) continue;
    const double gain = double(t.weight) * (*t.compared_start_seconds - *t.compared_kept_seconds);
    if (gain >= kSmallestModelGain * *fixed_estimate) order.emplace_back(gain, i);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& entry : order) out.push_back(entry.second);
  return out;
}

std::optional<double> compared_estimate(const std::vector<TaskStatus>& tasks, bool starts) {
  return weighted_sum(tasks, [&](const TaskStatus& t) {
    const std::optional<double> compared = starts ? t.compared_start_seconds : t.compared_kept_seconds;
    if (compared) return compared;
    return starts || t.too_small_to_compare ? t.start_seconds : t.best_seconds;
  });
}

int64_t task_flush_bytes(int64_t model_weight_bytes, const CpuLimits& cpu) {
  // A task runs alone, over and over. Where the model's weights do not fit the last-level cache (BERT's 340 MB), each
  // stage finds them in memory in the model, while alone they would stay in cache from the run before: each run then
  // starts after twice the caches were written (Ansor measures tasks with its CPU cache flush for the same reason).
  // Where they fit (EfficientNet's 21 MB in a 32 MB L3), the model finds them in cache, and a flushed task tunes for
  // a memory it never meets: EfficientNet tuned 10 minutes by tasks ran 1.01x the fixed schedule side by side with
  // the flush, 1.04-1.05x without (Zen 5, docs/whole_model.md).
  if (model_weight_bytes <= cpu.l3_bytes) return 0;
  return std::max<int64_t>(64 << 20, 2 * (cpu.l3_bytes + cpu.cores * cpu.l2_bytes));
}

ModelTuneJob make_model_tune_job(const RunConfig& config, const std::string& config_path,
                                 const TuneJobOptions& job_options) {
  if (config.search.strategy != "evolutionary")
    throw std::invalid_argument(with_path(config_path,
                                          "search.scope: tasks tunes each task with the evolutionary "
                                          "search; search.strategy " +
                                              config.search.strategy + " is not supported there"));
  if (resolve_target(config.target.kind).kind != TargetKind::kCpu)
    throw std::invalid_argument(with_path(config_path,
                                          "search.scope: tasks tunes on the CPU only (its tasks are "
                                          "measured with a cache flush and assembled as CPU programs); "
                                          "target.kind " +
                                              config.target.kind + " tunes the whole program: search.scope program"));
  JobStart start = start_job(config, config_path);
  Target& target = start.target;
  TuneOptions& options = start.options;
  ConfiguredWorkload& workload = start.workload;
  const Program& program = workload.program;
  PartitionPlan plan = make_plan(config.search.fusion, program, target);
  const int lanes = int(target.cpu.simd_fp32_lanes);
  FixedScheduleOptions fixed;
  fixed.weights = workload.weights;
  fixed = fixed_options_for_target(std::move(fixed), target);
  Schedule fixed_schedule = strategy_schedule(program, plan, fixed);

  // The model's values everywhere: the tasks read their inputs from them and are checked against them.
  TensorMap values = random_inputs(program, options.seed, options.input_ranges);
  for (const auto& [name, value] : options.fixed_inputs) values.insert_or_assign(name, value);
  for (auto& [name, value] : interpret(program, values)) values.insert_or_assign(name, std::move(value));
  for (const Tensor& out : program.outputs()) options.expected_outputs.emplace(out->name, values.at(out->name));
  // The model's outputs' noise: a task is checked against the interpreter's exact inputs to it, so it gets none.
  options.runner.rounding_noise = rounding_noise(program, values, values);

  Database db = Database::open(options.database_path);
  const std::string& target_key = start.target_key;
  std::ostringstream notes;
  std::shared_ptr<XGBoostCostModel> cost_model;
  if (config.search.cost_model == "xgboost") {
    cost_model = std::make_shared<XGBoostCostModel>(target, job_options.model);
    const std::string own = tuning_run_model_source(workload.name + "/");
    warm_up_cost_model(
        *cost_model, db, target_key, [&](const std::string& trained_on) { return trained_on.rfind(own, 0) == 0; },
        notes);
  }
  const std::string model_key = workload_key(program);
  db.add_workload(WorkloadRecord{model_key, workload.name, program.to_string(), ""});
  const std::string plan_hash = hash_hex(fnv1a64(plan_to_json(plan).dump()));
  SamplerOptions sampler;
  sampler.simd_fp32_lanes = lanes;
  EvolutionOptions evolution;
  evolution.population = config.search.population;
  evolution.generations = config.search.generations;
  evolution.mutation_probability = config.search.mutation_probability;
  evolution.epsilon = config.search.epsilon;
  evolution.simd_fp32_lanes = lanes;
  int64_t weight_bytes = 0;
  for (const Tensor& input : program.placeholders())
    if (std::find(workload.weights.begin(), workload.weights.end(), input->name) != workload.weights.end())
      weight_bytes += input->num_elements() * dtype_bytes(input->dtype);
  const int64_t flush_bytes = task_flush_bytes(weight_bytes, target.cpu);
  std::vector<TaskTuning> tunings;
  std::vector<double> weights;
  for (ModelTask& task : extract_tasks(program, plan, workload.name)) {
    const size_t index = tunings.size();
    Schedule start = task_schedule(fixed_schedule, task, fixed);
    TuneOptions task_options = options;
    task_options.fixed_inputs = task_inputs(task, values);
    task_options.expected_outputs = task_expected_outputs(task, values);
    task_options.input_ranges.clear();
    task_options.runner.flush_cache_bytes = flush_bytes;
    task_options.runner.rounding_noise.clear();
    sampler.layout = plan_layout(task.plan);
    auto space = std::make_shared<const SketchSpace>(task.program, task.plan, fixed, sampler);
    const std::string task_key = workload_key(task.program);
    EvolutionSeeds seeds{start, measured_seeds(db, target_key, task_key, config.seed, config.search.population)};
    // Each task's search draws from its own seed, so that the tasks of one job do not mirror each other's draws.
    auto search = std::make_unique<ObservedSearch>(std::make_unique<EvolutionarySearch>(
        space, config.seed + index, std::move(seeds), cost_model, task.name, evolution));
    db.add_workload(WorkloadRecord{task_key, task.name, task.program.to_string(), ""});
    db.add_model_task(ModelTaskRecord{model_key, plan_hash, plan.strategy, int64_t(index), task_key, task.weight(),
                                      occurrences_json(task), ""});
    weights.push_back(double(task.weight()));
    tunings.push_back(
        TaskTuning{std::move(task), std::move(task_options), std::move(space), std::move(search), std::move(start)});
  }
  notes << "tasks: " << tunings.size() << " distinct of " << plan.stage_count() << " stages, measured "
        << (flush_bytes > 0 ? "with cold caches" : "with warm caches") << " (weights " << weight_bytes / (1 << 20)
        << " MiB, last-level cache " << target.cpu.l3_bytes / (1 << 20) << " MiB)\n";
  auto scheduler = std::make_unique<TaskScheduler>(weights, config.seed);
  const int round_trials = config.search.batch > 0 ? config.search.batch : 8;
  const int side_by_side = options.side_by_side;
  options.side_by_side = 0;
  for (TaskTuning& t : tunings) t.options.side_by_side = 0;
  return ModelTuneJob{workload.name,
                      std::move(workload.program),
                      std::move(target),
                      std::move(plan),
                      std::move(options),
                      std::move(fixed_schedule),
                      fixed,
                      std::move(tunings),
                      std::move(cost_model),
                      std::move(scheduler),
                      round_trials,
                      config.search.partition_moves,
                      notes.str(),
                      side_by_side};
}

ModelTuneSummary run_model_tune_job(ModelTuneJob& job,
                                    const std::function<void(const ModelTuneProgress&)>& on_progress) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - started).count(); };
  const double budget_seconds = job.options.minutes * 60;
  ModelTuneSummary summary;
  summary.workload_hash = workload_key(job.program);
  ModelTuneProgress progress;
  progress.trials_budget = job.options.trials;
  auto report = [&](int task, const TuneProgress& round) {
    if (!on_progress) return;
    progress.tasks = task_statuses(job);
    progress.task = task;
    progress.round = round;
    progress.estimated_seconds = weighted_sum(progress.tasks, false);
    progress.fixed_estimated_seconds = weighted_sum(progress.tasks, true);
    progress.elapsed_seconds = elapsed();
    progress.eta_seconds.reset();
    if (job.options.trials > 0 && progress.trials_done > 0)
      progress.eta_seconds = elapsed() / double(progress.trials_done) *
                             double(std::max<int64_t>(0, job.options.trials - progress.trials_done));
    if (budget_seconds > 0) {
      const double left = std::max(0.0, budget_seconds - elapsed());
      progress.eta_seconds = progress.eta_seconds ? std::min(*progress.eta_seconds, left) : left;
    }
    on_progress(progress);
  };

  int64_t trials_done = 0;
  auto stop_requested = [&] { return job.options.stop && job.options.stop->load(); };
  for (;;) {
    if (stop_requested()) break;
    if (job.options.trials > 0 && trials_done >= job.options.trials) break;
    if (budget_seconds > 0 && elapsed() >= budget_seconds) break;
    std::optional<int> next = job.scheduler->next_task();
    if (!next) {
      summary.exhausted = true;
      break;
    }
    TaskTuning& t = job.tasks[size_t(*next)];
    TuneOptions options = t.options;
    options.stop = job.options.stop;
    options.trials = job.round_trials;
    if (job.options.trials > 0) options.trials = std::min<int64_t>(options.trials, job.options.trials - trials_done);
    options.minutes = budget_seconds > 0 ? std::max(1e-3, (budget_seconds - elapsed()) / 60) : 0;
    TuneSummary round = tune(t.task.program, t.task.name, options, *t.search, [&](const TuneProgress& p) {
      progress.trials_done = trials_done + p.trials_done;
      report(*next, p);
    });
    const int64_t used = round.measured_now + round.skipped;
    trials_done += used;
    progress.trials_done = trials_done;
    summary.measured_now += round.measured_now;
    summary.errors_now += round.errors_now;
    job.scheduler->record(*next, used, observed(t).best_seconds());
    if (round.exhausted || used == 0) job.scheduler->exhaust(*next);
  }
  summary.trials_done = trials_done;
  summary.tasks = task_statuses(job);
  if (stop_requested()) {
    summary.stopped = true;
    return summary;
  }

  // Each task's best few and its start side by side: the schedule kept there (SideBySideComparison::kept) is the one
  // the model is assembled from.
  // A task whose best could gain the model less than 0.1% of its estimate keeps its start uncompared: a gain that
  // small is never seen in the model, and on the Intel Xeon VM each comparison took about 10 s (Swin: 77 tasks).
  std::vector<ModelTask> tasks;
  std::vector<Schedule> bests;
  const std::optional<double> start_estimate = weighted_sum(summary.tasks, true);
  for (size_t i = 0; i < job.tasks.size(); ++i) {
    TaskTuning& t = job.tasks[i];
    tasks.push_back(t.task);
    bests.push_back(observed(t).best_schedule().value_or(t.start));
    if (job.side_by_side <= 0 || bests.back() == t.start || stop_requested()) continue;
    const TaskStatus& status = summary.tasks[i];
    if (start_estimate && status.start_seconds && status.best_seconds &&
        double(status.weight) * (*status.start_seconds - *status.best_seconds) < 1e-3 * *start_estimate) {
      bests.back() = t.start;
      summary.tasks[i].too_small_to_compare = true;
      continue;
    }
    std::vector<Schedule> few;
    for (Schedule& s : observed(t).best_few(job.side_by_side + 1))
      if (s != t.start && int(few.size()) < job.side_by_side) few.push_back(std::move(s));
    TuneOptions compare = t.options;
    compare.stop = job.options.stop;
    std::optional<SideBySideComparison> compared = compare_schedules(t.task.program, t.task.name, compare, t.start, few,
                                                                     [&](const TuneProgress& p) { report(int(i), p); });
    const SideBySideEntry* start = compared ? entry_of(*compared, t.start) : nullptr;
    const SideBySideEntry* kept = compared ? compared->kept() : nullptr;
    if (!start || !kept) continue;
    summary.tasks[i].compared_start_seconds = start->median_seconds;
    summary.tasks[i].compared_kept_seconds = kept->median_seconds;
    bests.back() = Schedule::from_json(kept->schedule_json);
  }
  if (stop_requested()) {
    summary.stopped = true;
    return summary;
  }

  // End to end: the fixed schedule and the assembled one, verified against the interpreter's outputs of the model.
  bool all_starts = true;
  for (size_t i = 0; i < bests.size(); ++i) all_starts = all_starts && bests[i] == job.tasks[i].start;
  // The starts assemble to the fixed schedule's decisions in another order: the same program under another key.
  Schedule assembled = all_starts ? job.fixed_schedule : assemble_schedule(job.plan, tasks, bests, job.fixed_schedule);
  summary.assembled_schedule_json = assembled.to_json();
  ListSearch end_to_end({job.fixed_schedule, assembled});
  TuneOptions options = job.options;
  options.trials = 2;
  options.minutes = 0;
  TuneSummary model =
      tune(job.program, job.workload_name, options, end_to_end, [&](const TuneProgress& p) { report(-1, p); });
  summary.measured_now += model.measured_now;
  summary.errors_now += model.errors_now;
  summary.best_seconds = model.best_seconds;
  const uint64_t assembled_hash = assembled.hash();
  for (const TrialResult& r : end_to_end.results()) {
    const bool is_assembled = r.candidate.schedule().hash() == assembled_hash;
    if (r.candidate.schedule().hash() == job.fixed_schedule.hash()) summary.fixed_seconds = r.seconds;
    if (is_assembled) {
      summary.assembled_seconds = r.seconds;
      if (r.error_class != ErrorClass::kNone) summary.assembled_error = to_string(r.error_class);
    }
  }
  // A stop between the phases below ends the job as a stop in the rounds does: nothing is decided from a phase it cut
  // short, and the final comparison is not made.
  auto stopped = [&] {
    summary.stopped = stop_requested();
    return summary.stopped;
  };
  if (stopped()) return summary;
  Schedule best_schedule = job.fixed_schedule;
  if (job.side_by_side > 0 && summary.assembled_seconds && !all_starts) {
    std::optional<SideBySideComparison> compared =
        compare_schedules(job.program, job.workload_name, job.options, job.fixed_schedule, {assembled},
                          [&](const TuneProgress& p) { report(-1, p); });
    const SideBySideEntry* e = compared ? entry_of(*compared, assembled) : nullptr;
    if (e) summary.assembled_speedup = e->speedup;
    if (e && e->beats_reference()) best_schedule = assembled;
  } else if (summary.assembled_seconds && summary.fixed_seconds &&
             *summary.assembled_seconds < *summary.fixed_seconds) {
    best_schedule = assembled;
  }
  if (stopped()) return summary;
  if (job.side_by_side > 0 && best_schedule == job.fixed_schedule && !all_starts)
    bests = keep_tasks_that_hold_in_the_model(job, tasks, bests, best_schedule, summary.tasks,
                                              [&](const TuneProgress& p) { report(-1, p); });
  if (stopped()) return summary;
  best_schedule =
      search_partitions(job, tasks, bests, best_schedule, summary, [&](const TuneProgress& p) { report(-1, p); });
  if (stopped()) return summary;
  if (job.side_by_side > 0) {
    // A run that proposes nothing: it only compares the fixed schedule with the schedule the job ended on and the
    // model's best few single measurements (of this run or any before; the least of them is what `ingot best` answers
    // unless a comparison that timed it keeps another).
    std::vector<Schedule> finalists;
    if (best_schedule != job.fixed_schedule) finalists.push_back(best_schedule);
    const std::string target = cpu_target_key(job.options.threads, job.options.target_isa, job.options.toolchain);
    const std::string fixed_hash = Candidate(summary.workload_hash, target, job.fixed_schedule).hash_hex();
    for (MeasuredSchedule& m :
         fastest_correct_schedules(Database::open(job.options.database_path).history(summary.workload_hash), target,
                                   job.side_by_side, fixed_hash))
      if (m.schedule != best_schedule) finalists.push_back(std::move(m.schedule));
    ListSearch nothing({}, job.fixed_schedule);
    TuneOptions compare = job.options;
    compare.trials = 1;
    compare.minutes = 0;
    compare.side_by_side = job.side_by_side;
    compare.side_by_side_contenders = std::move(finalists);
    summary.side_by_side = tune(job.program, job.workload_name, compare, nothing, [&](const TuneProgress& p) {
                             report(-1, p);
                           }).side_by_side;
  }
  return summary;
}

}  // namespace ingot
