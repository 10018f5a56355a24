#include "costmodel/evaluation.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace ingot {
namespace {

RankedGroup rank_group(const XGBoostModel& model, const SampleGroup& group) {
  std::vector<float> values;
  for (const std::vector<float>& row : group.rows) values.insert(values.end(), row.begin(), row.end());
  std::vector<float> scores = model.predict(values.data(), group.rows.size());
  return RankedGroup{group.seconds, std::vector<double>(scores.begin(), scores.end())};
}

ModelEvaluation score_groups(const XGBoostModel& model, const std::vector<SampleGroup>& tested, int64_t training_rows) {
  ModelEvaluation evaluation;
  evaluation.training_rows = training_rows;
  std::vector<RankedGroup> ranked;
  for (const SampleGroup& group : tested) {
    if (group.rows.empty()) continue;
    ranked.push_back(rank_group(model, group));
    evaluation.per_group.emplace_back(group.name, ranking_metrics({ranked.back()}));
  }
  evaluation.overall = ranking_metrics(ranked);
  return evaluation;
}

}  // namespace

ModelEvaluation evaluate_held_out(const std::vector<SampleGroup>& groups, const XGBoostParams& params, double holdout,
                                  uint64_t seed) {
  if (!(holdout > 0 && holdout < 1))
    throw std::invalid_argument("the held-out share must be above 0 and below 1, not " + std::to_string(holdout));
  std::mt19937_64 rng(seed);
  std::vector<SampleGroup> training, tested;
  for (const SampleGroup& group : groups) {
    const size_t n = group.rows.size();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    size_t held = n < 2 ? 0 : std::max<size_t>(1, size_t(double(n) * holdout + 0.5));
    held = std::min(held, n - 1);
    SampleGroup train{group.key, group.name, {}, {}}, test{group.key, group.name, {}, {}};
    for (size_t i = 0; i < n; ++i) {
      SampleGroup& into = i < held ? test : train;
      into.rows.push_back(group.rows[order[i]]);
      into.seconds.push_back(group.seconds[order[i]]);
    }
    training.push_back(std::move(train));
    tested.push_back(std::move(test));
  }
  TrainingSet set = to_training_set(training);
  if (set.rows() == 0) throw std::invalid_argument("no measured candidates are left to train on");
  return score_groups(XGBoostModel::train(set, params), tested, int64_t(set.rows()));
}

ModelEvaluation evaluate_leave_one_group_out(const std::vector<SampleGroup>& groups, const XGBoostParams& params) {
  if (groups.size() < 2)
    throw std::invalid_argument("leaving one workload out needs two or more workloads; the samples hold " +
                                std::to_string(groups.size()));
  ModelEvaluation evaluation;
  std::vector<RankedGroup> ranked;
  for (size_t left_out = 0; left_out < groups.size(); ++left_out) {
    if (groups[left_out].rows.size() < 2) continue;
    std::vector<SampleGroup> training;
    for (size_t i = 0; i < groups.size(); ++i)
      if (i != left_out) training.push_back(groups[i]);
    TrainingSet set = to_training_set(training);
    if (set.rows() == 0) continue;
    ranked.push_back(rank_group(XGBoostModel::train(set, params), groups[left_out]));
    evaluation.per_group.emplace_back(groups[left_out].name, ranking_metrics({ranked.back()}));
    evaluation.training_rows += int64_t(set.rows());
  }
  evaluation.overall = ranking_metrics(ranked);
  return evaluation;
}

std::string metrics_json(const RankingMetrics& m) {
  std::ostringstream out;
  out.precision(6);
  out << "{\"pairwise_accuracy\":" << m.pairwise_accuracy << ",\"kendall_tau\":" << m.kendall_tau
      << ",\"top1\":" << m.top1 << ",\"top5\":" << m.top5 << ",\"groups\":" << m.groups
      << ",\"candidates\":" << m.candidates << ",\"pairs\":" << m.pairs << "}";
  return out.str();
}

}  // namespace ingot
