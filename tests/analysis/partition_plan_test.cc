#include "analysis/partition_plan.h"

#include <gtest/gtest.h>

#include "workloads/examples.h"

namespace ingot {
namespace {

// C[4, 16] = A[4, 8] * B[8, 16]; D = C + bias[16]; E = relu(D), the output.
Program gemm_bias_relu() {
  Tensor a = placeholder("A", {4, 8}), b = placeholder("B", {8, 16}), bias = placeholder("bias", {16});
  IterVar k = reduce_axis(8, "k");
  Tensor c =
      compute("C", {4, 16}, [&](const std::vector<Expr>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); });
  Tensor d = compute("D", {4, 16}, [&](const std::vector<Expr>& i) { return c(i[0], i[1]) + bias(i[1]); });
  Tensor e = compute("E", {4, 16}, [&](const std::vector<Expr>& i) { return maximum(d(i[0], i[1]), Expr(0.0)); });
  return Program({e}, "gemm_bias_relu");
}

// y1 = W x, y2 = W y1: W read by two dependent stages.
Program two_gemv() {
  Tensor w = placeholder("W", {8, 8}), x = placeholder("x", {8});
  IterVar k1 = reduce_axis(8, "k"), k2 = reduce_axis(8, "k");
  Tensor y1 = compute("y1", {8}, [&](const std::vector<Expr>& i) { return sum(w(i[0], k1.var) * x(k1.var), {k1}); });
  Tensor y2 = compute("y2", {8}, [&](const std::vector<Expr>& i) { return sum(w(i[0], k2.var) * y1(k2.var), {k2}); });
  return Program({y2}, "two_gemv");
}

ProgramAnalysis analyzed(const Program& p) { return analyze(p, *find_target("sm_80")); }

PartitionPlan plan_of(const std::string& program, std::vector<PlanKernel> kernels) {
  return PartitionPlan{"test", program, "sm_80", std::move(kernels)};
}

PartitionPlan fused_gemm_bias_relu() {
  return plan_of("gemm_bias_relu", {PlanKernel{{PlanStage{{"C", "D", "E"}, false}}, {}}});
}

std::string problems_text(const PartitionPlan& plan, const ProgramAnalysis& a) {
  std::string text;
  for (const std::string& p : plan_problems(plan, a)) text += p + "\n";
  return text;
}

TEST(PartitionPlan, ValidPlansHaveNoProblems) {
  ProgramAnalysis a = analyzed(gemm_bias_relu());
  EXPECT_EQ(problems_text(fused_gemm_bias_relu(), a), "");
  PartitionPlan staged =
      plan_of("gemm_bias_relu", {PlanKernel{{PlanStage{{"C"}, false}, PlanStage{{"D", "E"}, true, {"bias"}}}, {}}});
  EXPECT_EQ(problems_text(staged, a), "");
  EXPECT_NO_THROW(validate_plan(staged, a));
}

TEST(PartitionPlan, InvalidPlansAreRejected) {
  ProgramAnalysis a = analyzed(gemm_bias_relu());
  auto one_kernel = [](std::vector<PlanStage> stages, std::vector<std::string> resident = {}) {
    return plan_of("gemm_bias_relu", {PlanKernel{std::move(stages), std::move(resident)}});
  };
  // A compute left out, a compute twice, a placeholder and an unknown name in a stage.
  EXPECT_EQ(problems_text(one_kernel({PlanStage{{"C", "D"}, false}}), a), "1 compute(s) in no stage: E\n");
  EXPECT_EQ(problems_text(one_kernel({PlanStage{{"C", "D", "E"}, false}, PlanStage{{"D"}, true}}), a),
            "'D' is in stage 0.0 and in stage 0.1\n");
  EXPECT_EQ(problems_text(one_kernel({PlanStage{{"A", "C", "D", "E", "Z"}, false}}), a),
            "stage 0.0: 'A' is a placeholder, not a compute\nstage 0.0: 'Z' is not a tensor of the program\n");
  // Dependences: a reader listed before its producer in a stage, or in an earlier kernel.
  EXPECT_EQ(problems_text(one_kernel({PlanStage{{"C", "E", "D"}, false}}), a),
            "'E' (stage 0.0) reads 'D', which is computed after it (stage 0.0)\n");
  PartitionPlan backwards = plan_of(
      "gemm_bias_relu", {PlanKernel{{PlanStage{{"D", "E"}, false}}, {}}, PlanKernel{{PlanStage{{"C"}, false}}, {}}});
  EXPECT_EQ(problems_text(backwards, a), "'D' (stage 0.0) reads 'C', which is computed after it (stage 1.0)\n");
  // Barriers: missing between dependent stages, or before a kernel's first stage.
  EXPECT_EQ(problems_text(one_kernel({PlanStage{{"C"}, false}, PlanStage{{"D", "E"}, false}}), a),
            "no barrier between stage 0.0 and stage 0.1, where 'D' reads 'C'\n");
  EXPECT_EQ(problems_text(one_kernel({PlanStage{{"C"}, false}, PlanStage{{"D"}, true}, PlanStage{{"E"}, false}}), a),
            "no barrier between stage 0.1 and stage 0.2, where 'E' reads 'D'\n");
  EXPECT_EQ(problems_text(one_kernel({PlanStage{{"C", "D", "E"}, true}}), a),
            "stage 0.0 is a kernel's first stage but has a barrier before it\n");
  // Empty kernels and stages.
  PartitionPlan empty = plan_of(
      "gemm_bias_relu", {PlanKernel{{PlanStage{{}, false}, PlanStage{{"C", "D", "E"}, true}}, {}}, PlanKernel{}});
  EXPECT_EQ(problems_text(empty, a), "stage 0.0 has no TE\nkernel 1 has no stage\n");
  // Resident tensors must exist and be used by their kernel.
  PartitionPlan resident = plan_of("gemm_bias_relu", {PlanKernel{{PlanStage{{"C"}, false}}, {"bias", "nothing"}},
                                                      PlanKernel{{PlanStage{{"D", "E"}, false}}, {"C"}}});
  EXPECT_EQ(problems_text(resident, a),
            "kernel 0: resident 'bias' is neither read nor written in it\n"
            "kernel 0: resident 'nothing' is not a tensor of the program\n");
  // Prefetches: of a tensor the stage reads from memory, never in a kernel's first stage.
  EXPECT_EQ(
      problems_text(
          one_kernel({PlanStage{{"C"}, false, {"A"}}, PlanStage{{"D", "E"}, true, {"bias", "B", "C", "nothing"}}}), a),
      "stage 0.0: prefetched 'A' has no stage before it in its kernel to be fetched under\n"
      "stage 0.1: prefetched 'B' is not read by the stage\n"
      "stage 0.1: prefetched 'C' is computed in the same kernel\n"
      "stage 0.1: prefetched 'nothing' is not a tensor of the program\n");
  try {
    validate_plan(one_kernel({PlanStage{{"C", "D"}, false}}), a);
    FAIL() << "expected PlanError";
  } catch (const PlanError& e) {
    EXPECT_STREQ(e.what(), "invalid test plan for gemm_bias_relu:\n  1 compute(s) in no stage: E");
  }
}

TEST(PartitionPlan, JsonRoundTrip) {
  PartitionPlan plan =
      plan_of("gemm_bias_relu", {PlanKernel{{PlanStage{{"C"}, false}, PlanStage{{"D", "E"}, true, {"bias"}}}, {"bias"}},
                                 PlanKernel{{PlanStage{{"F"}, false}}, {}}});
  nlohmann::json j = plan_to_json(plan);
  EXPECT_EQ(j["kernels"][0]["stages"][1]["prefetch"], (std::vector<std::string>{"bias"}));
  EXPECT_EQ(j["kernels"][0]["stages"][0]["prefetch"], std::vector<std::string>{});
  EXPECT_EQ(j["version"], kPartitionPlanVersion);
  EXPECT_EQ(j["kernels"][0]["stages"][1]["tes"], (std::vector<std::string>{"D", "E"}));
  EXPECT_EQ(j["kernels"][0]["stages"][1]["barrier_before"], true);
  EXPECT_EQ(plan_from_json(j), plan);
  EXPECT_EQ(plan_from_json(nlohmann::json::parse(j.dump())), plan);
  // Structural equality sees every field.
  PartitionPlan other = plan;
  other.kernels[0].stages[1].barrier_before = false;
  EXPECT_NE(other, plan);
  other = plan;
  other.kernels[0].resident.clear();
  EXPECT_NE(other, plan);
  other = plan;
  other.kernels[0].stages[1].prefetch.clear();
  EXPECT_NE(other, plan);

  nlohmann::json wrong_version = j;
  wrong_version["version"] = kPartitionPlanVersion + 1;
  EXPECT_THROW(plan_from_json(wrong_version), PlanError);
  for (auto [stage, field] : {std::pair{0, "barrier_before"}, std::pair{1, "prefetch"}}) {
    nlohmann::json missing = j;
    missing["kernels"][0]["stages"][stage].erase(field);
    try {
      plan_from_json(missing);
      FAIL() << "expected PlanError";
    } catch (const PlanError& e) {
      EXPECT_EQ(std::string(e.what()),
                "stage 0." + std::to_string(stage) + ": missing field '" + std::string(field) + "'");
    }
  }
  nlohmann::json mistyped = j;
  mistyped["kernels"][0]["resident"] = "bias";
  EXPECT_THROW(plan_from_json(mistyped), PlanError);
}

TEST(PartitionPlan, TrafficCountsWhatCrossesKernels) {
  ProgramAnalysis a = analyzed(gemm_bias_relu());
  // One kernel per TE: A 128 + B 512 in, C 256 out; C 256 + bias 64 in, D 256 out; D 256 in, E 256 out.
  PartitionPlan unfused =
      plan_of("gemm_bias_relu", {PlanKernel{{PlanStage{{"C"}, false}}, {}}, PlanKernel{{PlanStage{{"D"}, false}}, {}},
                                 PlanKernel{{PlanStage{{"E"}, false}}, {}}});
  PlanTraffic t = plan_traffic(unfused, a);
  EXPECT_EQ(t.kernel_bytes, (std::vector<int64_t>{896, 576, 512}));
  EXPECT_EQ(t.bytes_read, 128 + 512 + 256 + 64 + 256);
  EXPECT_EQ(t.bytes_written, 3 * 256);
  // Fused: only the inputs and the output cross.
  PlanTraffic fused = plan_traffic(fused_gemm_bias_relu(), a);
  EXPECT_EQ(fused.bytes_read, 128 + 512 + 64);
  EXPECT_EQ(fused.bytes_written, 256);
}

TEST(PartitionPlan, ResidentTensorsAreReadOncePerKernel) {
  ProgramAnalysis a = analyzed(two_gemv());
  PlanKernel kernel{{PlanStage{{"y1"}, false}, PlanStage{{"y2"}, true}}, {}};
  // W (256 B) once per stage that reads it, x (32 B) once, y2 (32 B) written.
  EXPECT_EQ(plan_traffic(plan_of("two_gemv", {kernel}), a).bytes_moved(), 2 * 256 + 32 + 32);
  kernel.resident = {"W"};
  EXPECT_EQ(plan_traffic(plan_of("two_gemv", {kernel}), a).bytes_moved(), 256 + 32 + 32);
  EXPECT_EQ(format_plan(plan_of("two_gemv", {kernel}), a),
            "plan test of two_gemv on sm_80: 1 kernel, 2 stages, 320 B moved (288 read, 32 written)\n"
            "kernel 0: 320 B moved; resident W (256 B)\n"
            "  stage 0: y1 (many-to-many)\n"
            "  barrier\n"
            "  stage 1: y2 (many-to-many)\n");
  nlohmann::json report = plan_report_json(plan_of("two_gemv", {kernel}), a);
  EXPECT_EQ(report["kernel_count"], 1);
  EXPECT_EQ(report["bytes_moved"], 320);
  EXPECT_EQ(report["kernels"][0]["resident"], (std::vector<std::string>{"W"}));
  EXPECT_EQ(report["kernels"][0]["stages"][1]["classes"], (std::vector<std::string>{"many-to-many"}));
  EXPECT_EQ(report["kernels"][0]["stages"][1]["barrier_before"], true);
}

}  // namespace
}  // namespace ingot
