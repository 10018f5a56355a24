#include "analysis/program_analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "ir/flops.h"
#include "workloads/examples.h"
#include "workloads/lstm.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

TEST(ProgramAnalysis, MatmulBiasReluReport) {
  ProgramAnalysis a = analyze(matmul_bias_relu(24, 20, 16), *find_target("sm_80"));
  // C: 480 outputs x 16 steps x (multiply + add); reads A (24x16) and B (16x20) once, writes 24x20 floats.
  EXPECT_EQ(format_analysis(a),
            "program matmul_bias_relu on sm_80 (ridge 12.54 FLOP/byte): 2 computes, 3 placeholders, 16320 FLOPs\n"
            "classes: many-to-many 1; one-to-many 1; compute-intensive 0\n"
            "computes:\n"
            "  C f32[24, 20]: many-to-many, memory-intensive, 15360 FLOPs / 4736 B = AI 3.24, parallel 480, reduce 16\n"
            "    reads A[0:24, 0:16] 1536 B (reduce), B[0:16, 0:20] 1280 B (reduce); writes 1920 B\n"
            "  D f32[24, 20]: one-to-many, memory-intensive, 960 FLOPs / 3920 B = AI 0.24, parallel 480, reduce 1\n"
            "    reads C[0:24, 0:20] 1920 B (identity), bias[0:20] 80 B (broadcast); writes 1920 B\n"
            "tensors read by several computes: none\n");
}

TEST(ProgramAnalysis, LargeGemmIsComputeIntensiveOnEveryTarget) {
  for (const std::string& name : builtin_target_names()) {
    ProgramAnalysis a = analyze(matmul(512, 512, 512), *find_target(name));
    const TeAnalysis& c = a.tes.at(0);
    EXPECT_EQ(c.flops, 2LL * 512 * 512 * 512);
    EXPECT_EQ(c.bytes, 3LL * 512 * 512 * 4);
    EXPECT_EQ(c.parallelism, 512 * 512);
    EXPECT_EQ(c.reduction_size, 512);
    EXPECT_EQ(c.intensity, Intensity::kCompute) << name;
  }
  // The threshold moves with the target: a 96-cube GEMM (16 FLOP/byte) clears the A100's ridge, not the H100's.
  EXPECT_EQ(analyze(matmul(96, 96, 96), *find_target("sm_80")).tes[0].intensity, Intensity::kCompute);
  EXPECT_EQ(analyze(matmul(96, 96, 96), *find_target("sm_90")).tes[0].intensity, Intensity::kMemory);
  // The LSTM's matrix-vector products stay memory-bound: 2 FLOPs per 4-byte weight.
  ProgramAnalysis lstm_a = analyze(lstm(LstmSizes{1, 2, 256, 256}), *find_target("sm_90"));
  const TeAnalysis& wx = *lstm_a.find_te("wx_l0_t0");
  EXPECT_EQ(wx.te_class, TeClass::kManyToMany);
  EXPECT_EQ(wx.intensity, Intensity::kMemory);
  EXPECT_NEAR(wx.arithmetic_intensity, 0.5, 0.01);
}

TEST(ProgramAnalysis, SharedTensorsAreListed) {
  ProgramAnalysis a = analyze(lstm(LstmSizes::small()), *find_target("sm_80"));
  std::string text = format_analysis(a, 2);
  const TensorReuse& w0 = *a.find_tensor("W0");
  // Readers are listed in the program's topological order, which builds the last step's wx first.
  std::string expected_w0 =
      "  W0 f32[32, 8] 1024 B: 3 readers (wx_l0_t2, wx_l0_t1, ... 1 more), 3072 B read in all, "
      "live over " +
      std::to_string(w0.live_span()) + " computes\n";
  EXPECT_NE(text.find(expected_w0), std::string::npos) << text;
  EXPECT_NE(text.find("  b1 f32[32] 128 B: 6 readers (c_l1_t0, h_l1_t0, ... 4 more)"), std::string::npos) << text;
  EXPECT_NE(text.find("classes: many-to-many 12; one-to-one 2; reorganize 12; compute-intensive 0\n"),
            std::string::npos)
      << text;
}

