#include "interp/rounding_noise.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ingot {
namespace {

using Axes = std::vector<Expr>;

std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get(i));
  return v;
}

// Sums whose f32 results lose their small terms: 1 + 1024 * 2^-25 is 1 in f32 in order, 1 + 2^-15 in double; 4 +
// 1024 * 2^-26 is 4 and 4 + 2^-16. The noise is the larger difference.
TEST(RoundingNoise, IsTheLargestDifferenceOfTheWideSumsPerOutput) {
  Tensor A = placeholder("A", {2, 1025});
  HostTensor a(DType::kFloat32, {2, 1025});
  for (int r = 0; r < 2; ++r) {
    a.set(r * 1025, r == 0 ? 1.0 : 4.0);
    for (int k = 1; k < 1025; ++k) a.set(r * 1025 + k, std::ldexp(1.0, r == 0 ? -25 : -26));
  }
  IterVar k = reduce_axis(1025, "k"), j = reduce_axis(1025, "j");
  Tensor S = compute("S", {2}, [&](const Axes& i) { return sum(A(i[0], k.var), {k}); });
  // Exact in f32 whatever the order: no noise.
  Tensor M = compute("M", {2}, [&](const Axes& i) { return max_reduce(A(i[0], j.var), {j}); });
  Program p({S, M});
  TensorMap inputs{{"A", a}};
  TensorMap expected = interpret(p, inputs);
  ASSERT_EQ(values_of(expected.at("S")), (std::vector<double>{1, 4}));
  const RoundingNoise noise = rounding_noise(p, inputs, expected);
  EXPECT_EQ(noise, (RoundingNoise{{"S", std::ldexp(1.0, -15)}, {"M", 0.0}}));
  // The verification tolerance allows kRoundingNoiseFactor times it, besides atol * magnitude.
  EXPECT_DOUBLE_EQ(absolute_tolerance(1e-5, expected.at("S"), "S", noise), 1e-5 * 4.0 + 4 * std::ldexp(1.0, -15));
  EXPECT_DOUBLE_EQ(absolute_tolerance(1e-5, expected.at("S"), "other", noise), 1e-5 * 4.0);
}

// An output that rounding moves by the size of its values (here a cancelling sum, 0 in f32 in order and 1 in double)
// is allowed at most kMaxRoundingNoise of its magnitude; an integer output has none.
TEST(RoundingNoise, IsCappedAndOnlyForFloatOutputs) {
  Tensor A = placeholder("A", {3}), I = placeholder("I", {3}, DType::kInt64);
  HostTensor a(DType::kFloat32, {3}), n(DType::kInt64, {3});
  a.set(0, 1e8), a.set(1, 1), a.set(2, -1e8);
  IterVar k = reduce_axis(3, "k"), j = reduce_axis(3, "j");
  Tensor S = compute("S", {1}, [&](const Axes&) { return sum(A(k.var), {k}); });
  Tensor N = compute("N", {1}, [&](const Axes&) { return sum(I(j.var), {j}); });
  Program p({S, N});
  TensorMap inputs{{"A", a}, {"I", n}};
  TensorMap expected = interpret(p, inputs);
  ASSERT_EQ(expected.at("S").get(0), 0.0);
  EXPECT_EQ(rounding_noise(p, inputs, expected), (RoundingNoise{{"S", kMaxRoundingNoise}}));
}

TEST(RoundingNoise, NamesAMissingExpectedOutput) {
  Tensor A = placeholder("A", {3});
  IterVar k = reduce_axis(3, "k");
  Tensor S = compute("S", {1}, [&](const Axes&) { return sum(A(k.var), {k}); });
  Program p({S});
  TensorMap inputs{{"A", HostTensor(DType::kFloat32, {3})}};
  try {
    rounding_noise(p, inputs, {});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("output 'S'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot
