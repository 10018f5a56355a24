// split_reduction (rfactor) and its selector: Before/Expected splits, the interpreter on split programs (hand-built
// and every model's small variant), the candidates on GPU and CPU targets, and the rejections.
#include "transform/two_phase_reduction.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/interpreter.h"
#include "tests/transform/same_outputs.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

// y = A v, read by an element-wise output.
Program gemv(int64_t rows, int64_t K) {
  Tensor A = placeholder("A", {rows, K});
  Tensor v = placeholder("v", {K});
  IterVar k = reduce_axis(K, "k");
  Tensor y = compute("y", {rows}, [&](const Axes& i) { return sum(A(i[0], k.var) * v(k.var), {k}); });
  Tensor out = compute("out", {rows}, [&](const Axes& i) { return y(i[0]) * 2.0; });
  return Program({out}, "gemv");
}

TEST(TwoPhaseReduction, SplitsWithAGuardWhenTheFactorDoesNotDivide) {
  Program before = gemv(2, 10);
  Program after = split_reduction(before, "y", 4);
  EXPECT_EQ(after.to_string(),
            "program gemv {\n"
            "  A: f32[2, 10] = placeholder\n"
            "  v: f32[10] = placeholder\n"
            "  y_partial: f32[2, 3] = compute(i, k_o) sum(select((((k_o * 4) + k_i) < 10), "
            "(A[i, ((k_o * 4) + k_i)] * v[((k_o * 4) + k_i)]), 0.0), axes=[k_i:4])\n"
            "  y: f32[2] = compute(i) sum(y_partial[i, k_o], axes=[k_o:3])\n"
            "  out: f32[2] = compute(i) (y[i] * 2.0)\n"
            "  outputs: out\n"
            "}\n");
  expect_same_outputs(before, after);
  for (int64_t factor : {1, 2, 3, 5, 7, 10}) {
    SCOPED_TRACE(factor);
    expect_same_outputs(before, split_reduction(before, "y", factor));
  }
}

TEST(TwoPhaseReduction, SplitsTheLargestReduceAxisOfAMaxAndKeepsOutputNames) {
  Tensor X = placeholder("X", {3, 4, 6});
  IterVar a = reduce_axis(4, "a");
  IterVar b = reduce_axis(6, "b");
  Tensor m = compute("m", {3}, [&](const Axes& i) { return max_reduce(X(i[0], a.var, b.var), {a, b}); });
  Program before({m}, "max");
  Program after = split_reduction(before, "m", 3);
  EXPECT_EQ(after.to_string(),
            "program max {\n"
            "  X: f32[3, 4, 6] = placeholder\n"
            "  m_partial: f32[3, 2] = compute(i, b_o) max(X[i, a, ((b_o * 3) + b_i)], axes=[a:4, b_i:3])\n"
            "  m: f32[3] = compute(i) max(m_partial[i, b_o], axes=[b_o:2])\n"
            "  outputs: m\n"
            "}\n");
  expect_same_outputs(before, after);
  // With a guard, the max's identity pads the last chunk.
  expect_same_outputs(before, split_reduction(before, "m", 4));
  EXPECT_NE(tensor_definition(split_reduction(before, "m", 4).find("m_partial")).find("-inf"), std::string::npos);
}

