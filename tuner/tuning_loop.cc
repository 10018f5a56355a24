#include "tuner/tuning_loop.h"

#include <chrono>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>

#include "compile/cpp_compiler.h"
#include "costmodel/evaluation.h"
#include "costmodel/features.h"
#include "interp/interpreter.h"
#include "interp/rounding_noise.h"
#include "ir/hash.h"
#include "results/database.h"
#include "tuner/candidate.h"

namespace ingot {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      std::string model = colon == std::string::npos ? line : line.substr(colon + 1);
      while (!model.empty() && model.front() == ' ') model.erase(model.begin());
      return model;
    }
  return "unknown cpu";
}

int effective_threads(int threads) {
  return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
}

// Stores the search's learned model when it was trained since stored_generation (XGBoostCostModel::generation).
void store_retrained_model(Database& db, const SearchStrategy& search, const std::string& target,
                           const std::string& workload_name, int64_t& stored_generation) {
  const XGBoostCostModel* model = search.learned_model();
  if (!model || !model->trained() || model->generation() == stored_generation) return;
  stored_generation = model->generation();
  db.add_cost_model(cost_model_record(*model, target, tuning_run_model_source(workload_name)));
}

}  // namespace

CostModelRecord cost_model_record(const XGBoostCostModel& model, const std::string& target,
                                  const std::string& trained_on) {
  CostModelRecord record;
  record.target = target;
  record.feature_set_version = kFeatureSetVersion;
  record.sample_count = model.trained_samples();
  record.params_json = model.options().params.to_json();
  record.model_json = model.to_json();
  record.metrics_json = model.last_metrics() ? metrics_json(*model.last_metrics()) : "{}";
  record.trained_on = trained_on;
  return record;
}

std::string tuning_run_model_source(const std::string& workload_name) { return "tuning run of " + workload_name; }

std::string cpu_target_key(int threads, const std::string& isa, const std::string& toolchain) {
  return "cpu:" + cpu_model() + (isa.empty() ? "" : ":isa=" + isa) +
         ":threads=" + std::to_string(effective_threads(threads)) +
         (toolchain.empty() ? "" : ":toolchain=" + toolchain);
}

std::string gpu_target_key(const std::string& device, const std::string& arch) { return "gpu:" + device + ":" + arch; }

std::string gpu_key_arch(const std::string& key) {
  return key.rfind("gpu:", 0) == 0 ? key.substr(key.rfind(':') + 1) : "";
}

bool is_gpu_arch(const std::string& target) { return target == "sm_80" || target == "sm_90"; }

std::string resolve_stored_target(const Database& db, const std::string& workload, const std::string& target) {
  if (!is_gpu_arch(target)) return target;
  std::set<std::string> keys;
  for (const MeasuredCandidate& m : db.history(workload))
    if (gpu_key_arch(m.candidate.target) == target) keys.insert(m.candidate.target);
  if (keys.empty()) return gpu_target_key("(no GPU of " + target + " measured it)", target);
  if (keys.size() == 1) return *keys.begin();
  std::string message = "workload '" + workload + "' was measured on " + std::to_string(keys.size()) + " GPUs of " +
                        target + "; name one with its key:";
  for (const std::string& key : keys) message += " '" + key + "'";
  throw std::invalid_argument(message);
}

std::string toolchain_key(const std::string& compiler, const std::string& flags) {
  if (compiler.empty() && flags.empty()) return "";
  return hash_hex(fnv1a64("compiler " + compiler + "\nflags " + flags)).substr(0, 8);
}

std::string cpu_target_description(int threads, const std::string& isa, const CompileOptions& compile) {
  return cpu_target_key(threads, isa) + "; compiler: " + (compile.compiler.empty() ? "$CXX or c++" : compile.compiler) +
         " " + compile.flags;
}

