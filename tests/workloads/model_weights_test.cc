#include "workloads/model_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "ir/program.h"

namespace ingot {
namespace {

TEST(ModelWeightsTest, FanInRangeIsPyTorchsBound) {
  EXPECT_EQ(fan_in_range(4), (ValueRange{-0.5, 0.5}));
  EXPECT_DOUBLE_EQ(fan_in_range(3).high, 1.0 / std::sqrt(3.0));
}

TEST(ModelWeightsTest, PlaceholderRecordsNameAndRangeInCreationOrder) {
  ModelWeights weights;
  Tensor b = weights.placeholder("b", {2}, {0.0, 1.0});
  Tensor a = weights.placeholder("a", {3, 4}, {-2.0, 2.0});
  EXPECT_TRUE(a->is_placeholder());
  EXPECT_EQ(a->shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(weights.names(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(weights.ranges().at("a"), (ValueRange{-2.0, 2.0}));
  EXPECT_EQ(weights.ranges().at("b"), (ValueRange{0.0, 1.0}));
}

TEST(ModelWeightsTest, LinearRecordsWeightThenBiasWithFanInRange) {
  ModelWeights weights;
  Tensor x = placeholder("x", {2, 16});
  Tensor y = weights.linear("fc1", x, 5);
  Tensor z = weights.linear("logits", "head", y, 3, /*bias=*/false);
  EXPECT_EQ(y->name, "fc1");
  EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(z->name, "logits");
  EXPECT_EQ(z->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(weights.names(), (std::vector<std::string>{"fc1_weight", "fc1_bias", "head_weight"}));
  EXPECT_EQ(weights.ranges().at("fc1_weight"), fan_in_range(16));
  EXPECT_EQ(weights.ranges().at("fc1_bias"), fan_in_range(16));
  EXPECT_EQ(weights.ranges().at("head_weight"), fan_in_range(5));
  const Program p({z}, "linear");
  EXPECT_EQ(p.find("head_weight")->shape, (std::vector<int64_t>{3, 5}));
  EXPECT_FALSE(p.find("head_bias"));
}

TEST(ModelWeightsTest, LayerNormRecordsGammaThenBetaAndNormalizes) {
  ModelWeights weights;
  Tensor x = placeholder("x", {1, 4});
  Tensor y = weights.layer_norm("norm", x, 1e-5);
  EXPECT_EQ(weights.names(), (std::vector<std::string>{"norm_gamma", "norm_beta"}));
  EXPECT_EQ(weights.ranges().at("norm_gamma"), (ValueRange{0.9, 1.1}));
  EXPECT_EQ(weights.ranges().at("norm_beta"), (ValueRange{-0.1, 0.1}));

  TensorMap in;
  in["x"] = HostTensor(DType::kFloat32, {1, 4});
  in["norm_gamma"] = HostTensor(DType::kFloat32, {4});
  in["norm_beta"] = HostTensor(DType::kFloat32, {4});
  for (int64_t i = 0; i < 4; ++i) {
    in["x"].set(i, double(i));  // mean 1.5, variance 1.25
    in["norm_gamma"].set(i, 2.0);
    in["norm_beta"].set(i, 0.5);
  }
  const HostTensor out = interpret(Program({y}, "norm"), in).at("norm");
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_NEAR(out.get(i), 2.0 * (double(i) - 1.5) / std::sqrt(1.25 + 1e-5) + 0.5, 1e-5) << i;
}

// A grouped 3x3 convolution at stride 2 with folded batch norm, against plain loops.
TEST(ModelWeightsTest, ConvBnIsGroupedConvolutionThenPerChannelScaleAndShift) {
  const int64_t in_c = 4, out_c = 6, groups = 2, size = 5, k = 3, stride = 2, out_size = 3;
  ModelWeights weights;
  Tensor x = placeholder("x", {1, in_c, size, size});
  Tensor y = weights.conv_bn("c", x, out_c, k, stride, groups);
  EXPECT_EQ(y->name, "c_bn");
  EXPECT_EQ(y->shape, (std::vector<int64_t>{1, out_c, out_size, out_size}));
  EXPECT_EQ(weights.names(), (std::vector<std::string>{"c_weight", "c_bn_scale", "c_bn_shift"}));
  EXPECT_EQ(weights.ranges().at("c_weight"), fan_in_range(in_c / groups * k * k));
  EXPECT_EQ(weights.ranges().at("c_bn_scale"), (ValueRange{0.9, 1.1}));
  EXPECT_EQ(weights.ranges().at("c_bn_shift"), (ValueRange{-0.1, 0.1}));

  const Program p({y}, "conv_bn");
  const TensorMap in = random_inputs(p, 7, weights.ranges());
  EXPECT_EQ(in.at("c_weight").shape(), (std::vector<int64_t>{out_c, in_c / groups, k, k}));
  const HostTensor out = interpret(p, in).at("c_bn");
  const HostTensor &xs = in.at("x"), &w = in.at("c_weight");
  const int64_t per_group_in = in_c / groups, per_group_out = out_c / groups;
  for (int64_t o = 0; o < out_c; ++o)
    for (int64_t r = 0; r < out_size; ++r)
      for (int64_t c = 0; c < out_size; ++c) {
        double acc = 0;
        for (int64_t ci = 0; ci < per_group_in; ++ci)
          for (int64_t kr = 0; kr < k; ++kr)
            for (int64_t kc = 0; kc < k; ++kc) {
              const int64_t ir = r * stride + kr - k / 2, ic = c * stride + kc - k / 2;
              if (ir < 0 || ir >= size || ic < 0 || ic >= size) continue;
              const int64_t channel = (o / per_group_out) * per_group_in + ci;
              acc += xs.get((channel * size + ir) * size + ic) * w.get(((o * per_group_in + ci) * k + kr) * k + kc);
            }
        const double expected = acc * in.at("c_bn_scale").get(o) + in.at("c_bn_shift").get(o);
        EXPECT_NEAR(out.get((o * out_size + r) * out_size + c), expected, 1e-5) << o << " " << r << " " << c;
      }
}

struct TwoLayerBuilder {
  explicit TwoLayerBuilder(int64_t width) : width(width) {}
  Program build() {
    Tensor x = placeholder("x", {1, 8});
    return Program({weights_.linear("out", weights_.linear("hidden", x, width), 2)}, "two_layer");
  }
  const ModelWeights& weights() const { return weights_; }
  int64_t width;
  ModelWeights weights_;
};

TEST(ModelWeightsTest, WeightsOfBuildsOnceAndReturnsTheRecordedWeights) {
  const ModelWeights w = weights_of<TwoLayerBuilder>(int64_t{4});
  EXPECT_EQ(w.names(), (std::vector<std::string>{"hidden_weight", "hidden_bias", "out_weight", "out_bias"}));
  EXPECT_EQ(w.ranges().at("out_weight"), fan_in_range(4));
}

}  // namespace
}  // namespace ingot
