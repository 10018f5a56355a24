// How well scores rank candidates by their measured run times: pairwise accuracy, Kendall's tau and the top-k score
// (TenSet's), per query group (one workload on one target) and over many groups. Used by `ingot costmodel eval`,
// the online model's held-out check and the tests; pure functions of numbers.
#pragma once

#include <cstdint>
#include <vector>

namespace ingot {

// One query group: the measured seconds of its candidates and the model's scores for them (higher = predicted
// faster), in the same order.
struct RankedGroup {
  std::vector<double> seconds;
  std::vector<double> scores;
};

struct RankingMetrics {
  // Of the pairs of one group whose seconds differ, the share the scores order the same way (a tie in scores counts
  // half). Over many groups: pooled over every group's pairs.
  double pairwise_accuracy = 0;
  // Kendall's tau-b of scores against speed (1 / seconds); over many groups, the mean weighted by each group's
  // pairs.
  double kendall_tau = 0;
  // The best seconds of a group divided by the best seconds among the k candidates the scores rank first
  // (1 = the model's top k hold the best); over many groups, their mean. Groups smaller than k count whole.
  double top1 = 0, top5 = 0;
  int64_t groups = 0, candidates = 0, pairs = 0;  // pairs: those with different seconds, over all groups
};

// Throws std::invalid_argument when a group's seconds and scores differ in length, or a seconds value is not
// positive and finite. Groups of fewer than two candidates count in top-k (as 1) but have no pairs.
RankingMetrics ranking_metrics(const std::vector<RankedGroup>& groups);

// The best seconds of the group divided by the best seconds among the k best-scored candidates (ties in score
// broken by position, earlier first).
double top_k_score(const RankedGroup& group, int k);

}  // namespace ingot
