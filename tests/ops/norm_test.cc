#include "ops/norm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::HasSubstr;

TEST(BatchNorm, HandValuesPerChannel) {
  Tensor x = placeholder("x", {1, 2, 1, 2});
  Tensor g = placeholder("g", {2}), b = placeholder("b", {2}), m = placeholder("m", {2}), v = placeholder("v", {2});
  Tensor y = batch_norm("y", x, g, b, m, v, 0.0);
  EXPECT_EQ(op_test::compute_count({y}), 1u);
  HostTensor out = run(y, {{"x", tensor_of({1, 2, 1, 2}, {1, 3, 10, 20})},
                           {"g", tensor_of({2}, {2, 1})},
                           {"b", tensor_of({2}, {0, 5})},
                           {"m", tensor_of({2}, {1, 10})},
                           {"v", tensor_of({2}, {4, 100})}});
  // Channel 0: (x - 1) * 2 / 2; channel 1: (x - 10) / 10 + 5.
  EXPECT_THAT(values_of(out), testing::ElementsAre(0, 2, 5, 6));
}

// Plain-loop layer norm over the last `inner` elements of each row.
std::vector<double> reference_layer_norm(const HostTensor& x, const HostTensor* gamma, const HostTensor* beta,
                                         int64_t inner, double eps) {
  std::vector<double> out(size_t(x.num_elements()));
  for (int64_t row = 0; row < x.num_elements() / inner; ++row) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += x.get(row * inner + i);
    mean /= double(inner);
    for (int64_t i = 0; i < inner; ++i) var += std::pow(x.get(row * inner + i) - mean, 2);
    var /= double(inner);
    for (int64_t i = 0; i < inner; ++i) {
      double y = (x.get(row * inner + i) - mean) / std::sqrt(var + eps);
      if (gamma) y *= gamma->get(i);
      if (beta) y += beta->get(i);
      out[size_t(row * inner + i)] = y;
    }
  }
  return out;
}

TEST(LayerNorm, RandomizedAgainstPlainLoops) {
  const std::vector<int64_t> xs{2, 3, 8};
  HostTensor xv = random_tensor(DType::kFloat32, xs, 1);
  Tensor x = placeholder("x", xs);
  // Last axis, with gamma and beta (PyTorch LayerNorm).
  {
    Tensor g = placeholder("g", {8}), b = placeholder("b", {8});
    Tensor y = layer_norm("y", x, g, b, -1, 1e-5);
    EXPECT_EQ(op_test::compute_count({y}), 3u);
    Program p({y});
    ASSERT_TRUE(p.find("y_mean"));
    EXPECT_EQ(p.find("y_mean")->shape, (std::vector<int64_t>{2, 3}));
    ASSERT_TRUE(p.find("y_var"));
    HostTensor gv = random_tensor(DType::kFloat32, {8}, 2), bv = random_tensor(DType::kFloat32, {8}, 3);
    std::vector<double> got = values_of(run(y, {{"x", xv}, {"g", gv}, {"b", bv}}));
    std::vector<double> want = reference_layer_norm(xv, &gv, &bv, 8, 1e-5);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  }
  // The last two axes, without affine parameters (ONNX LayerNormalization axis=1).
  {
    Tensor y = layer_norm("z", x, Tensor(), Tensor(), 1, 1e-3);
    std::vector<double> got = values_of(run(y, {{"x", xv}}));
    std::vector<double> want = reference_layer_norm(xv, nullptr, nullptr, 24, 1e-3);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

TEST(NormErrors, BatchNormParameterShape) {
  Tensor x = placeholder("x", {1, 3, 4, 4}), p = placeholder("p", {3}), bad = placeholder("mu", {4});
  EXPECT_THAT([&] { batch_norm("bn1", x, p, p, bad, p); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("batch_norm 'bn1': mean 'mu' [4] must be [3] for input [1,3,4,4]")));
}

TEST(NormErrors, BatchNormRank) {
  Tensor x = placeholder("x", {3}), p = placeholder("p", {3});
  EXPECT_THAT(
      [&] { batch_norm("bn1", x, p, p, p, p); },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("batch_norm 'bn1': input [3] must have rank >= 2")));
}

TEST(NormErrors, LayerNormGammaShape) {
  Tensor x = placeholder("x", {2, 8}), g = placeholder("g", {4});
  EXPECT_THAT([&] { layer_norm("ln", x, g, Tensor()); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("layer_norm 'ln': gamma 'g' [4] must be [8] for input [2,8]")));
}

TEST(NormErrors, LayerNormAxis) {
  Tensor x = placeholder("x", {2, 8});
  EXPECT_THAT(
      [&] { layer_norm("ln", x, Tensor(), Tensor(), 2); },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("layer_norm 'ln': axis 2 is out of range for rank 2")));
}

}  // namespace
}  // namespace ingot
