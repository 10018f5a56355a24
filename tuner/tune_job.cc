#include "tuner/tune_job.h"

#include <sstream>
#include <stdexcept>

#include "analysis/strategies.h"
#include "costmodel/features.h"
#include "results/database.h"
#include "space/strategy_schedule.h"

namespace ingot {

TuneOptions tune_options_from_config(const RunConfig& config) {
  TuneOptions o;
  o.database_path = config.database;
  o.trials = config.budget.trials;
  o.minutes = config.budget.minutes;
  o.seed = config.seed;
  o.threads = config.target.threads;
  o.builder.compile.compiler = config.target.compiler;
  if (!config.target.flags.empty()) o.builder.compile.flags = config.target.flags;
  o.builder.compile.timeout_seconds = config.measure.build_timeout_s;
  o.builder.workers = config.measure.build_workers;
  o.runner.warmup_runs = config.measure.warmup_runs;
  o.runner.min_repeat_ms = config.measure.min_repeat_ms;
  o.runner.min_repeats = config.measure.min_repeats;
  o.runner.max_repeats = config.measure.max_repeats;
  o.runner.run_timeout_seconds = config.measure.run_timeout_s;
  o.runner.rtol = config.measure.rtol;
  o.runner.atol = config.measure.atol;
  o.config_text = format_run_config(config);
  return o;
}

namespace {

// The model a run starts from: the target's newest stored model that no tuning run of this workload made (those,
// the run relearns from the results it is told again, so a resumed run proposes what the interrupted one did).
void warm_up(XGBoostCostModel& model, const TuneOptions& options, const std::string& workload_name,
             std::ostream& notes) {
  Database db = Database::open(options.database_path);
  const std::vector<CostModelRecord> stored = db.cost_models(cpu_target_key(options.threads));
  for (auto it = stored.rbegin(); it != stored.rend(); ++it) {
    if (it->trained_on == tuning_run_model_source(workload_name)) continue;
    if (it->feature_set_version != kFeatureSetVersion) {
      notes << "cost model: ignoring the stored model " << it->id << " (feature set version " << it->feature_set_version
            << "; this ingot computes version " << kFeatureSetVersion << ")\n";
      return;
    }
    try {
      model.load_json(it->model_json);
      notes << "cost model: starting from stored model " << it->id << " (" << it->sample_count << " samples, "
            << it->trained_on << ")\n";
    } catch (const CostModelError& e) {
      notes << "cost model: ignoring the stored model " << it->id << ": " << e.what() << "\n";
    }
    return;
  }
}

}  // namespace

TuneJob make_tune_job(const RunConfig& config, const std::string& config_path) {
  Target target = resolve_target(config.target.kind);
  if (target.kind != TargetKind::kCpu)
    throw std::invalid_argument(
        (config_path.empty() ? "" : config_path + ": ") + "target.kind: " + config.target.kind +
        " is a GPU target, and GPU candidates cannot be measured yet: " + "only target.kind cpu can be tuned");
  TuneOptions options = tune_options_from_config(config);
  options.config_path = config_path;
  ConfiguredWorkload workload = make_configured_workload(config.workload);
  options.input_ranges = std::move(workload.input_ranges);
  options.fixed_inputs = std::move(workload.fixed_inputs);
  PartitionPlan plan = make_plan(config.search.fusion, workload.program, target);
  SamplerOptions sampler;
  sampler.layout = plan_layout(plan);
  sampler.simd_fp32_lanes = int(target.cpu.simd_fp32_lanes);
  auto space = std::make_shared<const SamplerSpace>(workload.program, sampler);
  std::shared_ptr<XGBoostCostModel> model;
  std::ostringstream notes;
  if (config.search.strategy == "ranked") {
    model = std::make_shared<XGBoostCostModel>(target);
    warm_up(*model, options, workload.name, notes);
  }
  std::unique_ptr<SearchStrategy> search =
      make_search_strategy(config.search.strategy, space, config.seed, model, workload.name);
  return TuneJob{
      std::move(workload.name), std::move(workload.program), std::move(target), std::move(plan), std::move(options),
      std::move(space),         std::move(search),           std::move(model),  notes.str()};
}

TuneSummary run_tune_job(TuneJob& job, const std::function<void(const TuneProgress&)>& on_progress) {
  return tune(job.program, job.workload_name, job.options, *job.search, on_progress);
}

}  // namespace ingot
