// How well a learned model ranks candidates it has not seen: trained on part of the measured samples and scored on
// the rest, either a held-out share of every workload's candidates (seen workloads) or one whole workload at a time
// (leave-one-workload-out: workloads never seen). What `ingot costmodel eval` prints and the online model stores.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/ranking_metrics.h"
#include "costmodel/samples.h"
#include "costmodel/xgboost_model.h"

namespace ingot {

struct ModelEvaluation {
  RankingMetrics overall;
  std::vector<std::pair<std::string, RankingMetrics>> per_group;  // by group name, in the groups' order
  int64_t training_rows = 0;
};

// Splits each group's candidates at random (seeded) into a held-out share `holdout` (at least one candidate when a
// group has two or more) and the rest; trains one model on the rest of every group and ranks each group's held-out
// candidates. Throws std::invalid_argument for a share outside (0, 1) or when nothing is left to train on.
ModelEvaluation evaluate_held_out(const std::vector<SampleGroup>& groups, const XGBoostParams& params, double holdout,
                                  uint64_t seed);

// For each group with two or more candidates: a model trained on every other group ranks all of its candidates.
// Throws std::invalid_argument with fewer than two groups.
ModelEvaluation evaluate_leave_one_group_out(const std::vector<SampleGroup>& groups, const XGBoostParams& params);

// The metrics as JSON: {"pairwise_accuracy":...,"kendall_tau":...,"top1":...,"top5":...,"groups":...,
// "candidates":...,"pairs":...}.
std::string metrics_json(const RankingMetrics& metrics);

}  // namespace ingot