TuneSummary tune(const Program& program, const std::string& workload_name, const TuneOptions& options,
                 SearchStrategy& search, const std::function<void(const TuneProgress&)>& on_progress) {
  if (options.trials <= 0 && options.minutes <= 0)
    throw std::invalid_argument("a tuning run needs a budget: trials or minutes");
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - started).count(); };
  auto out_of_time = [&] { return options.minutes > 0 && elapsed() >= options.minutes * 60; };
  auto stop_requested = [&] { return options.stop && options.stop->load(); };

  // Before anything is recorded: a compiler that cannot build at all (or a GPU that is not there) would fail every
  // candidate, and those failures would be stored as the candidates' own and skipped by every later run.
  TuneSummary summary;
  std::string description;
  if (options.gpu) {
    const GpuProbe gpu = probe_gpu();
    if (!gpu.available) throw GpuUnavailable("no usable GPU to measure GPU candidates on: " + gpu.reason);
    summary.target = gpu_target_key(gpu.device, gpu.arch);
    description = summary.target + "; kernels compiled by NVRTC for " + gpu.arch;
  } else {
    check_toolchain(options.builder.compile);
    summary.target = cpu_target_key(options.threads, options.target_isa, options.toolchain);
    description = cpu_target_description(options.threads, options.target_isa, options.builder.compile);
  }
  Database db = Database::open(options.database_path);
  summary.workload_hash = workload_key(program);
  db.add_workload(WorkloadRecord{summary.workload_hash, workload_name, program.to_string(), ""});
  RunInfo info;
  info.config_text = options.config_text;
  info.config_path = options.config_path;
  info.machine = summary.target;
  info.compiler = description;
  info.seed = options.seed;
  summary.run_id = db.begin_run(info);

  TensorMap inputs = random_inputs(program, options.seed, options.input_ranges);
  for (const auto& [name, value] : options.fixed_inputs) inputs.insert_or_assign(name, value);
  RunnerOptions runner_options = options.runner;
  TensorMap expected = options.expected_outputs;
  if (expected.empty()) {
    expected = interpret(program, inputs, {.outputs_only = true});
    runner_options.rounding_noise = rounding_noise(program, inputs, expected);
  }
  runner_options.threads = options.gpu ? 0 : options.threads;
  runner_options.gpu = options.gpu;
  runner_options.kernel_cache_dir = options.builder.compile.cache_dir;
  Runner runner(program, inputs, expected, runner_options);
  BuilderOptions builder_options = options.builder;
  builder_options.gpu = options.gpu;
  int workers = options.builder.workers > 0 ? options.builder.workers : effective_threads(0);
  int batch = options.batch_size > 0 ? options.batch_size : 2 * workers;

  TuneProgress progress;
  progress.trials_budget = options.trials;
  auto refresh_best = [&] {
    if (auto best = db.best(summary.workload_hash, summary.target)) {
      progress.best_seconds = best->measurement.statistics->median;
      summary.best_schedule_json = best->candidate.schedule_json;
    }
  };
  refresh_best();
  auto budget_left = [&] { return options.trials <= 0 || progress.trials_done < options.trials; };

  int64_t trial_index = 0;
  // A model the search loaded or trained before the loop is in the database already.
  int64_t stored_model_generation = search.learned_model() ? search.learned_model()->generation() : 0;
  while (budget_left() && !out_of_time() && !stop_requested()) {
    std::vector<Schedule> proposals = search.propose(batch);
    if (proposals.empty()) {
      summary.exhausted = true;
      break;
    }
    std::vector<TrialResult> results;  // of the batch's candidates that count, in sequence order
    std::vector<size_t> claimed;       // the positions in results of those to measure now
    for (Schedule& s : proposals) {
      int64_t index = trial_index++;
      if (options.trials > 0 && progress.trials_done + int64_t(claimed.size()) >= options.trials) break;
      Candidate candidate(summary.workload_hash, summary.target, std::move(s));
      const std::string hash = candidate.hash_hex();
      db.add_candidate(candidate.record());
      // Measured before (an earlier run, or another process now): it counts, it is not measured again.
      // Its stored outcome is told with it, so a learning search relearns it in the same order as before.
      // With retry_errors a candidate that failed before is claimed again unless a correct measurement exists.
      std::optional<Database::StoredOutcome> stored = db.first_outcome(hash, summary.target);
      const bool retry = options.retry_errors && stored && stored->error_class != ErrorClass::kNone;
      bool skipped =
          (stored.has_value() && !retry) || !db.claim(hash, summary.target, summary.run_id, options.retry_errors);
      results.push_back(TrialResult{std::move(candidate), index, skipped, ErrorClass::kNone, std::nullopt});
      if (stored && skipped) {
        results.back().error_class = stored->error_class;
        results.back().seconds = stored->median_seconds;
      }
      if (skipped) {
        ++progress.trials_done;
        ++summary.skipped;
        continue;
      }
      claimed.push_back(results.size() - 1);
    }
    auto report_phase = [&](const std::string& phase) {
      progress.phase = phase;
      progress.last = phase;
      progress.elapsed_seconds = elapsed();
      if (on_progress) on_progress(progress);
    };
    if (results.size() > claimed.size())
      report_phase("skipped " + std::to_string(results.size() - claimed.size()) + " measured before");
    if (!claimed.empty())
      report_phase("compiling " + std::to_string(claimed.size()) + " candidate" + (claimed.size() == 1 ? "" : "s"));
    std::vector<BuildInput> inputs_to_build;
    for (size_t r : claimed) inputs_to_build.emplace_back(program, results[r].candidate.schedule());
    // A compile still running when the minutes run out is stopped then; the candidate is not at fault, so it
    // is released unmeasured for a later run rather than recorded as a compile timeout.
    BuilderOptions batch_options = builder_options;
    bool cut_by_budget = false;
    if (options.minutes > 0) {
      double left = options.minutes * 60 - elapsed();
      if (left < batch_options.compile.timeout_seconds) {
        batch_options.compile.timeout_seconds = std::max(1.0, left);
        cut_by_budget = true;
      }
    }
    std::vector<BuildResult> built = Builder(batch_options).build(inputs_to_build, [&](size_t compiled, size_t total) {
      report_phase("compiled " + std::to_string(compiled) + " of " + std::to_string(total));
    });
    std::vector<bool> released(results.size(), false);
    for (size_t n = 0; n < built.size(); ++n) {
      TrialResult& result = results[claimed[n]];
      if (out_of_time() || stop_requested() || (cut_by_budget && built[n].error_class == ErrorClass::kCompileTimeout)) {
        for (size_t m = n; m < built.size(); ++m) {
          db.release_claim(results[claimed[m]].candidate.hash_hex(), summary.target);
          released[claimed[m]] = true;
        }
        break;
      }
      progress.phase = "measuring";
      Measurement m = runner.measure(built[n]);
      result.error_class = m.error_class;
      if (m.ok()) result.seconds = m.statistics.median;
      MeasurementRecord record;
      record.candidate_hash = result.candidate.hash_hex();
      record.run_id = summary.run_id;
      record.trial_index = result.trial_index;
      record.target_description = description;
      record.error_class = m.error_class;
      record.error_message = m.error_message;
      record.run_seconds = m.run_seconds;
      if (built[n].ok() || built[n].compile_seconds > 0) record.compile_seconds = built[n].compile_seconds;
      db.add_measurement(record);
      ++progress.trials_done;
      ++progress.measured_now;
      ++summary.measured_now;
      if (!m.ok()) {
        ++progress.errors_now;
        ++summary.errors_now;
      }
      refresh_best();
      progress.elapsed_seconds = elapsed();
      if (options.trials > 0 && progress.measured_now > 0) {
        double per_trial = progress.elapsed_seconds / double(progress.measured_now);
        progress.eta_seconds = per_trial * double(std::max<int64_t>(0, options.trials - progress.trials_done));
      }
      progress.last = "trial " + std::to_string(result.trial_index) + ": " + to_string(m.error_class) +
                      (m.ok() ? " " + std::to_string(m.statistics.median * 1e3) + " ms" : ": " + m.error_message);
      if (on_progress) on_progress(progress);
    }
    std::vector<TrialResult> told;
    for (size_t r = 0; r < results.size(); ++r)
      if (!released[r]) told.push_back(std::move(results[r]));
    if (!told.empty()) search.tell(told);
    progress.model_batch_accuracy = search.last_batch_accuracy();
    progress.reference_seconds = search.reference_seconds();
    // A model retrained only on results relearned from the database is one stored by the run that measured them.
    if (!claimed.empty()) store_retrained_model(db, search, summary.target, workload_name, stored_model_generation);
  }
  if (options.side_by_side > 0 && !stop_requested()) {
    std::vector<Candidate> contenders =
        side_by_side_contenders(db, summary.workload_hash, summary.target, search.reference_schedule(),
                                options.side_by_side_contenders.empty() ? options.side_by_side : 0);
    for (const Schedule& s : options.side_by_side_contenders)
      if (s != search.reference_schedule()) contenders.emplace_back(summary.workload_hash, summary.target, s);
    if (contenders.size() >= 2) {
      progress.phase = "timing " + std::to_string(contenders.size()) + " schedules side by side, " +
                       std::to_string(options.side_by_side_rounds) +
                       " rounds (up to twice that where a verdict is close)";
      progress.last = progress.phase;
      progress.elapsed_seconds = elapsed();
      if (on_progress) on_progress(progress);
      SideBySideSetup setup{&db,     summary.run_id,  description,  &program,
                            &runner, builder_options, options.stop, options.side_by_side_naive};
      const std::optional<size_t> reference =
          search.reference_schedule() ? std::optional<size_t>(0) : std::optional<size_t>();
      summary.side_by_side = compare_side_by_side(setup, contenders, reference, options.side_by_side_rounds);
    }
  }
  summary.stopped = stop_requested();
  db.end_run(summary.run_id);
  refresh_best();
  summary.best_seconds = progress.best_seconds;
  summary.reference_seconds = search.reference_seconds();
  return summary;
}

}  // namespace ingot
