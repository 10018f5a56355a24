#include "costmodel/ranking_metrics.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ingot {
namespace {

TEST(RankingMetrics, PerfectScoresRankEveryPair) {
  // Faster candidates score higher.
  RankedGroup group{{1.0, 2.0, 3.0, 4.0}, {4, 3, 2, 1}};
  RankingMetrics m = ranking_metrics({group});
  EXPECT_DOUBLE_EQ(m.pairwise_accuracy, 1.0);
  EXPECT_DOUBLE_EQ(m.kendall_tau, 1.0);
  EXPECT_DOUBLE_EQ(m.top1, 1.0);
  EXPECT_EQ(m.pairs, 6);
  EXPECT_EQ(m.candidates, 4);
  EXPECT_EQ(m.groups, 1);
}

TEST(RankingMetrics, ReversedScoresRankNoPair) {
  RankedGroup group{{1.0, 2.0, 4.0}, {1, 2, 3}};
  RankingMetrics m = ranking_metrics({group});
  EXPECT_DOUBLE_EQ(m.pairwise_accuracy, 0.0);
  EXPECT_DOUBLE_EQ(m.kendall_tau, -1.0);
  EXPECT_DOUBLE_EQ(m.top1, 0.25);  // the model's first pick takes 4 s; the best takes 1 s
  EXPECT_DOUBLE_EQ(m.top5, 1.0);   // three candidates: the top 5 hold them all
}

TEST(RankingMetrics, CountsHandComputedPairs) {
  RankedGroup group{{1.0, 2.0, 3.0, 5.0}, {2, 3, 1, 1}};
  // Pairs: (1,2) wrong, (1,3) right, (1,5) right, (2,3) right, (2,5) right, (3,5) tie -> 4.5 of 6.
  RankingMetrics m = ranking_metrics({group});
  EXPECT_DOUBLE_EQ(m.pairwise_accuracy, 4.5 / 6);
  EXPECT_DOUBLE_EQ(m.top1, 0.5);
  EXPECT_DOUBLE_EQ(top_k_score(group, 2), 1.0);
}

TEST(RankingMetrics, PoolsPairsOverGroupsAndAveragesTopK) {
  RankedGroup right{{1.0, 2.0}, {2, 1}};
  RankedGroup wrong{{1.0, 2.0, 3.0}, {1, 2, 3}};  // 3 pairs, all wrong; top-1 picks 3 s
  RankingMetrics m = ranking_metrics({right, wrong});
  EXPECT_DOUBLE_EQ(m.pairwise_accuracy, 1.0 / 4);
  EXPECT_DOUBLE_EQ(m.top1, (1.0 + 1.0 / 3) / 2);
  EXPECT_EQ(m.pairs, 4);
  EXPECT_DOUBLE_EQ(m.kendall_tau, (1 * 1.0 + 3 * -1.0) / 4);
}

TEST(RankingMetrics, EqualRunTimesAreNotPairs) {
  RankedGroup group{{1.0, 1.0}, {0, 1}};
  RankingMetrics m = ranking_metrics({group});
  EXPECT_EQ(m.pairs, 0);
  EXPECT_DOUBLE_EQ(m.top1, 1.0);
}

TEST(RankingMetrics, RefusesMismatchedOrInvalidGroups) {
  EXPECT_THROW(ranking_metrics({RankedGroup{{1.0, 2.0}, {1}}}), std::invalid_argument);
  EXPECT_THROW(ranking_metrics({RankedGroup{{1.0, 0.0}, {1, 2}}}), std::invalid_argument);
  EXPECT_THROW(ranking_metrics({RankedGroup{{1.0, -1.0}, {1, 2}}}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