TEST(TwoPhaseReduction, RejectsWhatCannotSplit) {
  Program p = gemv(2, 10);
  auto message = [&](const std::string& tensor, int64_t factor) {
    try {
      split_reduction(p, tensor, factor);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("out", 2).find("'out' has no reduction"), std::string::npos);
  EXPECT_NE(message("A", 2).find("'A' is not a compute"), std::string::npos);
  EXPECT_NE(message("nope", 2).find("'nope' is not a compute"), std::string::npos);
  EXPECT_NE(message("y", 0).find("factor 0"), std::string::npos);
  EXPECT_NE(message("y", -3).find("factor -3"), std::string::npos);
  EXPECT_NE(message("y", 11).find("must be in [1, 10]"), std::string::npos);
  Program split = split_reduction(p, "y", 5);
  EXPECT_THROW(split_reduction(split, "y", 2), std::invalid_argument);  // y_partial is taken
  EXPECT_THROW(split_reductions(p, {{"y", 2}, {"y", 5}}), std::invalid_argument);
}

Target small_cpu() {
  Target t;
  t.name = "test_cpu";
  t.kind = TargetKind::kCpu;
  t.peak_fp32_gflops = 100;
  t.memory_bandwidth_gb_s = 10;
  t.cpu.cores = 4;
  t.cpu.threads = 4;
  t.cpu.simd_fp32_lanes = 8;
  return t;
}

TEST(TwoPhaseReduction, SelectsLongReductionsWithTooFewOutputs) {
  Target gpu = *find_target("sm_80");  // 108 SMs: fewer than 108 x 1024 outputs leaves SMs idle
  Target cpu = small_cpu();            // 4 cores x 8 lanes = 32 outputs fill it
  Program short_k = gemv(16, 32), long_k = gemv(16, 512), wide = gemv(200000, 64);
  EXPECT_TRUE(two_phase_candidates(analyze(short_k, gpu), gpu).empty());
  EXPECT_EQ(two_phase_candidates(analyze(long_k, gpu), gpu), (std::vector<std::string>{"y"}));
  EXPECT_EQ(two_phase_candidates(analyze(long_k, cpu), cpu), (std::vector<std::string>{"y"}));
  EXPECT_TRUE(two_phase_candidates(analyze(gemv(64, 512), cpu), cpu).empty());
  EXPECT_TRUE(two_phase_candidates(analyze(wide, gpu), gpu).empty());
  EXPECT_TRUE(two_phase_candidates(analyze(long_k, gpu), gpu, {.min_reduction = 1024}).empty());

  // 16 outputs need 108 x 1024 / 16 chunks to fill the GPU; chunks of at least 32 steps cap them at 16.
  EXPECT_EQ(two_phase_factor(*analyze(long_k, gpu).find_te("y"), gpu), 32);
  // The CPU needs 32 / 16 = 2 chunks.
  EXPECT_EQ(two_phase_factor(*analyze(long_k, cpu).find_te("y"), cpu), 256);
  Program split = split_candidates(long_k, gpu);
  EXPECT_EQ(split.find("y_partial")->shape, (std::vector<int64_t>{16, 16}));
  expect_same_outputs(long_k, split);

  // MMoE's gate and expert GEMVs at batch 1 and an LSTM's gate GEMVs are the GPU's picks.
  Program mmoe = make_workload("mmoe");
  std::vector<std::string> picked = two_phase_candidates(analyze(mmoe, gpu), gpu);
  for (const char* name : {"experts_dense_matmul", "gate0_dense_matmul", "gate1_dense_matmul"})
    EXPECT_NE(std::find(picked.begin(), picked.end(), name), picked.end()) << name;
  Program lstm = make_workload("lstm", {{"layers", 1}, {"steps", 2}});
  EXPECT_EQ(two_phase_candidates(analyze(lstm, gpu), gpu),
            (std::vector<std::string>{"wx_l0_t1", "wx_l0_t0", "uh_l0_t0", "uh_l0_t1"}));
  Program lstm_split = split_candidates(lstm, gpu);
  EXPECT_EQ(lstm_split.computes().size(), lstm.computes().size() + 4);
  expect_same_outputs(lstm, lstm_split, workload_input_ranges("lstm", {{"layers", 1}, {"steps", 2}}));
}

TEST(TwoPhaseReduction, SmallModelsKeepTheirOutputsWhenEveryCandidateIsSplit) {
  Target gpu = *find_target("sm_80");
  for (const std::string name : {"lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"}) {
    SCOPED_TRACE(name);
    const WorkloadInfo* info = find_workload(name);
    ASSERT_NE(info, nullptr);
    Program before = make_workload(name, info->small);
    // The small variants reduce over a few dozen steps: lower the length rule so that every model splits some.
    TwoPhaseOptions options{.min_reduction = 8};
    size_t candidates = two_phase_candidates(analyze(before, gpu), gpu, options).size();
    EXPECT_GT(candidates, 0u);
    Program after = split_candidates(before, gpu, options);
    EXPECT_EQ(after.computes().size(), before.computes().size() + candidates);
    expect_same_outputs(before, after, workload_input_ranges(name, info->small));
  }
}

}  // namespace
}  // namespace ingot
