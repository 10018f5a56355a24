// `ingot tune CONFIG`: a tuning run from a YAML config (flags override it), with progress on one updating
// line in a terminal and plain lines otherwise. Running it again continues where it stopped.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/strategies.h"
#include "cli/commands.h"
#include "configs/run_config.h"
#include "tuner/strategy_schedule.h"
#include "tuner/tuning_loop.h"
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

}  // namespace

TuneOptions tune_options_from_config(const RunConfig& config) {
  TuneOptions o;
  o.database_path = config.database;
  o.trials = config.budget.trials;
  o.minutes = config.budget.minutes;
  o.seed = config.seed;
  // input_ranges and fixed_inputs come with the workload's program (make_configured_workload).
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

void add_tune_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("tune", "Run a tuning job from a YAML config");
  static std::string config_path, db;
  static int64_t trials = -1;
  static double minutes = -1;
  static int64_t seed = -1;
  cmd->add_option("config", config_path, "Run config (YAML), e.g. configs/quickstart.yaml")->required();
  cmd->add_option("--db", db, "Database file (overrides the config's database)");
  cmd->add_option("--trials", trials, "Trials budget (overrides budget.trials)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--minutes", minutes, "Time budget (overrides budget.minutes)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", seed, "Seed (overrides the config's seed)")->check(CLI::NonNegativeNumber);
  cmd->callback([] {
    RunConfig config = load_run_config(config_path);
    if (!db.empty()) config.database = db;
    if (trials >= 0) config.budget.trials = trials;
    if (minutes >= 0) config.budget.minutes = minutes;
    if (seed >= 0) config.seed = uint64_t(seed);
    if (config.budget.trials <= 0 && config.budget.minutes <= 0)
      throw std::invalid_argument("the budget needs trials or minutes above 0 (--trials or --minutes)");
    TuneOptions options = tune_options_from_config(config);
    options.config_path = config_path;
    ConfiguredWorkload workload = make_configured_workload(config.workload);
    options.input_ranges = workload.input_ranges;
    options.fixed_inputs = std::move(workload.fixed_inputs);
    const Program& program = workload.program;
    // The plan depends only on the program for a CPU target (every stage fits one parallel region), so the
    // same config gives the same layout, and so the same candidates, on any machine.
    PartitionPlan plan = make_plan(config.search.fusion, program, resolve_target("cpu"));
    options.layout = plan_layout(plan);
    std::cout << "tuning " << workload.name << " (" << program.computes().size() << " computes) into "
              << config.database << ", seed " << config.seed << "\n";
    std::cout << "fusion " << config.search.fusion << ": " << plan.kernel_count() << " kernel"
              << (plan.kernel_count() == 1 ? "" : "s") << ", " << plan.stage_count() << " stages\n";
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
      line << "  errors " << p.errors_now << "  elapsed " << duration_text(p.elapsed_seconds);
      if (p.eta_seconds) line << "  ETA " << duration_text(*p.eta_seconds);
      if (tty)
        std::cout << "\r" << line.str() << "\033[K" << std::flush;
      else
        std::cout << line.str() << "  (" << p.last << ")\n" << std::flush;
    };
    TuneSummary s = tune(program, workload.name, options, report);
    if (tty) std::cout << "\n";
    std::cout << "run " << s.run_id << " done: " << s.measured_now << " measured (" << s.errors_now << " errors), "
              << s.skipped << " already measured" << (s.exhausted ? ", search space exhausted" : "") << "\n";
    if (s.best_seconds)
      // A whole model's schedule is megabytes of JSON: print it only when it fits on a screen.
      std::cout << "best: " << *s.best_seconds * 1e3 << " ms  "
                << (s.best_schedule_json.size() <= 2000 ? s.best_schedule_json
                                                        : "(schedule: ingot best --workload " + workload.name +
                                                              " --db " + options.database_path + " --json)")
                << "\n";
    else
      std::cout << "no correct candidate yet\n";
  });
}

}  // namespace ingot::cli
