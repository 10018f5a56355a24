#include "tuner/measured_dataset.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "configs/run_config.h"
#include "tuner/candidate.h"
#include "tuner/tune_job.h"

namespace ingot {

std::map<std::string, std::pair<std::string, double>> best_correct_medians(
    const std::vector<MeasuredCandidate>& history, const std::string& target) {
  std::map<std::string, std::pair<std::string, double>> out;  // hash -> (schedule json, seconds)
  for (const MeasuredCandidate& m : history) {
    if (m.candidate.target != target || m.measurement.error_class != ErrorClass::kNone || !m.measurement.statistics)
      continue;
    const double median = m.measurement.statistics->median;
    auto [it, inserted] = out.try_emplace(m.candidate.hash, m.candidate.schedule_json, median);
    if (!inserted && median < it->second.second) it->second.second = median;
  }
  return out;
}

std::vector<MeasuredSchedule> fastest_correct_schedules(const std::vector<MeasuredCandidate>& history,
                                                        const std::string& target, int limit,
                                                        const std::string& except) {
  std::vector<std::pair<double, std::string>> ranked;  // (least median, schedule JSON)
  for (const auto& [hash, measured] : best_correct_medians(history, target))
    if (hash != except) ranked.emplace_back(measured.second, measured.first);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<MeasuredSchedule> out;
  for (const auto& [seconds, json] : ranked) {
    if (int(out.size()) >= limit) break;
    try {
      out.push_back(MeasuredSchedule{Schedule::from_json(json), seconds});
    } catch (const ScheduleError&) {  // a schedule this ingot no longer reads
    }
  }
  return out;
}

namespace {

int64_t add_history(XGBoostCostModel& model,
                    const std::map<std::string, std::pair<std::string, double>>& measured_candidates,
                    const Program& program, const std::string& workload_name, std::ostream& messages) {
  int64_t added = 0, refused = 0;
  for (const auto& [hash, measured] : measured_candidates) {
    try {
      model.add_measured(program, workload_name, Schedule::from_json(measured.first), measured.second);
      ++added;
    } catch (const std::exception& e) {
      if (refused++ == 0)
        messages << "skipping candidate " << hash << " of '" << workload_name << "': " << e.what() << "\n";
    }
  }
  if (refused > 1) messages << "skipped " << refused << " candidates of '" << workload_name << "' in all\n";
  return added;
}

// The program of a workload, rebuilt from the config of some run that measured it; nullopt (with a message) when no
// recorded config rebuilds the measured program.
std::optional<Program> rebuild_program(const Database& db, const WorkloadRecord& workload,
                                       const std::vector<MeasuredCandidate>& history, std::ostream& messages) {
  std::map<int64_t, bool> tried;
  std::string last_problem = "no run recorded its config";
  for (const MeasuredCandidate& m : history) {
    if (!tried.emplace(m.measurement.run_id, true).second) continue;
    std::optional<RunInfo> run = db.run(m.measurement.run_id);
    if (!run) continue;
    try {
      RunConfig config = parse_run_config(run->config_text, db.path() + ": run " + std::to_string(run->id));
      ConfiguredWorkload rebuilt = configured_workload(config, workload.hash);
      if (workload_key(rebuilt.program) == workload.hash) return std::move(rebuilt.program);
      last_problem = "run " + std::to_string(run->id) + "'s config now builds a different program";
    } catch (const std::exception& e) {
      last_problem = "run " + std::to_string(run->id) + "'s config: " + e.what();
    }
  }
  messages << "skipping workload '" << workload.name << "' (" << workload.hash << "): " << last_problem << "\n";
  return std::nullopt;
}

}  // namespace

int64_t add_measured_dataset(XGBoostCostModel& model, const std::vector<const Database*>& databases,
                             const DatasetFilter& filter, std::ostream& messages) {
  int64_t added = 0;
  std::set<std::string> done;
  for (const Database* db : databases) {
    for (const WorkloadRecord& workload : db->list_workloads()) {
      if (!filter.workload.empty() && filter.workload != workload.name && filter.workload != workload.hash) continue;
      if (!done.insert(workload.hash).second) continue;  // read with the first database that holds it
      // Every database's measurements of the workload: a candidate measured in several counts once, with its least
      // median, as within one database. The program is rebuilt from this database's own runs.
      const std::vector<MeasuredCandidate> own = db->history(workload.hash);
      std::vector<MeasuredCandidate> history = own;
      for (const Database* other : databases) {
        if (other == db) continue;
        std::vector<MeasuredCandidate> more = other->history(workload.hash);
        history.insert(history.end(), more.begin(), more.end());
      }
      auto measured = best_correct_medians(history, filter.target_key);
      if (measured.empty()) continue;
      std::optional<Program> program = rebuild_program(*db, workload, own, messages);
      if (!program) continue;
      added += add_history(model, measured, *program, workload.name, messages);
    }
  }
  return added;
}

}  // namespace ingot
