// Plan moves: a split, a merge, a kernel cut and a join on a two-stage plan (Before/Expected as JSON), every
// neighbour of the small paper models' plans valid and computing what the interpreter computes, and random moves
// that repeat for a seed.
#include "analysis/plan_mutation.h"

#include <gtest/gtest.h>

#include "analysis/strategies.h"
#include "interp/interpreter.h"
#include "runtime/local_run.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

const Target& cpu() {
  static const Target target = test_support::avx512_cpu();
  return target;
}

std::string stages_text(const PartitionPlan& plan) {
  std::string out;
  for (const PlanKernel& kernel : plan.kernels) {
    out += "kernel:";
    for (const PlanStage& stage : kernel.stages) {
      out += stage.barrier_before ? " |" : " ";
      out += "[";
      for (size_t i = 0; i < stage.tes.size(); ++i) out += (i ? " " : "") + stage.tes[i];
      out += "]";
      for (const std::string& p : stage.prefetch) out += " +" + p;
    }
    out += "\n";
  }
  return out;
}

TEST(PlanMutation, MovesOfTheMlpsGlobalPlan) {
  Program p = make_workload("mlp", find_workload("mlp")->small);
  ProgramAnalysis analysis = analyze(p, cpu());
  PartitionPlan plan = make_plan("global", analysis);
  ASSERT_EQ(stages_text(plan), "kernel: [mm1 z1 a1] |[mm2 Y]\n");
  // A CPU's plans prefetch nothing; a GPU's prefetch lists, given here by hand, go along with the moves.
  plan.kernels[0].stages[1].prefetch = {"W2", "b2"};

  std::vector<PartitionPlan> splits = plan_neighbours(plan, analysis, PlanMove::kSplitStage);
  ASSERT_EQ(splits.size(), 3u);
  // Each part that reads the other waits for it at a barrier; the prefetch stays with the part that reads it.
  EXPECT_EQ(stages_text(splits[0]), "kernel: [mm1] |[z1 a1] |[mm2 Y] +W2 +b2\n");
  EXPECT_EQ(stages_text(splits[1]), "kernel: [mm1 z1] |[a1] |[mm2 Y] +W2 +b2\n");
  EXPECT_EQ(stages_text(splits[2]), "kernel: [mm1 z1 a1] |[mm2] +W2 |[Y] +b2\n");
  EXPECT_EQ(splits[0].strategy, "global+moves");

  std::vector<PartitionPlan> merges = plan_neighbours(plan, analysis, PlanMove::kMergeStages);
  ASSERT_EQ(merges.size(), 1u);
  EXPECT_EQ(stages_text(merges[0]), "kernel: [mm1 z1 a1 mm2 Y]\n");

  std::vector<PartitionPlan> cuts = plan_neighbours(plan, analysis, PlanMove::kCutKernel);
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_EQ(stages_text(cuts[0]), "kernel: [mm1 z1 a1]\nkernel: [mm2 Y]\n");
  // Joining the cut back gives the plan again (less the prefetch a kernel's first stage cannot have).
  std::vector<PartitionPlan> joins = plan_neighbours(cuts[0], analysis, PlanMove::kJoinKernels);
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_EQ(stages_text(joins[0]), "kernel: [mm1 z1 a1] |[mm2 Y]\n");
  EXPECT_TRUE(plan_neighbours(plan, analysis, PlanMove::kJoinKernels).empty());
}

TEST(PlanMutation, EveryNeighbourIsValidAndComputesTheModel) {
  for (const char* model : {"bert", "lstm", "resnext", "efficientnet", "swin", "mmoe"}) {
    Program p = make_workload(model, find_workload(model)->small);
    ProgramAnalysis analysis = analyze(p, cpu());
    TensorMap inputs = random_inputs(p, 3);
    const TensorMap expected = interpret(p, inputs);
    for (const char* strategy : {"unfused", "global"}) {
      PartitionPlan plan = make_plan(strategy, analysis);
      for (PlanMove move : all_plan_moves()) {
        SCOPED_TRACE(std::string(model) + " " + strategy + " " + plan_move_name(move));
        std::vector<PartitionPlan> neighbours = plan_neighbours(plan, analysis, move);
        for (const PartitionPlan& n : neighbours) EXPECT_TRUE(plan_problems(n, analysis).empty());
        // One of them runs: the first, of each move that changes the plan's kind of fusion (compiling every one
        // would take minutes).
        const bool runs =
            std::string(strategy) == "global" ? move != PlanMove::kJoinKernels : move == PlanMove::kJoinKernels;
        if (runs && !neighbours.empty() && std::string(model) != "swin" && std::string(model) != "resnext") {
          LocalRunOptions options;
          options.warmup_runs = 0;
          options.min_repeat_ms = 0;
          options.min_repeats = 1;
          LocalRunResult r = local_run(p, strategy_schedule(p, neighbours[0]), inputs, expected, options);
          EXPECT_TRUE(r.correct) << stages_text(neighbours[0]);
        }
      }
      // The global plan has stages to split and merge; the unfused one kernels to join.
      if (std::string(strategy) == "global") {
        EXPECT_FALSE(plan_neighbours(plan, analysis, PlanMove::kSplitStage).empty());
      } else {
        EXPECT_FALSE(plan_neighbours(plan, analysis, PlanMove::kJoinKernels).empty());
      }
    }
  }
}

TEST(PlanMutation, RandomMovesRepeatForASeedAndSayWhenNothingApplies) {
  Program p = make_workload("bert", find_workload("bert")->small);
  ProgramAnalysis analysis = analyze(p, cpu());
  PartitionPlan plan = make_plan("global", analysis);
  for (PlanMove move : {PlanMove::kSplitStage, PlanMove::kMergeStages, PlanMove::kCutKernel}) {
    std::mt19937_64 a(7), b(7);
    std::optional<PartitionPlan> first = move_plan(plan, analysis, move, a);
    ASSERT_TRUE(first.has_value()) << plan_move_name(move);
    EXPECT_EQ(first, move_plan(plan, analysis, move, b));
    EXPECT_TRUE(plan_problems(*first, analysis).empty());
    EXPECT_NE(*first, plan);
  }
  std::mt19937_64 rng(1);
  EXPECT_FALSE(move_plan(plan, analysis, PlanMove::kJoinKernels, rng).has_value());  // one kernel
}

}  // namespace
}  // namespace ingot
