// Figures of the Souffle paper's models at paper size against their published values, and every model's small
// variant in the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// FLOPs of the multiply-accumulate reductions alone (convolutions, dense layers, attention products: sums of a
// product of two tensor values), at 2 per multiply-add: what published GFLOPS figures of these models count (as
// multiply-accumulates). A product with a constant (a mean's 1 / n, a variance's scaled square) is not one.
int64_t multiply_accumulate_flops(const Program& program) {
  int64_t total = 0;
  for (const Tensor& t : program.computes()) {
    const ReduceNode* r = t->reduction();
    if (!r || r->op != ReduceOp::kSum) continue;
    const BinaryNode* product = r->source.as<BinaryNode>();
    if (!product || product->op != BinaryOp::kMul || product->a.as<FloatImmNode>() || product->b.as<FloatImmNode>())
      continue;
    int64_t steps = 1;
    for (const IterVar& k : r->axes) steps *= k.extent;
    total += 2 * t->num_elements() * steps;
  }
  return total;
}

struct PublishedFigures {
  std::string workload;
  int64_t parameters;
  double gmacs;                  // published multiply-accumulates, in units of 1e9; 0: none published
  double gmacs_tolerance;        // relative: half a unit of the published figure's last digit
  double elementwise_allowance;  // relative: FLOPs beyond 2 x MACs (BN, activations, softmax, norms, adds)
};

// Sources:
// - resnext101_64x4d, efficientnet_b0, swin_b: torchvision's model documentation (weights
//   ResNeXt101_64X4D_Weights.IMAGENET1K_V1, EfficientNet_B0_Weights.IMAGENET1K_V1, Swin_B_Weights.IMAGENET1K_V1):
//   "num_params" and "GFLOPS" (which torchvision counts as multiply-accumulates) at 224x224.
// - bert: HuggingFace bert-base-uncased has 109,482,240 parameters = 23,837,184 embeddings + 85,054,464 encoder
//   (12 layers x 7,087,872) + 590,592 pooler; this workload is the encoder alone. No published MAC figure at
//   sequence 128, so its MACs are counted by hand: per layer 4 x 128 x 768 x 768 (Q, K, V, output projections)
//   + 2 x 128 x 128 x 768 (scores and context) + 2 x 128 x 768 x 3072 (feed-forward) = 931,135,488.
// - mmoe: counted by hand in mmoe_test.cc (no published figure).
const std::vector<PublishedFigures>& published() {
  static const std::vector<PublishedFigures> figures = {
      {"resnext", 83455272, 15.46, 0.005 / 15.46, 0.01},
      {"efficientnet", 5288548, 0.39, 0.005 / 0.39, 0.06},
      {"swin", 87768224, 15.43, 0.005 / 15.43, 0.02},
      {"bert", 85054464, 12 * 931135488.0 / 1e9, 1e-12, 0.01},
  };
  return figures;
}

TEST(Models, PaperSizeParametersMatchPublishedFigures) {
  for (const PublishedFigures& f : published()) {
    const WorkloadInfo* info = find_workload(f.workload);
    ASSERT_NE(info, nullptr) << f.workload;
    EXPECT_EQ(info->parameter_count({}), f.parameters) << f.workload;
  }
  EXPECT_EQ(12 * 7087872, 85054464);
}

TEST(Models, PaperSizeFlopsMatchPublishedMultiplyAccumulates) {
  for (const PublishedFigures& f : published()) {
    Program p = make_workload(f.workload);
    const double macs = multiply_accumulate_flops(p) / 2.0, published_macs = f.gmacs * 1e9;
    EXPECT_NEAR(macs / published_macs, 1.0, f.gmacs_tolerance) << f.workload << ": " << macs << " MACs";
    // count_flops adds the element-wise work to 2 per multiply-add; it is a small share of these models.
    const int64_t flops = count_flops(p);
    EXPECT_EQ(find_workload(f.workload)->flops({}), flops) << f.workload;
    EXPECT_GE(double(flops), 2 * macs) << f.workload;
    EXPECT_LE(double(flops), 2 * macs * (1 + f.elementwise_allowance)) << f.workload << ": " << flops << " FLOPs";
  }
}

TEST(Models, PaperSizeProgramsBuildInSeconds) {
  for (const char* name : {"resnext", "efficientnet", "swin", "bert", "mmoe"}) {
    auto start = std::chrono::steady_clock::now();
    Program p = make_workload(name);
    const double build = seconds_since(start);
    EXPECT_LT(build, 5.0) << name;
    EXPECT_GT(p.computes().size(), 10u) << name;
    std::printf("%-13s %5zu computes, %13lld FLOPs, %10lld parameters, built in %.3f s\n", name, p.computes().size(),
                (long long)count_flops(p), (long long)find_workload(name)->parameter_count({}), build);
  }
}

