#include "tuner/search_strategy.h"

#include <gtest/gtest.h>

#include <set>

#include "analysis/strategies.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

TEST(RandomSearch, SameSeedSameSequenceAcrossBatchSizes) {
  Program p = matmul_bias_relu(24, 20, 16);
  RandomSearch a(p, 9), b(p, 9);
  std::vector<Schedule> first = a.propose(10);
  std::vector<Schedule> second = b.propose(4);
  for (const Schedule& s : b.propose(6)) second.push_back(s);
  ASSERT_EQ(first.size(), 10u);
  ASSERT_EQ(second.size(), 10u);
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].to_json(), second[i].to_json()) << i;
}

TEST(RandomSearch, NeverProposesTheSameScheduleTwice) {
  Program p = matmul(1, 2, 1);  // a tiny space: the search runs out of new schedules
  RandomSearch search(p, 1);
  std::set<std::string> seen;
  std::vector<Schedule> all = search.propose(10000);
  for (const Schedule& s : all) EXPECT_TRUE(seen.insert(s.to_json()).second);
  EXPECT_LT(all.size(), 10000u);
  EXPECT_TRUE(search.propose(10).empty());
}

// Over a space of one schedule, the search proposes it once and is then exhausted, without drawing in vain.
TEST(RandomSearch, ExhaustsAOnePointSpaceAtOnce) {
  Program p = matmul_bias_relu(16, 12, 8);
  auto space = std::make_shared<StrategySpace>(p, make_plan("unfused", p, resolve_target("cpu")));
  RandomSearch search(space, 5);
  std::vector<Schedule> all = search.propose(4);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], space->schedule());
  EXPECT_TRUE(search.propose(4).empty());
}

TEST(RandomSearch, OverTheSamplerSpaceIsTheProgramsSearch) {
  Program p = matmul_bias_relu(24, 20, 16);
  RandomSearch a(p, 9), b(std::make_shared<SamplerSpace>(p), 9);
  std::vector<Schedule> first = a.propose(6), second = b.propose(6);
  ASSERT_EQ(first.size(), 6u);
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], second[i]) << i;
}

}  // namespace
}  // namespace ingot
