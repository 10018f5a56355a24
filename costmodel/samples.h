// Measured candidates as a cost model learns from them: feature rows and run times in query groups (one group per
// workload on one target, as rankings only compare candidates of one workload), and the training set XGBoost gets
// from them, labelled by throughput relative to the group's best. Used by the learned model and its evaluation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/xgboost_model.h"

namespace ingot {

struct SampleGroup {
  std::string key;                       // the workload's key (its program's structural hash, hex)
  std::string name;                      // the workload's name, for reports
  std::vector<std::vector<float>> rows;  // candidate_features of each measured candidate
  std::vector<double> seconds;           // its median run time, same order; positive and finite
};

// Adds a measured candidate to the group with this key, creating the group (named name) when it is new. Throws
// std::invalid_argument for seconds that are not positive and finite, or a row of another width than the others.
void add_sample(std::vector<SampleGroup>& groups, const std::string& key, const std::string& name,
                std::vector<float> row, double seconds);

int64_t sample_count(const std::vector<SampleGroup>& groups);

// The groups as one XGBoost training set: every row, its label best_seconds_of_its_group / seconds (1 for the
// group's best, towards 0 for slow ones), one query group per sample group. Groups must share one row width.
TrainingSet to_training_set(const std::vector<SampleGroup>& groups);

}  // namespace ingot
