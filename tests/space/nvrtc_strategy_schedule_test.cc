// The `global` strategy makes the paper-size LSTM and MMoE one cooperative CUDA kernel that NVRTC compiles for
// sm_90, and whose launch fits the cooperative limit that the compiled kernel's registers and shared memory allow;
// where a GPU is present, every strategy's GPU program of the small models runs on it and matches the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "analysis/strategies.h"
#include "codegen/cuda_printer.h"
#include "compile/nvrtc_compiler.h"
#include "interp/interpreter.h"
#include "ir/horizontal_batch.h"
#include "lower/kernels.h"
#include "lower/lower.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_run.h"
#include "space/strategy_schedule.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

// Blocks of `threads` threads that fit on one SM at once with the kernel's registers and static shared memory.
int64_t blocks_per_sm(const GpuLimits& g, const CudaBinary& bin, int64_t threads) {
  int64_t blocks = std::min(g.max_blocks_per_sm, g.max_threads_per_sm / threads);
  blocks = std::min(blocks, g.registers_per_sm / (std::max(bin.registers, 1) * threads));
  if (bin.shared_bytes > 0) blocks = std::min(blocks, g.shared_memory_per_sm / bin.shared_bytes);
  return blocks;
}

class GlobalStrategyOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GlobalStrategyOnGpu, IsOneCooperativeKernelWithinTheLimit) {
  Target sm90 = resolve_target("sm_90");
  Program p = make_workload(GetParam());
  PartitionPlan plan = make_plan("global", p, sm90);
  ASSERT_EQ(plan.kernel_count(), 1);
  FixedScheduleOptions gpu;
  gpu.gpu = true;
  LoopFunction f = lower(p, strategy_schedule(p, plan, gpu));
  ASSERT_EQ(split_kernels(f).size(), 1u);
  CudaLaunchConfig launch = cuda_launch_config(f);
  EXPECT_TRUE(launch.cooperative);
  std::string source = print_cuda(f);
  CudaBinary bin = compile_cuda(source, "sm_90", cuda_kernel_name(f));
  EXPECT_FALSE(bin.cubin.empty());
  EXPECT_EQ(bin.spill_stores, 0) << bin.log;
  // The next stages' weights that the plan prefetches are fetched into the L2 by the whole grid.
  bool prefetches = false;
  for (const PlanStage& stage : plan.kernels[0].stages) prefetches |= !stage.prefetch.empty();
  EXPECT_EQ(GetParam() == "mmoe", prefetches);
  if (prefetches) {
    EXPECT_NE(bin.ptx.find("prefetch.global.L2"), std::string::npos);
  }
  int64_t per_sm = blocks_per_sm(sm90.gpu, bin, launch.threads_per_block());
  ASSERT_GE(per_sm, 1) << bin.registers << " registers, " << bin.shared_bytes << " B shared";
  int64_t limit = sm90.gpu.sm_count * per_sm;
  CudaLaunchConfig fitted = fit_grid(launch, limit);
  EXPECT_LE(fitted.num_blocks(), limit);
  EXPECT_GE(fitted.num_blocks(), std::min<int64_t>(launch.num_blocks(), sm90.gpu.sm_count));
  std::printf(
      "%s global on sm_90: 1 kernel, %d registers, %lld B shared, %lld threads/block, grid %lld of %lld "
      "blocks wanted, cooperative limit %lld\n",
      GetParam().c_str(), bin.registers, static_cast<long long>(bin.shared_bytes),
      static_cast<long long>(launch.threads_per_block()), static_cast<long long>(fitted.num_blocks()),
      static_cast<long long>(launch.num_blocks()), static_cast<long long>(limit));
}

INSTANTIATE_TEST_SUITE_P(PaperSize, GlobalStrategyOnGpu, ::testing::Values("mmoe", "lstm"));

// A schedule that batches the LSTM's input projections (ir/horizontal_batch.h) lowers from the model's own program
// into CUDA that NVRTC compiles for sm_80 and sm_90 without spills; on a machine with a GPU it matches the interpreter.
TEST(BatchedLstmOnGpu, CompilesForBothArchitecturesAndMatchesTheInterpreter) {
  const Program p = make_workload("lstm", find_workload("lstm")->small);
  Schedule batches;
  for (const BatchGroup& g : batchable_groups(p)) batches.batch(g.batched, g.members, g.stacked);
  ASSERT_FALSE(batch_groups_of(batches).empty());
  const Program batched = batched_program(p, batches);
  FixedScheduleOptions gpu;
  gpu.gpu = true;
  const Schedule schedule =
      after_batches(batches, strategy_schedule(batched, make_plan("global", batched, resolve_target("sm_90")), gpu));
  const LoopFunction f = lower(p, schedule);
  for (const char* arch : {"sm_80", "sm_90"}) {
    for (const LoopFunction& kernel : split_kernels(f)) {
      CudaBinary bin = compile_cuda(print_cuda(kernel), arch, cuda_kernel_name(kernel));
      EXPECT_FALSE(bin.cubin.empty()) << arch;
      EXPECT_EQ(bin.spill_stores, 0) << arch << bin.log;
    }
  }
  auto driver = CudaDriver::open();
  if (!driver->available()) GTEST_SKIP() << "no usable GPU: " << driver->reason();
  const TensorMap inputs = random_inputs(p, 7);
  const TensorMap expected = interpret(p, inputs);
  CudaRunOptions options;
  options.min_repeats = 1;
  options.min_repeat_ms = 0;
  CudaRunResult r = cuda_run(p, f, inputs, expected, options);
  for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << c.message;
  EXPECT_TRUE(r.correct);
}

// On a machine with a GPU: every strategy's GPU program of the six small models computes what the interpreter
// computes. Skipped without one.
class EveryStrategyOnTheGpu : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EveryStrategyOnTheGpu, MatchesTheInterpreter) {
  auto driver = CudaDriver::open();
  if (!driver->available()) GTEST_SKIP() << "no usable GPU: " << driver->reason();
  auto [model, strategy] = GetParam();
  const WorkloadInfo* info = find_workload(model);
  Program p = make_workload(model, info->small);
  FixedScheduleOptions gpu;
  gpu.gpu = true;
  StrategyProgram sp = make_strategy_program(p, strategy, resolve_target(driver->arch()), gpu);
  TensorMap inputs = random_inputs(p, 7, workload_input_ranges(model, info->small));
  TensorMap expected = interpret(p, inputs);
  CudaRunOptions options;
  options.min_repeats = 1;
  options.min_repeat_ms = 0;
  CudaRunResult r = cuda_run(p, lower(p, sp.schedule), inputs, expected, options);
  for (const Comparison& c : r.checks) EXPECT_TRUE(c.ok) << model << " " << strategy << ": " << c.message;
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(int64_t(r.kernels.size()), sp.plan.kernel_count());
  std::printf("%s %s on %s: %zu kernels, %d binaries, compile %.1f s, median %.3f ms\n", model.c_str(),
              strategy.c_str(), r.device.c_str(), r.kernels.size(), r.distinct_binaries, r.compile_seconds,
              r.statistics.median * 1e3);
}

INSTANTIATE_TEST_SUITE_P(SmallModels, EveryStrategyOnTheGpu,
                         ::testing::Combine(::testing::Values("lstm", "mmoe", "bert", "resnext", "efficientnet",
                                                              "swin"),
                                            ::testing::Values("unfused", "rules", "subgraph", "global")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace ingot
