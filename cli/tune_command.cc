// `ingot tune CONFIG`: a tuning run from a YAML config (flags override it), with progress on one updating
// line in a terminal and plain lines otherwise. Running it again continues where it stopped.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "configs/flag_values.h"
#include "configs/run_config.h"
#include "tuner/model_tune_job.h"
#include "tuner/tune_job.h"
#include "workloads/registry.h"

namespace ingot::cli {

namespace {

std::string duration_text(double seconds) {
  char buf[32];
  int s = int(seconds + 0.5);
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%dh%02dm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%dm%02ds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ds", s);
  return buf;
}

// "1.42x", the factor by which the best beats the fixed schedule (below 1: slower).
std::string speedup_text(double factor) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", factor);
  return text;
}

// SIGINT and SIGTERM stop a run cleanly (TuneOptions::stop); a second one ends the process at once, as usual.
std::atomic<bool> stop_requested{false};
std::atomic<int> stop_signal{0};

extern "C" void request_stop(int signal) {
  stop_signal.store(signal);
  stop_requested.store(true);
  std::signal(signal, SIG_DFL);
}

void stop_on_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
}

// After a run that a signal stopped: how to go on, and the exit status of a process that signal ended.
void report_stop() {
  const int signal = stop_signal.load();
  std::cout << "stopped by " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ": every measurement made is stored, and the candidates not measured were released; the same command "
               "resumes\n";
  command_exit_status() = 128 + signal;
}

std::string ms_text(const std::optional<double>& seconds) {
  if (!seconds) return "-";
  std::ostringstream text;
  text << *seconds * 1e3 << " ms";
  return text.str();
}

