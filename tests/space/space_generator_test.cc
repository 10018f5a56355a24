#include "space/space_generator.h"

#include <gtest/gtest.h>

#include "analysis/strategies.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

// The sampler's space draws exactly what sample_schedule draws from the same generator state: searches over it
// propose the candidates they proposed before there were spaces.
TEST(SamplerSpace, DrawsWhatTheSamplerDraws) {
  Program p = make_workload("mlp", find_workload("mlp")->small);
  SamplerOptions options;
  options.layout = plan_layout(make_plan("rules", p, resolve_target("cpu")));
  SamplerSpace space(p, options);
  EXPECT_FALSE(space.size().has_value());
  EXPECT_EQ(space.program().to_string(), p.to_string());
  std::mt19937_64 a(11), b(11), c(11);
  std::vector<Schedule> drawn = space.sample(a, 4);
  ASSERT_EQ(drawn.size(), 4u);
  for (const Schedule& s : drawn) EXPECT_EQ(s.to_json(), sample_schedule(p, b, options).to_json());
  EXPECT_EQ(space.sample(c).to_json(), drawn[0].to_json());
}

TEST(StrategySpace, HoldsThePlansOneSchedule) {
  Program p = matmul_bias_relu(16, 12, 8);
  PartitionPlan plan = make_plan("global", p, resolve_target("cpu"));
  StrategySpace space(p, plan);
  EXPECT_EQ(space.size(), 1);
  EXPECT_EQ(space.schedule(), strategy_schedule(p, plan));
  std::mt19937_64 rng(3);
  for (const Schedule& s : space.sample(rng, 3)) EXPECT_EQ(s, space.schedule());
  EXPECT_EQ(rng(), std::mt19937_64(3)());  // drawing does not use the generator
}

}  // namespace
}  // namespace ingot
