// A tuning database's correct measurements as a cost model's samples: every workload measured on a target, its
// program rebuilt from the config recorded with a run that measured it (as `ingot export` does), and each measured
// candidate's schedule featurized for that target. What `ingot costmodel train|eval` learn from.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/target.h"
#include "costmodel/xgboost_cost_model.h"
#include "results/database.h"

namespace ingot {

struct DatasetFilter {
  std::string target_key;  // the key measurements are stored under (cpu_target_key); required
  std::string workload;    // a workload name or hash; "" = every workload
};

// The least median of each distinct candidate in `history` measured correctly on target: candidate hash -> (schedule
// JSON, seconds). The dataset below and the evolutionary search's starting parents (tuner/tune_job.h) read history
// through it.
std::map<std::string, std::pair<std::string, double>> best_correct_medians(
    const std::vector<MeasuredCandidate>& history, const std::string& target);

// The schedules of `history` measured correctly on target, fastest first (each candidate's least median; ties in
// hash order), at most `limit`, without the candidate `except` (a hash; "" = none); a schedule this ingot no longer
// reads is left out. The evolutionary search's measured parents and the side-by-side comparison's contenders.
std::vector<MeasuredSchedule> fastest_correct_schedules(const std::vector<MeasuredCandidate>& history,
                                                        const std::string& target, int limit,
                                                        const std::string& except = "");

// Adds to model every distinct candidate of the databases with a correct measurement on filter.target_key, workload
// by workload (a workload is the same in every database: its key is its program's hash). A candidate measured more
// than once, in one database or in several (two passes of a data set), counts once, with its least median. A
// workload's program is rebuilt from the first database that holds it; one whose program cannot be rebuilt (an ONNX
// file gone or changed, a workload this ingot builds differently) and a schedule that no longer lowers are skipped,
// each with one line on `messages`. Returns the number of candidates added.
int64_t add_measured_dataset(XGBoostCostModel& model, const std::vector<const Database*>& databases,
                             const DatasetFilter& filter, std::ostream& messages);

}  // namespace ingot