// search.scope: tasks: rounds of task tuning, then the model end to end.
void tune_by_tasks(const RunConfig& config, const std::string& config_path) {
  std::cout << "computing the model's values with the interpreter...\n" << std::flush;
  ModelTuneJob job = make_model_tune_job(config, config_path);
  job.options.stop = &stop_requested;
  std::cout << "tuning " << job.workload_name << " by tasks (" << job.program.computes().size() << " computes) on "
            << job.target.name << " into " << config.database << ", seed " << config.seed << "\n";
  std::cout << "fusion " << config.search.fusion << ": " << job.plan.kernel_count() << " kernel"
            << (job.plan.kernel_count() == 1 ? "" : "s") << ", " << job.plan.stage_count() << " stages\n";
  std::cout << job.notes;
  bool tty = ::isatty(STDOUT_FILENO);
  auto report = [&](const ModelTuneProgress& p) {
    std::ostringstream line;
    if (p.task >= 0) {
      const TaskStatus& t = p.tasks[size_t(p.task)];
      line << t.name << " (x" << t.weight << ") best " << ms_text(t.best_seconds);
      if (t.best_seconds && t.start_seconds) line << " (" << speedup_text(*t.start_seconds / *t.best_seconds) << ")";
      line << ", " << t.trials << " trials";
    } else {
      line << "the model end to end";
    }
    line << "  trials " << p.trials_done;
    if (p.trials_budget > 0) line << "/" << p.trials_budget;
    line << "  model estimate " << ms_text(p.estimated_seconds);
    if (p.estimated_seconds && p.fixed_estimated_seconds)
      line << " (" << speedup_text(*p.fixed_estimated_seconds / *p.estimated_seconds) << " the fixed schedule)";
    line << "  elapsed " << duration_text(p.elapsed_seconds);
    if (p.eta_seconds) line << "  ETA " << duration_text(*p.eta_seconds);
    if (p.round.model_batch_accuracy) line << "  model " << int(*p.round.model_batch_accuracy * 100 + 0.5) << "% pairs";
    if (tty)
      std::cout << "\r" << line.str() << "  " << p.round.phase << "\033[K" << std::flush;
    else
      std::cout << line.str() << "  (" << p.round.last << ")\n" << std::flush;
  };
  ModelTuneSummary s = run_model_tune_job(job, report);
  if (tty) std::cout << "\n";
  if (s.stopped) {
    std::cout << "stopped after " << s.trials_done << " task trials (" << s.measured_now << " measured now)\n";
    for (const TaskStatus& t : s.tasks)
      std::cout << "  " << t.name << " x" << t.weight << ": " << t.trials << " trials, best " << ms_text(t.best_seconds)
                << "\n";
    return report_stop();
  }
  std::cout << "done: " << s.trials_done << " task trials (" << s.measured_now << " measured now, " << s.errors_now
            << " errors)" << (s.exhausted ? ", every task's search space exhausted" : "") << "\n";
  for (const TaskStatus& t : s.tasks) {
    std::cout << "  " << t.name << " x" << t.weight << ": " << t.trials << " trials, best " << ms_text(t.best_seconds);
    if (t.best_seconds && t.start_seconds)
      std::cout << " (" << speedup_text(*t.start_seconds / *t.best_seconds) << " its fixed " << ms_text(t.start_seconds)
                << ")";
    if (t.compared_kept_seconds && t.compared_start_seconds)
      std::cout << "; side by side " << ms_text(t.compared_kept_seconds) << " ("
                << speedup_text(*t.compared_start_seconds / *t.compared_kept_seconds) << " its fixed "
                << ms_text(t.compared_start_seconds) << ")";
    if (t.too_small_to_compare) std::cout << "; kept its start (under 0.1% of the model: not compared)";
    if (t.in_model_speedup)
      std::cout << "; in the model " << speedup_text(*t.in_model_speedup) << (t.kept_in_model ? " (kept)" : "");
    std::cout << "\n";
  }
  const std::optional<double> compared = compared_estimate(s.tasks, false);
  const std::optional<double> compared_fixed = compared_estimate(s.tasks, true);
  if (compared && compared_fixed)
    std::cout << "model estimate from the tasks side by side: " << ms_text(compared) << " ("
              << speedup_text(*compared_fixed / *compared) << " the fixed schedule's " << ms_text(compared_fixed)
              << ")\n";
  std::cout << "end to end: fixed schedule " << ms_text(s.fixed_seconds) << ", assembled from the tasks' bests "
            << (s.assembled_error.empty() ? ms_text(s.assembled_seconds) : s.assembled_error);
  if (s.fixed_seconds && s.assembled_seconds)
    std::cout << " (" << speedup_text(*s.fixed_seconds / *s.assembled_seconds) << ")";
  if (s.assembled_speedup) std::cout << "; side by side " << speedup_text(*s.assembled_speedup);
  std::cout << "\n";
  if (!s.partition_trials.empty()) {
    std::cout << "partition search from the " << job.plan.strategy << " plan (" << job.plan.kernel_count()
              << " kernels, " << job.plan.stage_count() << " stages):\n";
    for (const PartitionTrial& t : s.partition_trials) {
      std::cout << "  " << t.move;
      if (t.kernels > 0) std::cout << " -> " << t.kernels << " kernels, " << t.stages << " stages";
      std::cout << ": " << (t.seconds ? ms_text(t.seconds) : t.error);
      if (t.speedup) std::cout << ", side by side " << speedup_text(*t.speedup) << " the best plan before it";
      std::cout << (t.kept ? " (kept)" : "") << "\n";
    }
    std::cout << "best plan: " << s.best_plan_strategy << ", " << s.best_plan_kernels << " kernels, "
              << s.best_plan_stages << " stages\n";
  }
  // After the partition search, as it was measured: it compares the model's best few, the moved plans' among them.
  if (s.side_by_side) std::cout << side_by_side_text(*s.side_by_side);
  if (s.best_seconds) {
    // What `ingot best` and `ingot export` answer: the schedule kept side by side, where the comparison timed it.
    const SideBySideEntry* kept = s.side_by_side ? s.side_by_side->kept() : nullptr;
    const std::optional<double> best = kept && kept->median_seconds ? kept->median_seconds : s.best_seconds;
    std::cout << "best of " << job.workload_name << ": " << ms_text(best);
    if (kept && kept->median_seconds)
      std::cout << " side by side, "
                << (kept->is_reference ? std::string("the fixed schedule") : "candidate " + kept->candidate_hash);
    if (const std::optional<double> naive = s.side_by_side ? s.side_by_side->naive_seconds() : std::nullopt;
        naive && best)
      std::cout << " (" << speedup_text(*naive / *best) << " the naive schedule's " << ms_text(naive) << ")";
    std::cout << " in " << config.database << "\n"
              << "next: its schedule: ingot best --config " << config_path << " [--json]\n"
              << "      standalone C++: ingot export --workload " << s.workload_hash << " --db " << config.database
              << " --out DIR\n";
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("tune", "Run a tuning job from a YAML config");
  // Flags are read as text and checked as the config keys they override (configs/flag_values.h).
  static std::string config_path, db, trials, minutes, seed;
  static bool retry_errors = false;
  cmd->add_option("config", config_path, "Run config (YAML), e.g. configs/quickstart.yaml")->required();
  cmd->add_option("--db", db, "Database file (overrides the config's database)");
  cmd->add_option("--trials", trials, "Trials budget (overrides budget.trials)");
  cmd->add_option("--minutes", minutes, "Time budget (overrides budget.minutes)");
  cmd->add_option("--seed", seed, "Seed (overrides the config's seed)");
  cmd->add_flag("--retry-errors", retry_errors,
                "Measure again the candidates whose measurements all failed (after fixing the toolchain, the config "
                "or ingot); the old rows stay");
  cmd->callback([] {
    // The flags first: a bad one is refused before the config is read or a database touched.
    std::optional<int64_t> trials_value, seed_value;
    std::optional<double> minutes_value;
    if (!trials.empty()) trials_value = integer_flag("--trials", trials, 0, INT64_MAX);
    if (!minutes.empty()) minutes_value = number_flag("--minutes", minutes, 0, false);
    if (!seed.empty()) seed_value = integer_flag("--seed", seed, 0, INT64_MAX);
    RunConfig config = load_run_config(config_path);
    if (!db.empty()) config.database = db;
    if (trials_value) config.budget.trials = *trials_value;
    if (minutes_value) config.budget.minutes = *minutes_value;
    if (seed_value) config.seed = uint64_t(*seed_value);
    if (config.budget.trials <= 0 && config.budget.minutes <= 0)
      throw std::invalid_argument("the budget needs trials or minutes above 0 (--trials or --minutes)");
    if (config.search.scope == "tasks") {
      if (retry_errors)
        throw std::invalid_argument("--retry-errors works with search.scope: program only (this config tunes tasks)");
      stop_on_signals();
      return tune_by_tasks(config, config_path);
    }
    stop_on_signals();
    TuneJob job = make_tune_job(config, config_path);
    job.options.stop = &stop_requested;
    job.options.retry_errors = retry_errors;
    std::cout << "tuning " << job.workload_name << " (" << job.program.computes().size() << " computes) on "
              << job.target.name << " into " << config.database << ", seed " << config.seed << "\n";
    std::cout << "fusion " << config.search.fusion << ": " << job.plan.kernel_count() << " kernel"
              << (job.plan.kernel_count() == 1 ? "" : "s") << ", " << job.plan.stage_count() << " stages\n";
    std::cout << job.notes;
    std::cout << "computing the reference output with the interpreter...\n" << std::flush;
    bool tty = ::isatty(STDOUT_FILENO);
    auto report = [&](const TuneProgress& p) {
      std::ostringstream line;
      line << "trials " << p.trials_done;
      if (p.trials_budget > 0) line << "/" << p.trials_budget;
      line << "  best ";
      if (p.best_seconds)
        line << *p.best_seconds * 1e3 << " ms";
      else
        line << "-";
      if (p.best_seconds && p.reference_seconds)
        line << " (" << speedup_text(*p.reference_seconds / *p.best_seconds) << " the fixed schedule)";
      line << "  errors " << p.errors_now << "  elapsed " << duration_text(p.elapsed_seconds);
      if (p.eta_seconds) line << "  ETA " << duration_text(*p.eta_seconds);
      if (p.model_batch_accuracy) line << "  model " << int(*p.model_batch_accuracy * 100 + 0.5) << "% pairs";
      if (tty)
        std::cout << "\r" << line.str() << "  " << p.phase << "\033[K" << std::flush;
      else
        std::cout << line.str() << "  (" << p.last << ")\n" << std::flush;
    };
    TuneSummary s = run_tune_job(job, report);
    if (tty) std::cout << "\n";
    if (s.stopped) {
      std::cout << "run " << s.run_id << " stopped: " << s.measured_now << " measured (" << s.errors_now << " errors), "
                << s.skipped << " already measured; best "
                << (s.best_seconds ? std::to_string(*s.best_seconds * 1e3) + " ms" : std::string("-")) << "\n";
      return report_stop();
    }
    std::cout << "run " << s.run_id << " done: " << s.measured_now << " measured (" << s.errors_now << " errors), "
              << s.skipped << " already measured" << (s.exhausted ? ", search space exhausted" : "") << "\n";
    if (s.best_seconds) {
      const double gflops = double(count_flops(job.program)) / *s.best_seconds / 1e9;
      std::cout << "best: " << *s.best_seconds * 1e3 << " ms (" << gflops << " GFLOP/s";
      if (s.reference_seconds)
        std::cout << ", " << speedup_text(*s.reference_seconds / *s.best_seconds) << " the fixed schedule's "
                  << *s.reference_seconds * 1e3 << " ms";
      if (const std::optional<double> naive = s.side_by_side ? s.side_by_side->naive_seconds() : std::nullopt)
        std::cout << ", " << speedup_text(*naive / *s.best_seconds) << " the naive schedule's " << *naive * 1e3
                  << " ms";
      std::cout << ") in " << job.options.database_path << "\n";
      if (s.side_by_side) std::cout << side_by_side_text(*s.side_by_side);
      std::cout << "next: more trials: ingot tune " << config_path
                << (job.options.trials > 0 ? " --trials " + std::to_string(2 * job.options.trials)
                                           : " --minutes " + std::to_string(2 * job.options.minutes))
                << " (measured ones are skipped)\n"
                << "      its schedule: ingot best --config " << config_path << " [--json]\n"
                << "      standalone " << (job.options.gpu ? "CUDA" : "C++") << ": ingot export --workload "
                << s.workload_hash << " --db " << job.options.database_path
                << (job.options.gpu ? " --target " + gpu_key_arch(s.target) : std::string()) << " --out DIR\n";
    } else
      std::cout << "no correct candidate yet\n";
  });
}

}  // namespace ingot::cli
