// Commands that read the tuning database: `best`, `history`, `db check`, and `workloads` (the registry).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/commands.h"
#include "configs/flag_values.h"
#include "configs/run_config.h"
#include "results/database.h"
#include "tuner/candidate.h"
#include "tuner/tune_job.h"
#include "tuner/tuning_loop.h"
#include "workloads/registry.h"

namespace ingot::cli {

namespace {

// One figure of a measurement's statistics in milliseconds, "-" for a measurement without run times.
std::string ms(const std::optional<RunStatistics>& s, double RunStatistics::*figure) {
  if (!s) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", (*s).*figure * 1e3);
  return buf;
}

}  // namespace

void add_results_commands(CLI::App& app) {
  static std::string db = "ingot.db", workload, target;
  static bool json = false;
  static std::string limit = "20";
  static int threads = 0;
  static std::string config_path, isa = "native";

  CLI::App* best = app.add_subcommand("best", "The best measured schedule of a workload, or of every workload");
  best->add_option("--db", db, "Database file")->capture_default_str();
  best->add_option("--workload", workload,
                   "Workload name or hash, or the ONNX file tuned (default: one line per workload)")
      ->transform(onnx_file_as_stored_name());
  best->add_option("--config", config_path,
                   "A run config: the best of exactly its workload (whatever else shares the name), in its database "
                   "(unless --db) and for its threads (unless --threads)")
      ->excludes("--workload");
  best->add_option("--target", target,
                   "Target key (default: this machine's CPU target); sm_80 or sm_90: the GPU of that architecture "
                   "the workload was tuned on");
  best->add_option("--threads", threads, "Threads of the CPU target, when --target is not given (0: all cores)")
      ->capture_default_str();
  best->add_option("--isa", isa, "ISA of the CPU target, when --target is not given (native, avx512, avx2, generic)")
      ->capture_default_str();
  best->add_flag("--json", json, "Print JSON");
  best->callback([best] {
    std::string toolchain;
    if (!config_path.empty()) {
      RunConfig config = load_run_config(config_path);
      workload = workload_key(configured_workload(config).program);
      if (best->count("--db") == 0) db = config.database;
      if (best->count("--threads") == 0) threads = config.target.threads;
      if (best->count("--isa") == 0) isa = config.target.isa;
      toolchain = toolchain_key(config.target.compiler, config.target.flags);
      if (best->count("--target") == 0 && is_gpu_arch(config.target.kind)) target = config.target.kind;
    }
    Database d = Database::open_existing(db);
    std::string t = target.empty() ? cpu_target_key(threads, target_isa_key(isa), toolchain)
                                   : resolve_stored_target(d, workload, target);
    if (workload.empty()) {
      std::vector<MeasuredCandidate> all = d.best_of_every_workload(t);
      if (all.empty()) throw std::runtime_error("no correct measurement on target '" + t + "' in " + db);
      nlohmann::json list = nlohmann::json::array();
      for (const MeasuredCandidate& b : all) {
        if (json) {
          list.push_back({{"workload", b.workload_name},
                          {"workload_hash", b.candidate.workload_hash},
                          {"candidate", b.candidate.hash},
                          {"median_s", b.measurement.statistics->median}});
          continue;
        }
        std::cout << b.workload_name << " (" << b.candidate.workload_hash << "): median "
                  << ms(b.measurement.statistics, &RunStatistics::median) << " ms, candidate " << b.candidate.hash
                  << "\n";
      }
      if (json) std::cout << list.dump(2) << "\n";
      return;
    }
    std::optional<ChosenBest> chosen = choose_best(d, workload, t);
    if (!chosen)
      throw std::runtime_error("no correct measurement of '" + workload + "' on target '" + t + "' in " + db);
    const MeasuredCandidate& b = chosen->least_median;
    const std::optional<SideBySideEntry>& winner = chosen->side_by_side_winner;
    // The partition the best follows (its schedule's layout), and the tasks a whole-model run tuned it by.
    const StageLayout layout = Schedule::from_json(chosen->schedule_json()).layout();
    int64_t kernels = layout.empty() ? 0 : 1;
    for (const LayoutStep& step : layout) kernels += step.kernel_before ? 1 : 0;
    const std::vector<ModelTaskRecord> tasks = d.model_tasks(b.candidate.workload_hash);
    const std::optional<SideBySideComparison>& side_by_side = chosen->side_by_side;
    if (json) {
      nlohmann::json j;
      j["workload"] = b.workload_name;
      j["workload_hash"] = b.candidate.workload_hash;
      j["target"] = b.candidate.target;
      j["candidate"] = chosen->candidate_hash();
      // The figures of what was chosen: one measurement's, or its side-by-side rounds' together.
      j["chosen_by"] = winner ? "side_by_side" : "least_median";
      j["median_s"] = winner ? *winner->median_seconds : b.measurement.statistics->median;
      j["min_s"] = winner ? *winner->min_seconds : b.measurement.statistics->min;
      j["runs"] = winner ? winner->runs : int64_t(b.measurement.run_seconds.size());
      j["least_median"] = {{"candidate", b.candidate.hash},
                           {"median_s", b.measurement.statistics->median},
                           {"run", b.measurement.run_id}};
      j["partition"] = {{"kernels", kernels}, {"stages", layout.size()}};
      j["tasks"] = tasks.size();
      j["schedule"] = nlohmann::json::parse(chosen->schedule_json());
      if (side_by_side) {
        nlohmann::json entries = nlohmann::json::array();
        for (const SideBySideEntry& e : side_by_side->entries) {
          nlohmann::json entry = {
              {"candidate", e.candidate_hash}, {"reference", e.is_reference}, {"correct_rounds", e.correct_rounds}};
          entry["median_s"] = e.median_seconds ? nlohmann::json(*e.median_seconds) : nlohmann::json();
          entry["speedup"] = e.speedup ? nlohmann::json(*e.speedup) : nlohmann::json();
          entry["min_speedup"] = e.min_speedup ? nlohmann::json(*e.min_speedup) : nlohmann::json();
          entry["paired_rounds"] = e.paired_rounds;
          entry["faster_rounds"] = e.faster_rounds;
          const std::optional<double> over_naive = side_by_side->speedup_over_naive(e);
          entry["speedup_over_naive"] = over_naive ? nlohmann::json(*over_naive) : nlohmann::json();
          if (e.error_class != ErrorClass::kNone) entry["error"] = to_string(e.error_class);
          entry["schedule"] = nlohmann::json::parse(e.schedule_json);
          entries.push_back(std::move(entry));
        }
        const SideBySideEntry* fastest = side_by_side->fastest();
        const SideBySideEntry* kept = side_by_side->kept();
        j["side_by_side"] = {{"run", side_by_side->run_id},
                             {"rounds", side_by_side->rounds},
                             {"fastest", fastest ? nlohmann::json(fastest->candidate_hash) : nlohmann::json()},
                             {"kept", kept ? nlohmann::json(kept->candidate_hash) : nlohmann::json()},
                             {"entries", std::move(entries)}};
        const std::optional<double> naive_seconds = side_by_side->naive_seconds();
        j["side_by_side"]["naive_median_s"] = naive_seconds ? nlohmann::json(*naive_seconds) : nlohmann::json();
      }
      std::cout << j.dump(2) << "\n";
    } else {
      if (winner) {
        char median[32];
        std::snprintf(median, sizeof median, "%.6g", *winner->median_seconds * 1e3);
        std::cout << b.workload_name << " on " << b.candidate.target << ": candidate " << winner->candidate_hash
                  << (winner->is_reference ? " (the fixed schedule)" : "") << ", the fastest side by side: median "
                  << median << " ms over " << winner->correct_rounds << " rounds (run " << side_by_side->run_id << ")\n"
                  << "  the least single median, " << ms(b.measurement.statistics, &RunStatistics::median)
                  << " ms (candidate " << b.candidate.hash << ", run " << b.measurement.run_id
                  << "), was slower side by side\n";
      } else {
        std::cout << b.workload_name << " on " << b.candidate.target << ": median "
                  << ms(b.measurement.statistics, &RunStatistics::median) << " ms, min "
                  << ms(b.measurement.statistics, &RunStatistics::min) << " ms over "
                  << b.measurement.run_seconds.size() << " runs (candidate " << b.candidate.hash << ", run "
                  << b.measurement.run_id << ")\n";
      }
      if (!layout.empty())
        std::cout << "partition: " << kernels << " kernel" << (kernels == 1 ? "" : "s") << ", " << layout.size()
                  << " stages" << (tasks.empty() ? "" : "; tuned by " + std::to_string(tasks.size()) + " tasks")
                  << "\n";
      std::cout << chosen->schedule_json() << "\n";
      if (side_by_side) std::cout << side_by_side_text(*side_by_side);
    }
  });

  CLI::App* history = app.add_subcommand("history", "Measurements in the order they were made");
  history->add_option("--db", db, "Database file")->capture_default_str();
  history->add_option("--workload", workload, "Workload name or hash, or the ONNX file tuned (default: all)")
      ->transform(onnx_file_as_stored_name());
  history->add_option("--limit", limit, "Only the latest N (0: all)")->capture_default_str();
  history->callback([] {
    int64_t latest = integer_flag("--limit", limit, 0, INT64_MAX);  // checked before the database is opened
    Database d = Database::open_existing(db);
    std::vector<MeasuredCandidate> rows = d.history(workload, latest);
    // The workload column fits the longest name shown (task workloads' names are long).
    int name_width = 16;
    for (const MeasuredCandidate& m : rows) name_width = std::max(name_width, int(m.workload_name.size()));
    std::printf("%-24s %-*s %-5s %-16s %12s %12s  %s\n", "measured_at", name_width, "workload", "trial", "error",
                "median_ms", "min_ms", "candidate");
    for (const MeasuredCandidate& m : rows)
      std::printf("%-24s %-*s %-5lld %-16s %12s %12s  %s%s%s\n", m.measurement.measured_at.c_str(), name_width,
                  m.workload_name.c_str(), (long long)m.measurement.trial_index,
                  to_string(m.measurement.error_class).c_str(),
                  ms(m.measurement.statistics, &RunStatistics::median).c_str(),
                  ms(m.measurement.statistics, &RunStatistics::min).c_str(), m.candidate.hash.c_str(),
                  m.measurement.error_message.empty() ? "" : "  ", m.measurement.error_message.substr(0, 80).c_str());
  });

  CLI::App* dbcmd = app.add_subcommand("db", "Database maintenance");
  CLI::App* check = dbcmd->add_subcommand("check", "Integrity, schema version and counts");
  dbcmd->require_subcommand(1);
  check->add_option("--db", db, "Database file")->capture_default_str();
  check->callback([] {
    IntegrityReport r = Database::check_file(db);
    std::cout << r.to_text();
    if (!r.ok) throw std::runtime_error("database check found problems in " + db);
  });

  CLI::App* workloads = app.add_subcommand("workloads", "List the workloads with their FLOPs and parameter counts");
  static bool sizes = false;
  workloads->add_flag("--sizes", sizes,
                      "List each workload's size parameters instead: default and small value (--size small, "
                      "workload.size: small) and meaning");
  workloads->callback([] {
    if (sizes) {
      for (const WorkloadInfo& w : list_workloads()) {
        std::printf("%s\n", w.name.c_str());
        for (const WorkloadParameter& p : w.parameters) {
          auto small = w.small.find(p.name);
          std::printf("  %-18s default %8lld  small %8lld  %s\n", p.name.c_str(), (long long)p.default_value,
                      (long long)(small != w.small.end() ? small->second : p.default_value), p.meaning.c_str());
        }
      }
      return;
    }
    // The name column fits the longest name (task workloads' names are long).
    int name_width = int(std::string("workload").size());
    for (const WorkloadInfo& w : list_workloads()) name_width = std::max(name_width, int(w.name.size()));
    std::printf("%-*s %8s %16s %14s  %s\n", name_width, "workload", "computes", "FLOPs", "parameters", "description");
    for (const WorkloadInfo& w : list_workloads()) {
      Program p = make_workload(w.name);
      std::printf("%-*s %8zu %16lld %14lld  %s\n", name_width, w.name.c_str(), p.computes().size(),
                  (long long)w.flops({}), (long long)w.parameter_count({}), w.description.c_str());
    }
  });
}

}  // namespace ingot::cli
