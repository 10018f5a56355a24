// Property test: random schedules (fixed seeds) of every example program, lowered, printed as C++, compiled
// and run, must equal the reference interpreter; plus the hand schedules at the default sizes.
#include "runtime/local_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "codegen/pipeline.h"
#include "interp/interpreter.h"
#include "lower/kernels.h"
#include "space/hand_schedules.h"
#include "space/schedule_sampler.h"
#include "space/strategy_schedule.h"
#include "tests/support/fixed_targets.h"
#include "workloads/examples.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

LocalRunOptions quick() {
  LocalRunOptions o;
  o.warmup_runs = 0;
  o.min_repeat_ms = 0;
  o.min_repeats = 1;
  o.threads = 2;
  return o;
}

// Threads see each other's writes across the barriers of one parallel region. A small BERT whose only parallel
// stage is one GELU input (the rest run on one thread each) gave wrong answers in 4 of 6 runs on 2 threads while
// the region's buffer pointers were __restrict__: g++ moved loads and stores across the barriers.
TEST(LocalRun, ThreadsSeeEachOthersWritesAcrossBarriers) {
  WorkloadParams small = find_workload("bert")->small;
  Program p = make_workload("bert", small);
  Schedule s =
      Schedule().split("l1_ffn_in", "j", 2).reorder("l1_ffn_in", {"j.o", "i", "j.i"}).parallel("l1_ffn_in", "j.o");
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    TensorMap inputs = random_inputs(p, seed, workload_input_ranges("bert", small));
    LocalRunResult r = local_run(p, s, inputs, interpret(p, inputs), quick());
    ASSERT_TRUE(r.correct) << "seed " << seed << ": " << r.checks[0].message;
  }
}

class RandomSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomSchedules, MatchTheInterpreter) {
  const ExampleProgram& e = find_example(GetParam());
  Program p = e.make_small();
  TensorMap inputs = random_inputs(p, 11);
  TensorMap expected = interpret(p, inputs);
  std::mt19937_64 rng(1234);
  for (int n = 0; n < 12; ++n) {
    Schedule s = sample_schedule(p, rng);
    LocalRunResult r = local_run(p, s, inputs, expected, quick());
    ASSERT_TRUE(r.correct) << e.name << " sample " << n << ": " << r.checks[0].message << "\nschedule: " << s.to_json()
                           << "\n"
                           << to_string(r.function);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, RandomSchedules,
                         ::testing::Values("matmul", "matmul_bias_relu", "softmax", "two_gemm"));

TEST(LocalRun, HandSchedulesMatchTheInterpreterAtFullSize) {
  for (const char* name : {"matmul_bias_relu", "two_gemm", "softmax"}) {
    Program p = find_example(name).make_default();
    TensorMap inputs = random_inputs(p, 3);
    TensorMap expected = interpret(p, inputs);
    LocalRunResult r = local_run(p, hand_schedule(p), inputs, expected, quick());
    EXPECT_TRUE(r.correct) << name << ": " << r.checks[0].message;
    EXPECT_EQ(r.seconds.size(), 1u);
  }
}

// A packed intermediate: R (the first GEMM's relu, [8, 24]) stored in blocks of 8 of its columns, a block's columns
// written together (vectorized), read by the second GEMM directly and through a cache, equals the interpreter.
TEST(LocalRun, PackedIntermediateMatchesTheInterpreter) {
  Program p = find_example("two_gemm").make_small();
  TensorMap inputs = random_inputs(p, 5);
  TensorMap expected = interpret(p, inputs);
  const Schedule packed = Schedule()
                              .pack("R", 1, 8)
                              .split("R", "j", 8)
                              .reorder("R", {"j.o", "i", "j.i"})
                              .parallel("R", "j.o")
                              .vectorize("R", "j.i");
  for (const Schedule& s : {packed, Schedule(packed).cache_read("Y", "R", MemoryScope::kLocal, "i")}) {
    LocalRunResult r = local_run(p, s, inputs, expected, quick());
    EXPECT_TRUE(r.correct) << s.to_json() << ": " << r.checks[0].message << "\n" << to_string(r.function);
    auto buffer = std::find_if(r.function.workspace.begin(), r.function.workspace.end(),
                               [](const Buffer& b) { return b->name == "R"; });
    ASSERT_NE(buffer, r.function.workspace.end());
    EXPECT_EQ((*buffer)->shape, (std::vector<int64_t>{3, 8, 8})) << s.to_json();
  }
}

// A split whose last block is shifted back recomputes the elements that block shares with the one before it: the
// program equals the interpreter with a stage computed inside the shifted loop (its region starts at the block's
// start), outside it (the whole row), a cache_read and a cache_write inside it, and the blocks' own loops parallel
// over another axis. D = relu(A * B + bias), A 10 x 12, B 12 x 9: rows in blocks of 4 (0, 4, 6), columns of 4 (0, 4,
// 5).
TEST(LocalRun, ShiftedTailsMatchTheInterpreter) {
  Tensor a = placeholder("A", {10, 12}), b = placeholder("B", {12, 9}), bias = placeholder("bias", {9});
  IterVar k = reduce_axis(12, "k");
  Tensor c =
      compute("C", {10, 9}, [&](const std::vector<Expr>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); });
  Tensor d =
      compute("D", {10, 9}, [&](const std::vector<Expr>& i) { return maximum(c(i[0], i[1]) + bias(i[1]), 0.0); });
  Program p({d}, "shifted");
  TensorMap inputs = random_inputs(p, 3);
  TensorMap expected = interpret(p, inputs);
  const SplitTail shift = SplitTail::kShift;
  const std::vector<Schedule> schedules = {
      Schedule().split("D", "i", 4, shift).compute_at("C", "D", "i.o"),
      Schedule().split("D", "j", 4, shift).parallel("D", "i").compute_at("C", "D", "i"),
      Schedule()
          .split("C", "i", 4, shift)
          .reorder("C", {"i.o", "j", "k", "i.i"})
          .cache_read("C", "A", MemoryScope::kLocal, "i.o"),
      Schedule().split("C", "j", 4, shift).reorder("C", {"j.o", "i", "k", "j.i"}).parallel("C", "j.o"),
      Schedule().split("C", "i", 4, shift).cache_write("C", "i.o").split("D", "j", 4, shift).vectorize("D", "j.i"),
      // Two buffers allocated at a serial root's shifted loop: both serve both copies.
      Schedule()
          .split("C", "i", 4, shift)
          .reorder("C", {"i.o", "j", "k", "i.i"})
          .cache_read("C", "A", MemoryScope::kLocal, "i.o")
          .cache_write("C", "i.o"),
      Schedule()
          .split("D", "i", 4, shift)
          .compute_at("C", "D", "i.o")
          .cache_read("D", "bias", MemoryScope::kLocal, "i.o"),
  };
  for (size_t n = 0; n < schedules.size(); ++n) {
    const Schedule& s = schedules[n];
    if (n == 3) {  // the shifted loop itself parallel: refused
      EXPECT_THROW(local_run(p, s, inputs, expected, quick()), ScheduleError);
      continue;
    }
    LocalRunResult r = local_run(p, s, inputs, expected, quick());
    EXPECT_TRUE(r.correct) << s.to_json() << ": " << r.checks[0].message << "\n" << to_string(r.function);
  }
}

TEST(LocalRun, AWrongProgramIsReportedNotTimed) {
  Program p = matmul(8, 8, 8);
  TensorMap inputs = random_inputs(p, 1);
  TensorMap expected = interpret(p, inputs);
  expected.at("C").f32()[5] += 1.0f;
  LocalRunResult r = local_run(p, Schedule(), inputs, expected, quick());
  EXPECT_FALSE(r.correct);
  EXPECT_TRUE(r.seconds.empty());
  EXPECT_NE(r.checks[0].message.find("element 5"), std::string::npos) << r.checks[0].message;
}

