#include "costmodel/ranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ingot {
namespace {

void check_group(const RankedGroup& group) {
  if (group.seconds.size() != group.scores.size()) {
    throw std::invalid_argument("a ranked group has " + std::to_string(group.seconds.size()) + " run times but " +
                                std::to_string(group.scores.size()) + " scores");
  }
  for (double s : group.seconds)
    if (!(s > 0) || !std::isfinite(s))
      throw std::invalid_argument("a ranked group holds the run time " + std::to_string(s) +
                                  "; run times must be positive and finite");
}

// Pair counts of one group for pairwise accuracy and tau-b: concordant and discordant pairs, pairs tied only in
// score, tied only in seconds, and all pairs.
struct PairCounts {
  int64_t concordant = 0, discordant = 0, score_ties = 0, seconds_ties = 0, total = 0;
  int64_t ranked() const { return total - seconds_ties; }  // pairs whose seconds differ
};

// O(n^2): groups are a few hundred candidates, and the exactness is worth more than an O(n log n) count here.
PairCounts count_pairs(const RankedGroup& group) {
  PairCounts counts;
  const size_t n = group.seconds.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      ++counts.total;
      const double faster = group.seconds[j] - group.seconds[i];  // > 0: i is faster
      const double higher = group.scores[i] - group.scores[j];    // > 0: i is scored higher
      if (faster == 0) {
        ++counts.seconds_ties;
      } else if (higher == 0) {
        ++counts.score_ties;
      } else if ((faster > 0) == (higher > 0)) {
        ++counts.concordant;
      } else {
        ++counts.discordant;
      }
    }
  return counts;
}

}  // namespace

double top_k_score(const RankedGroup& group, int k) {
  check_group(group);
  if (group.seconds.empty()) return 1;
  std::vector<size_t> order(group.seconds.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return group.scores[a] > group.scores[b]; });
  const double best = *std::min_element(group.seconds.begin(), group.seconds.end());
  double best_of_top = group.seconds[order[0]];
  for (size_t i = 1; i < order.size() && i < size_t(std::max(k, 1)); ++i)
    best_of_top = std::min(best_of_top, group.seconds[order[i]]);
  return best / best_of_top;
}

RankingMetrics ranking_metrics(const std::vector<RankedGroup>& groups) {
  RankingMetrics metrics;
  double agreeing = 0, tau_weighted = 0;
  for (const RankedGroup& group : groups) {
    check_group(group);
    ++metrics.groups;
    metrics.candidates += int64_t(group.seconds.size());
    metrics.top1 += top_k_score(group, 1);
    metrics.top5 += top_k_score(group, 5);
    const PairCounts counts = count_pairs(group);
    if (counts.ranked() == 0) continue;
    metrics.pairs += counts.ranked();
    agreeing += double(counts.concordant) + 0.5 * double(counts.score_ties);
    // tau-b: (C - D) / sqrt((pairs not tied in seconds) * (pairs not tied in score)); pairs tied in both are not
    // counted apart, as they are rare for measured times.
    const double score_untied = double(counts.total - counts.score_ties);
    const double denominator = std::sqrt(double(counts.ranked()) * std::max(score_untied, 1.0));
    tau_weighted += double(counts.ranked()) * double(counts.concordant - counts.discordant) / denominator;
  }
  if (metrics.groups > 0) {
    metrics.top1 /= double(metrics.groups);
    metrics.top5 /= double(metrics.groups);
  }
  if (metrics.pairs > 0) {
    metrics.pairwise_accuracy = agreeing / double(metrics.pairs);
    metrics.kendall_tau = tau_weighted / double(metrics.pairs);
  }
  return metrics;
}

}  // namespace ingot
