#include "tuner/tune_job.h"

#include <stdexcept>

#include "analysis/strategies.h"
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
  std::unique_ptr<SearchStrategy> search = make_search_strategy(config.search.strategy, space, config.seed);
  return TuneJob{std::move(workload.name), std::move(workload.program), std::move(target),
                 std::move(plan),          std::move(options),          std::move(space),
                 std::move(search)};
}

TuneSummary run_tune_job(TuneJob& job, const std::function<void(const TuneProgress&)>& on_progress) {
  return tune(job.program, job.workload_name, job.options, *job.search, on_progress);
}

}  // namespace ingot
