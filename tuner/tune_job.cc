#include "tuner/tune_job.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "analysis/strategies.h"
#include "compile/cpp_compiler.h"
#include "costmodel/features.h"
#include "interp/interpreter.h"
#include "lower/vector_tiles.h"
#include "results/database.h"
#include "space/sketch_space.h"
#include "space/strategy_schedule.h"
#include "tuner/candidate.h"
#include "tuner/evolutionary_search.h"
#include "tuner/measured_dataset.h"
#include "tuner/ranked_search.h"

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
  std::tie(o.runner.rtol, o.runner.atol) =
      verification_tolerance(config.workload.precision, config.measure.rtol, config.measure.atol);
  o.side_by_side = config.measure.side_by_side;
  o.side_by_side_rounds = config.measure.side_by_side_rounds;
  o.batch_size = config.search.batch;
  o.config_text = format_run_config(config);
  return o;
}

void warm_up_cost_model(XGBoostCostModel& model, const Database& db, const std::string& target,
                        const std::function<bool(const std::string&)>& made_by_this_job, std::ostream& notes) {
  const std::vector<CostModelRecord> stored = db.cost_models(target);
  for (auto it = stored.rbegin(); it != stored.rend(); ++it) {
    if (made_by_this_job(it->trained_on)) continue;
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

std::vector<MeasuredSchedule> measured_seeds(const Database& db, const std::string& target, const std::string& workload,
                                             uint64_t seed, int limit) {
  std::map<int64_t, bool> same_seed;  // run id -> whether its seed is `seed`
  std::vector<MeasuredCandidate> history;
  for (MeasuredCandidate& m : db.history(workload)) {
    auto run = same_seed.find(m.measurement.run_id);
    if (run == same_seed.end()) {
      std::optional<RunInfo> info = db.run(m.measurement.run_id);
      run = same_seed.emplace(m.measurement.run_id, !info || info->seed == seed).first;
    }
    if (!run->second) history.push_back(std::move(m));
  }
  return fastest_correct_schedules(history, target, limit);
}

CpuIsa target_isa(const std::string& setting) {
  if (setting == "native") return host_cpu_isa();
  std::optional<CpuIsa> isa = parse_cpu_isa(setting);
  if (!isa) throw std::invalid_argument("unknown ISA '" + setting + "' (known: native, avx512, avx2, generic)");
  return *isa;
}

std::string target_isa_key(const std::string& setting) {
  const CpuIsa isa = target_isa(setting);
  return isa == host_cpu_isa() ? "" : cpu_isa_name(isa);
}

void check_bf16_precision(CpuIsa isa, const std::string& where) {
  if (!host_has_avx512_bf16())
    throw std::invalid_argument(where + ": bf16 needs AVX-512 BF16 (or AMX), and this CPU (" +
                                cpu_isa_name(host_cpu_isa()) + ") has neither; use fp32");
  if (isa != CpuIsa::kAvx512)
    throw std::invalid_argument(where + ": bf16 is written for AVX-512 BF16, not for " + cpu_isa_name(isa) +
                                " code; use the ISA native or avx512");
}

std::pair<double, double> verification_tolerance(const std::string& precision, double rtol, double atol) {
  if (precision != "bf16") return {rtol, atol};
  return {std::max(rtol, kBf16Tolerance), std::max(atol, kBf16Tolerance)};
}

std::string cpp_flags_for(CpuIsa isa) { return cpp_flags(isa_flags_for(isa)); }

std::string isa_flags_for(CpuIsa isa) {
  const std::string flags = cpu_isa_compiler_flags(isa);
  return flags.empty() ? default_isa_flags() : flags;
}

namespace {

// The config's target: target.kind resolved, a CPU's code of target.isa.
Target config_target(const RunConfig& config) {
  Target target = resolve_target(config.target.kind);
  if (target.kind == TargetKind::kCpu && target.cpu.isa != target_isa(config.target.isa))
    target = with_cpu_isa(target, target_isa(config.target.isa));
  return target;
}

}  // namespace

ConfiguredWorkload configured_workload(const RunConfig& config, const std::string& measured_hash) {
  const int64_t multiple = bf16_conv_channel_multiple(config_target(config));
  ConfiguredWorkload w = make_configured_workload(config.workload, multiple);
  if (measured_hash.empty() || config.workload.precision != "bf16" || workload_key(w.program) == measured_hash)
    return w;
  // Measured on a machine with AMX and read on one without, or the other way round: the other padding.
  ConfiguredWorkload other = make_configured_workload(config.workload, multiple == 2 ? kAmxTileK : int64_t(2));
  return workload_key(other.program) == measured_hash ? other : w;
}

JobStart start_job(const RunConfig& config, const std::string& config_path) {
  const std::string where = config_path.empty() ? "" : config_path + ": ";
  Target target = resolve_target(config.target.kind);
  TuneOptions options = tune_options_from_config(config);
  options.config_path = config_path;
  std::string target_key;
  if (target.kind == TargetKind::kGpu) {
    if (config.workload.precision == "bf16")
      throw std::invalid_argument(where + "precision: bf16 has no CUDA form (the CUDA printer writes fp32); use fp32");
    // Before the database is opened: nothing is created or recorded where no candidate can be measured.
    const GpuProbe gpu = probe_gpu();
    if (!gpu.available)
      throw GpuUnavailable(where + "target.kind: " + config.target.kind +
                           " candidates are measured on this machine's GPU, and none is usable: " + gpu.reason);
    options.gpu = true;
    target_key = gpu_target_key(gpu.device, gpu.arch);
  } else {
    if (target.cpu.isa != target_isa(config.target.isa)) target = with_cpu_isa(target, target_isa(config.target.isa));
    if (!host_runs(target.cpu.isa))
      throw std::invalid_argument(where + "target.isa: " + config.target.isa + " code cannot run on this CPU (" +
                                  cpu_isa_name(host_cpu_isa()) +
                                  "), so its candidates cannot be measured here; `ingot lower` and `ingot run --isa` "
                                  "compile it");
    if (config.workload.precision == "bf16") check_bf16_precision(target.cpu.isa, where + "precision");
    options.target_isa = target_isa_key(config.target.isa);
    options.toolchain = toolchain_key(config.target.compiler, config.target.flags);
    if (config.target.flags.empty()) options.builder.compile.flags = cpp_flags_for(target.cpu.isa);
    // Before the database is opened (the evolutionary search reads its seeds from it): nothing is created or
    // recorded for a toolchain that cannot build.
    check_toolchain(options.builder.compile);
    target_key = cpu_target_key(options.threads, options.target_isa, options.toolchain);
  }
  ConfiguredWorkload workload = make_configured_workload(config.workload, bf16_conv_channel_multiple(target));
  // Before the database is opened too: a workload too large for this machine leaves no run behind.
  check_program_fits_memory(workload.program);
  options.input_ranges = std::move(workload.input_ranges);
  options.fixed_inputs = std::move(workload.fixed_inputs);
  return JobStart{std::move(target), std::move(target_key), std::move(options), std::move(workload)};
}

TuneJob make_tune_job(const RunConfig& config, const std::string& config_path, const TuneJobOptions& job_options) {
  JobStart start = start_job(config, config_path);
  Target& target = start.target;
  TuneOptions& options = start.options;
  ConfiguredWorkload& workload = start.workload;
  const SearchConfig& search_config = config.search;
  if (search_config.strategy == "ranked" && search_config.cost_model == "none")
    throw std::invalid_argument((config_path.empty() ? "" : config_path + ": ") +
                                "search.cost_model: none leaves search.strategy ranked nothing to rank by");
  PartitionPlan plan = make_plan(search_config.fusion, workload.program, target);
  const bool gpu = target.kind == TargetKind::kGpu;
  const int lanes = int(target.cpu.simd_fp32_lanes);  // 0 on a GPU: no explicit vectors
  SamplerOptions sampler;
  sampler.layout = plan_layout(plan);
  sampler.simd_fp32_lanes = lanes;
  sampler.gpu = gpu;
  std::shared_ptr<XGBoostCostModel> model;
  std::ostringstream notes;
  const bool evolutionary = search_config.strategy == "evolutionary";
  // Opened (and checked) once, by the strategies that read it before the run: the random search reads nothing.
  std::optional<Database> db;
  if (evolutionary || search_config.strategy == "ranked") db = Database::open(options.database_path);
  const std::string& target_key = start.target_key;
  if (search_config.strategy == "ranked" || (evolutionary && search_config.cost_model == "xgboost")) {
    model = std::make_shared<XGBoostCostModel>(target, job_options.model);
    const std::string own = tuning_run_model_source(workload.name);
    warm_up_cost_model(
        *model, *db, target_key, [&](const std::string& trained_on) { return trained_on == own; }, notes);
  }
  std::shared_ptr<const SpaceGenerator> space;
  std::unique_ptr<SearchStrategy> search;
  if (evolutionary) {
    FixedScheduleOptions fixed;
    fixed.gpu = gpu;
    fixed.simd_fp32_lanes = lanes;
    fixed.weights = workload.weights;
    fixed = fixed_options_for_target(std::move(fixed), target);
    auto sketches = std::make_shared<const SketchSpace>(workload.program, plan, fixed, sampler);
    EvolutionSeeds seeds{sketches->fixed_schedule(), measured_seeds(*db, target_key, workload_key(workload.program),
                                                                    config.seed, search_config.population)};
    EvolutionOptions evolution;
    evolution.population = search_config.population;
    evolution.generations = search_config.generations;
    evolution.mutation_probability = search_config.mutation_probability;
    evolution.epsilon = search_config.epsilon;
    evolution.simd_fp32_lanes = lanes;
    space = sketches;
    search =
        std::make_unique<EvolutionarySearch>(space, config.seed, std::move(seeds), model, workload.name, evolution);
  } else {
    space = std::make_shared<const SamplerSpace>(workload.program, sampler);
    if (search_config.strategy == "ranked")
      search = std::make_unique<RankedSearch>(space, config.seed, model, workload.name);
    else
      search = std::make_unique<RandomSearch>(space, config.seed);
  }
  return TuneJob{
      std::move(workload.name), std::move(workload.program), std::move(target), std::move(plan), std::move(options),
      std::move(space),         std::move(search),           std::move(model),  notes.str()};
}

TuneSummary run_tune_job(TuneJob& job, const std::function<void(const TuneProgress&)>& on_progress) {
  return tune(job.program, job.workload_name, job.options, *job.search, on_progress);
}

}  // namespace ingot