TEST(ProgramAnalysis, Json) {
  ProgramAnalysis a = analyze(matmul_bias_relu(24, 20, 16), *find_target("sm_90"));
  nlohmann::json j = analysis_to_json(a);
  EXPECT_EQ(j["program"], "matmul_bias_relu");
  EXPECT_EQ(j["target"]["name"], "sm_90");
  EXPECT_EQ(j["target"]["kind"], "gpu");
  EXPECT_EQ(j["total_flops"], 16320);
  ASSERT_EQ(j["computes"].size(), 2u);
  const nlohmann::json& c = j["computes"][0];
  EXPECT_EQ(c["name"], "C");
  EXPECT_EQ(c["class"], "many-to-many");
  EXPECT_EQ(c["intensity"], "memory");
  EXPECT_EQ(c["shape"], (std::vector<int64_t>{24, 20}));
  EXPECT_EQ(c["bytes"], 4736);
  EXPECT_EQ(c["reads"][0]["tensor"], "A");
  EXPECT_EQ(c["reads"][0]["kind"], "reduce");
  EXPECT_EQ(c["reads"][0]["region"], nlohmann::json::parse("[[0, 24], [0, 16]]"));
  EXPECT_EQ(c["reads"][1]["bytes"], 1280);
  ASSERT_EQ(j["tensors"].size(), 5u);
  const nlohmann::json& bias = j["tensors"][3];
  EXPECT_EQ(bias["name"], "bias");
  EXPECT_EQ(bias["placeholder"], true);
  EXPECT_EQ(bias["readers"], nlohmann::json::parse("[\"D\"]"));
  EXPECT_EQ(j["tensors"][4]["output"], true);
  // The JSON is plain data: it survives a round trip through text.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST(ProgramAnalysis, FlopsAreCountedAsTheWorkloadRegistryCountsThem) {
  for (const WorkloadInfo& w : list_workloads()) {
    Program p = make_workload(w.name, w.small);
    EXPECT_EQ(program_flops(p), count_flops(p)) << w.name;
    EXPECT_EQ(analyze(p, *find_target("cpu")).total_flops, count_flops(p)) << w.name;
  }
}

// The least of three runs: a bound on the work, not on the machine's other load (CI runs tests two at a time).
double seconds_to_analyze(const Program& p) {
  double least = 1e9;
  for (int run = 0; run < 3; ++run) {
    auto start = std::chrono::steady_clock::now();
    ProgramAnalysis a = analyze(p, *find_target("sm_80"));
    least = std::min(least, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    EXPECT_EQ(a.tes.size(), p.computes().size());
  }
  return least;
}

TEST(ProgramAnalysis, PaperSizeLstmAndA20kComputeProgramTakeWellUnderASecond) {
  Program paper = lstm(LstmSizes{});  // 10 layers x 100 steps: 4002 computes
  ASSERT_EQ(paper.computes().size(), 4002u);
  double paper_s = seconds_to_analyze(paper);
  Program big = lstm(LstmSizes{50, 100, 256, 256});
  ASSERT_EQ(big.computes().size(), 20002u);
  double big_s = seconds_to_analyze(big);
  std::printf("analyze: 4002 computes %.3f s, 20002 computes %.3f s\n", paper_s, big_s);
#if defined(__SANITIZE_ADDRESS__)
  const double slowdown = 10;  // AddressSanitizer builds (INGOT_SANITIZE) run several times slower
#else
  const double slowdown = 1;
#endif
  EXPECT_LT(paper_s, 0.25 * slowdown);
  EXPECT_LT(big_s, 1.0 * slowdown);
  // Linear, not quadratic: five times the computes take far less than 25 times as long.
  EXPECT_LT(big_s, 12 * paper_s + 0.05);
}

}  // namespace
}  // namespace ingot
