// Every fusion strategy's program, lowered from its plan with the fixed schedules, computes what the
// interpreter computes on the small variants of the six paper models, and the kernels it runs are the plan's.
#include "tuner/strategy_schedule.h"

#include <gtest/gtest.h>

#include "analysis/strategies.h"
#include "codegen/kernels.h"
#include "codegen/lower.h"
#include "ir/interpreter.h"
#include "runtime/local_run.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

const Target& cpu() {
  static const Target target = resolve_target("cpu");
  return target;
}

TEST(StrategySchedule, PlanLayoutHasOneStepPerStageAndAKernelBoundaryPerKernel) {
  Program p = make_workload("mmoe", find_workload("mmoe")->small);
  PartitionPlan plan = make_plan("unfused", p, cpu());
  StageLayout layout = plan_layout(plan);
  ASSERT_EQ(layout.size(), p.computes().size());
  EXPECT_FALSE(layout[0].kernel_before);
  for (size_t n = 1; n < layout.size(); ++n) EXPECT_TRUE(layout[n].kernel_before) << n;
  LoopFunction f = lower(p, strategy_schedule(p, plan));
  EXPECT_EQ(kernel_traffic(f).kernel_count(), plan.kernel_count());
  EXPECT_EQ(split_kernels(f).size(), size_t(plan.kernel_count()));
}

TEST(StrategySchedule, GlobalFusesAndMovesLessThanUnfused) {
  for (const char* model : {"mmoe", "lstm", "bert"}) {
    Program p = make_workload(model, find_workload(model)->small);
    StrategyProgram unfused = make_strategy_program(p, "unfused", cpu());
    StrategyProgram global = make_strategy_program(p, "global", cpu());
    KernelTraffic u = kernel_traffic(lower(p, unfused.schedule));
    KernelTraffic g = kernel_traffic(lower(p, global.schedule));
    EXPECT_EQ(g.kernel_count(), 1) << model;
    EXPECT_GT(u.kernel_count(), 10) << model;
    EXPECT_LT(g.bytes_moved(), u.bytes_moved()) << model;
  }
}

TEST(StrategySchedule, ScheduleRoundTripsThroughJsonWithItsLayout) {
  Program p = make_workload("mmoe", find_workload("mmoe")->small);
  Schedule s = make_strategy_program(p, "rules", cpu()).schedule;
  Schedule back = Schedule::from_json(s.to_json());
  EXPECT_EQ(back, s);
  EXPECT_EQ(back.layout(), s.layout());
}

class EveryStrategyOnEveryModel : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EveryStrategyOnEveryModel, MatchesTheInterpreter) {
  auto [model, strategy] = GetParam();
  const WorkloadInfo* info = find_workload(model);
  ASSERT_NE(info, nullptr);
  Program p = make_workload(model, info->small);
  StrategyProgram sp = make_strategy_program(p, strategy, cpu());
  TensorMap inputs = random_inputs(p, 7, workload_input_ranges(model, info->small));
  TensorMap expected = interpret(p, inputs);
  LocalRunOptions options;
  options.warmup_runs = 0;
  options.min_repeat_ms = 0;
  options.min_repeats = 1;
  LocalRunResult r = local_run(p, sp.schedule, inputs, expected, options);
  for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << model << " " << strategy << ": " << c.message;
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(kernel_traffic(r.function).kernel_count(), sp.plan.kernel_count());
}

INSTANTIATE_TEST_SUITE_P(SmallModels, EveryStrategyOnEveryModel,
                         ::testing::Combine(::testing::Values("lstm", "mmoe", "bert", "resnext", "efficientnet",
                                                              "swin"),
                                            ::testing::Values("unfused", "rules", "subgraph", "global")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace ingot
