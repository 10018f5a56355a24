// The sketch space (space/sketch_space.h): its fixed schedule is the plan's strategy schedule, every draw lowers on
// the examples and task workloads under every fusion plan and both fixed CPU targets, draws are reproducible, and
// they cover more than the fixed schedule: other knobs, mutations, and the sampler's schedules within the layout.
#include "space/sketch_space.h"

#include <gtest/gtest.h>

#include <set>

#include "analysis/strategies.h"
#include "codegen/cuda_printer.h"
#include "codegen/pipeline.h"
#include "tests/support/fixed_targets.h"
#include "workloads/examples.h"
#include "workloads/registry.h"
#include "workloads/tasks.h"

namespace ingot {
namespace {

SketchSpace space_of(const Program& p, const std::string& strategy, const Target& target) {
  PartitionPlan plan = make_plan(strategy, p, target);
  FixedScheduleOptions fixed;
  fixed.simd_fp32_lanes = int(target.cpu.simd_fp32_lanes);
  SamplerOptions sampler;
  sampler.layout = plan_layout(plan);
  sampler.simd_fp32_lanes = fixed.simd_fp32_lanes;
  return SketchSpace(p, plan, fixed, sampler);
}

std::vector<std::pair<std::string, Program>> examples_and_tasks() {
  std::vector<std::pair<std::string, Program>> out;
  for (const ExampleProgram& e : example_programs()) out.emplace_back(e.name, e.make_small());
  for (const TaskWorkload& t : task_workloads()) out.emplace_back(t.name, make_workload(t.name, t.small));
  return out;
}

// The plan's kernels and stages: the prefetch knob may empty the prefetch lists (docs/strategies.md, Knobs).
StageLayout without_prefetches(StageLayout layout) {
  for (LayoutStep& step : layout) step.prefetch.clear();
  return layout;
}

TEST(SketchSpace, ItsFixedScheduleIsThePlansStrategySchedule) {
  Program p = make_workload("task:bert_ffn", {{"sequence", 32}, {"hidden", 64}, {"intermediate", 256}});
  const Target target = test_support::avx512_cpu();
  SketchSpace space = space_of(p, "global", target);
  EXPECT_EQ(space.fixed_schedule(), make_strategy_program(p, "global", target).schedule);
  EXPECT_FALSE(space.size().has_value());
}

TEST(SketchSpace, EveryDrawLowersOnEveryExampleAndTask) {
  for (const auto& [name, p] : examples_and_tasks())
    for (const std::string strategy : {"unfused", "global"})
      for (const Target& target : {test_support::avx512_cpu(), test_support::avx2_cpu()}) {
        SketchSpace space = space_of(p, strategy, target);
        std::mt19937_64 rng(7);
        for (int n = 0; n < 12; ++n) {
          Schedule s = space.sample(rng);
          EXPECT_EQ(without_prefetches(s.layout()), without_prefetches(plan_layout(make_plan(strategy, p, target))))
              << name;
          try {
            compile_to_cpp_source(p, s);
          } catch (const std::exception& e) {
            ADD_FAILURE() << name << " " << strategy << " " << target.name << " draw " << n << ": " << e.what() << "\n"
                          << s.to_json();
          }
        }
      }
}

TEST(SketchSpace, DrawsAreReproducibleAndVaried) {
  Program p = make_workload("task:bert_ffn", {{"sequence", 32}, {"hidden", 64}, {"intermediate", 256}});
  SketchSpace space = space_of(p, "global", test_support::avx512_cpu());
  std::mt19937_64 a(3), b(3);
  std::vector<Schedule> first = space.sample(a, 80);
  EXPECT_EQ(first, space.sample(b, 80));
  std::set<uint64_t> distinct;
  int with_register_tiles = 0;
  for (const Schedule& s : first) {
    distinct.insert(s.hash());
    for (const Decision& d : s.decisions())
      if (d.kind == DecisionKind::kExplicitVectors) {
        ++with_register_tiles;
        break;
      }
  }
  EXPECT_GE(distinct.size(), 20u);
  // A quarter or more of the draws keep a template's register tile (held in explicit vectors): drawn knobs often
  // leave none (register_tile=1, tiles off), and the sampler's draws rarely have one. 22 of these 80 do.
  EXPECT_GE(with_register_tiles, 20) << with_register_tiles;
}

// A GPU target's sketches (as `ingot tune` of an sm_90 config draws them): every draw is bound to blocks and threads,
// prints as CUDA, and the threads per block vary from draw to draw.
TEST(SketchSpace, GpuDrawsAreBoundAndPrintAsCudaWithVariedThreadsPerBlock) {
  const Target gpu = resolve_target("sm_90");
  for (const auto& [name, p] : examples_and_tasks()) {
    PartitionPlan plan = make_plan("global", p, gpu);
    FixedScheduleOptions fixed;
    fixed.gpu = true;
    fixed.simd_fp32_lanes = 0;
    SamplerOptions sampler;
    sampler.layout = plan_layout(plan);
    sampler.simd_fp32_lanes = 0;
    sampler.gpu = true;
    SketchSpace space(p, plan, fixed, sampler);
    std::mt19937_64 rng(5);
    std::set<int64_t> block_sizes;
    for (int n = 0; n < 12; ++n) {
      Schedule s = space.sample(rng);
      try {
        for (const LoopFunction& kernel : prepare_for_gpu(lower_program(p, s))) {
          print_cuda(kernel);
          block_sizes.insert(cuda_launch_config(kernel).threads_per_block());
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " draw " << n << ": " << e.what() << "\n" << s.to_json();
      }
    }
    EXPECT_GE(block_sizes.size(), 2u) << name;
  }
}

}  // namespace
}  // namespace ingot