// An output's rounding noise (interp/rounding_noise.h) widens its absolute tolerance by kRoundingNoiseFactor times
// itself: an element off by 1 passes with a noise of 0.3 (allowed 1.2 besides atol and rtol), not with 0.2 (0.8).
TEST(LocalRun, AnOutputsRoundingNoiseWidensItsTolerance) {
  Program p = matmul(8, 8, 8);
  TensorMap inputs = random_inputs(p, 1);
  TensorMap expected = interpret(p, inputs);
  expected.at("C").f32()[5] += 1.0f;
  LocalRunOptions options = quick();
  options.rounding_noise = {{"C", 0.3}};
  EXPECT_TRUE(local_run(p, Schedule(), inputs, expected, options).correct);
  options.rounding_noise = {{"C", 0.2}};
  LocalRunResult r = local_run(p, Schedule(), inputs, expected, options);
  EXPECT_FALSE(r.correct);
  EXPECT_NE(r.checks[0].message.find("element 5"), std::string::npos) << r.checks[0].message;
}

// With two outputs each output's check takes its own noise: D off by 1 passes with D's noise, not with C's.
TEST(LocalRun, EachOutputTakesItsOwnRoundingNoise) {
  Program mm = matmul(8, 8, 8);
  Tensor C = mm.outputs()[0];
  Tensor D = compute("D", C->shape, [&](const std::vector<Expr>& i) { return C(i[0], i[1]) * 2.0; });
  Program p({C, D});
  TensorMap inputs = random_inputs(p, 1);
  TensorMap expected = interpret(p, inputs);
  expected.at("D").f32()[3] += 1.0f;
  LocalRunOptions options = quick();
  options.rounding_noise = {{"C", 0.3}, {"D", 0.0}};
  LocalRunResult r = local_run(p, Schedule(), inputs, expected, options);
  EXPECT_FALSE(r.correct);
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_TRUE(r.checks[0].ok);
  EXPECT_FALSE(r.checks[1].ok);
  options.rounding_noise = {{"C", 0.0}, {"D", 0.3}};
  EXPECT_TRUE(local_run(p, Schedule(), inputs, expected, options).correct);
}

// A profiled run times every stage interval of the printed function, in one kernel (global: intervals between grid
// barriers) and in many (unfused: one region per kernel), and still checks the answer first.
TEST(LocalRun, ProfileTimesEveryStageInterval) {
  WorkloadParams small = find_workload("bert")->small;
  Program p = make_workload("bert", small);
  TensorMap inputs = random_inputs(p, 3, workload_input_ranges("bert", small));
  TensorMap expected = interpret(p, inputs);
  LocalRunOptions options = quick();
  options.profile = true;
  options.warmup_runs = 1;
  options.min_repeats = 3;
  for (const char* strategy : {"global", "unfused"}) {
    SCOPED_TRACE(strategy);
    Schedule s = make_strategy_program(p, strategy, test_support::avx512_cpu()).schedule;
    LocalRunResult r = local_run(p, s, inputs, expected, options);
    ASSERT_TRUE(r.correct);
    EXPECT_EQ(r.intervals, stage_intervals(prepare_for_cpu(r.function)));
    ASSERT_EQ(r.interval_seconds.size(), r.intervals.size());
    EXPECT_GT(r.intervals.size(), 1u);
    EXPECT_EQ(r.intervals.back().kernel + 1, size_t(kernel_traffic(r.function).kernel_count()));
    double sum = 0;
    for (double seconds : r.interval_seconds) {
      EXPECT_GE(seconds, 0.0);
      sum += seconds;
    }
    EXPECT_GT(sum, 0.0);
  }
  // Without profile marks, nothing is profiled.
  LocalRunResult plain = local_run(p, Schedule(), inputs, expected, quick());
  EXPECT_TRUE(plain.intervals.empty());
  EXPECT_TRUE(plain.interval_seconds.empty());
}

TEST(RunStatistics, MedianMeanStddev) {
  RunStatistics s = run_statistics({3, 1, 2, 10});
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 4);
  EXPECT_NEAR(s.stddev, 4.0824829, 1e-6);
}

}  // namespace
}  // namespace ingot