TEST(Models, InputRangesCoverEveryWeightWithPyTorchsFanInBound) {
  for (const char* name : {"resnext", "efficientnet", "swin", "bert", "mmoe"}) {
    const InputRanges ranges = workload_input_ranges(name);
    const std::vector<std::string> weights = find_workload(name)->weight_names({});
    EXPECT_EQ(ranges.size(), weights.size()) << name;
    for (const std::string& w : weights) EXPECT_EQ(ranges.count(w), 1u) << name << " " << w;
  }
  auto bound = [](const std::string& workload, const std::string& weight) {
    return workload_input_ranges(workload).at(weight).high;
  };
  EXPECT_DOUBLE_EQ(bound("resnext", "s0b0_conv2_weight"), 1.0 / 6);  // 4 channels per group x 3 x 3
  EXPECT_DOUBLE_EQ(bound("resnext", "fc_bias"), 1.0 / std::sqrt(2048.0));
  EXPECT_DOUBLE_EQ(bound("efficientnet", "s1b0_dw_weight"), 1.0 / 3);  // depthwise: 1 channel x 3 x 3
  EXPECT_DOUBLE_EQ(bound("swin", "s2b3_fc2_weight"), 1.0 / std::sqrt(4 * 512.0));
  EXPECT_DOUBLE_EQ(bound("bert", "l7_ffn_out_weight"), 1.0 / std::sqrt(3072.0));
  EXPECT_DOUBLE_EQ(bound("mmoe", "tower1_hidden_weight"), 0.25);  // 16 expert units
  EXPECT_EQ(workload_input_ranges("swin").at("s0b0_rel_bias_table"), (ValueRange{-0.04, 0.04}));
  EXPECT_EQ(workload_input_ranges("resnext").at("stem_conv_bn_scale"), (ValueRange{0.9, 1.1}));
  EXPECT_EQ(workload_input_ranges("bert").at("l0_attn_norm_beta"), (ValueRange{-0.1, 0.1}));
}

TEST(Models, SmallVariantsAreFiniteAndDeterministic) {
  for (const char* name : {"resnext", "efficientnet", "swin", "bert", "mmoe"}) {
    const WorkloadInfo* info = find_workload(name);
    ASSERT_NE(info, nullptr) << name;
    Program p = make_workload(name, info->small);
    TensorMap in = random_inputs(p, 11);
    auto start = std::chrono::steady_clock::now();
    TensorMap first = interpret(p, in);
    const double run = seconds_since(start);
    TensorMap second = interpret(p, random_inputs(p, 11));
    TensorMap other = interpret(p, random_inputs(p, 12));
    std::printf("%-13s small: %4zu computes, interpreted in %.3f s\n", name, p.computes().size(), run);
    EXPECT_LT(run, 1.0) << name;
    for (const Tensor& o : p.outputs()) {
      const HostTensor &a = first.at(o->name), &b = second.at(o->name), &c = other.at(o->name);
      ASSERT_EQ(a.num_bytes(), b.num_bytes());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.num_bytes()), 0) << name << " " << o->name;
      bool differs = false;
      for (int64_t i = 0; i < a.num_elements(); ++i) {
        ASSERT_TRUE(std::isfinite(a.get(i))) << name << " " << o->name << "[" << i << "]";
        differs |= a.get(i) != c.get(i);
      }
      EXPECT_TRUE(differs) << name << ": another seed gives the same " << o->name;
    }
    // Every intermediate is finite too: nothing overflows on the way.
    for (const auto& [tensor, value] : first)
      for (int64_t i = 0; i < value.num_elements(); ++i)
        ASSERT_TRUE(std::isfinite(value.get(i))) << name << " " << tensor << "[" << i << "]";
  }
}

// Paper size in the interpreter, with each model's input ranges (PyTorch-like initialisation): every output is
// finite. Minutes of interpretation in all, so it runs on request: --gtest_also_run_disabled_tests.
TEST(Models, DISABLED_PaperSizeIsFiniteInTheInterpreter) {
  for (const char* name : {"mmoe", "bert", "efficientnet", "swin", "resnext"}) {
    Program p = make_workload(name);
    TensorMap in = random_inputs(p, 1, workload_input_ranges(name));
    auto start = std::chrono::steady_clock::now();
    TensorMap out = interpret(p, in);
    std::printf("%-13s paper size interpreted in %.1f s\n", name, seconds_since(start));
    for (const Tensor& o : p.outputs()) {
      const HostTensor& v = out.at(o->name);
      double largest = 0;
      for (int64_t i = 0; i < v.num_elements(); ++i) {
        ASSERT_TRUE(std::isfinite(v.get(i))) << name << " " << o->name << "[" << i << "]";
        largest = std::max(largest, std::abs(v.get(i)));
      }
      std::printf("%-13s %s: largest magnitude %.3g\n", name, o->name.c_str(), largest);
    }
  }
}

}  // namespace
}  // namespace ingot
