#include "ops/elementwise.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

std::vector<double> apply_unary(const Tensor& y, const std::vector<double>& xs) {
  return values_of(run(y, {{"x", tensor_of({int64_t(xs.size())}, xs)}}));
}

TEST(Elementwise, ReluOnHandValues) {
  Tensor x = placeholder("x", {4});
  EXPECT_THAT(apply_unary(relu("y", x), {-1, 0, 2, -3}), ElementsAre(0, 0, 2, 0));
}

TEST(Elementwise, ActivationsMatchTheirFormulas) {
  Tensor x = placeholder("x", {5});
  const std::vector<double> xs{-3, -0.5, 0, 0.7, 2.5};
  struct Case {
    Tensor y;
    double (*f)(double);
  };
  std::vector<Case> cases{
      {sigmoid("sig", x), [](double v) { return 1 / (1 + std::exp(-v)); }},
      {tanh("th", x), [](double v) { return std::tanh(v); }},
      {gelu("ge", x), [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {gelu_tanh("get", x),
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }},
      {silu("si", x), [](double v) { return v / (1 + std::exp(-v)); }},
      {hard_swish("hs", x), [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); }},
      {hard_sigmoid("hsig", x), [](double v) { return std::clamp(0.2 * v + 0.5, 0.0, 1.0); }},
      {leaky_relu("lr", x), [](double v) { return v >= 0 ? v : 0.01 * v; }},
      {exp("e", x), [](double v) { return std::exp(v); }},
      {erf("er", x), [](double v) { return std::erf(v); }},
      {abs("a", x), [](double v) { return std::fabs(v); }},
      {neg("n", x), [](double v) { return -v; }},
      {pow_scalar("p3", x, 3.0), [](double v) { return v * v * v; }},
      {pow_scalar("p2", x, 2.0), [](double v) { return v * v; }},
      {clip("c", x, -1, 1), [](double v) { return std::clamp(v, -1.0, 1.0); }},
      {add_scalar("as", x, 2), [](double v) { return v + 2; }},
      {mul_scalar("ms", x, -3), [](double v) { return v * -3; }},
      {sub_scalar("ss", x, 1.5), [](double v) { return v - 1.5; }},
      {rsub_scalar("rs", 1.5, x), [](double v) { return 1.5 - v; }},
      {div_scalar("ds", x, 4), [](double v) { return v / 4; }},
  };
  for (const Case& c : cases) {
    std::vector<double> got = apply_unary(c.y, xs);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], c.f(xs[i]), 1e-5) << c.y->name << " at " << xs[i];
  }
  const std::vector<double> positive{0.25, 1, 4};
  Tensor p = placeholder("x", {3});
  EXPECT_THAT(apply_unary(sqrt("sq", p), positive), ElementsAre(0.5, 1, 2));
  EXPECT_THAT(apply_unary(rsqrt("rsq", p), positive), ElementsAre(2, 1, 0.5));
  EXPECT_THAT(apply_unary(reciprocal("rec", p), positive), ElementsAre(4, 1, 0.25));
  EXPECT_THAT(apply_unary(rdiv_scalar("rd", 2, p), positive), ElementsAre(8, 2, 0.5));
  EXPECT_THAT(apply_unary(pow_scalar("ph", p, 0.5), positive), ElementsAre(0.5, 1, 2));
  std::vector<double> logs = apply_unary(log("lg", p), positive);
  EXPECT_NEAR(logs[2], std::log(4.0), 1e-6);
}

TEST(Elementwise, BinaryOpsBroadcastLikeNumpy) {
  // a: [2, 1, 3], b: [4, 1] -> [2, 4, 3].
  Tensor a = placeholder("a", {2, 1, 3}), b = placeholder("b", {4, 1});
  HostTensor av = random_tensor(DType::kFloat32, {2, 1, 3}, 1), bv = random_tensor(DType::kFloat32, {4, 1}, 2);
  for (int64_t i = 0; i < 4; ++i) bv.f32()[i] += 2.0f;  // keep the divisor away from 0
  TensorMap inputs{{"a", av}, {"b", bv}};
  Tensor s = add("s", a, b), d = sub("d", a, b), m = mul("m", a, b), q = div("q", a, b);
  Tensor mx = maximum("mx", a, b), mn = minimum("mn", a, b), pw = pow("pw", b, a);
  TensorMap out = interpret(Program({s, d, m, q, mx, mn, pw}), inputs);
  ASSERT_EQ(out.at("s").shape(), (std::vector<int64_t>{2, 4, 3}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k) {
        const float x = av.f32()[i * 3 + k], y = bv.f32()[j];
        const int64_t o = (i * 4 + j) * 3 + k;
        EXPECT_FLOAT_EQ(out.at("s").f32()[o], x + y);
        EXPECT_FLOAT_EQ(out.at("d").f32()[o], x - y);
        EXPECT_FLOAT_EQ(out.at("m").f32()[o], x * y);
        EXPECT_FLOAT_EQ(out.at("q").f32()[o], x / y);
        EXPECT_FLOAT_EQ(out.at("mx").f32()[o], std::max(x, y));
        EXPECT_FLOAT_EQ(out.at("mn").f32()[o], std::min(x, y));
        EXPECT_NEAR(out.at("pw").f32()[o], std::pow(y, x), 1e-5);
      }
}

TEST(Elementwise, ComparisonsAndWhere) {
  Tensor a = placeholder("a", {3}), b = placeholder("b", {1});
  Tensor gt_ = greater("gt", a, b), lt_ = less("lt", a, b), eq_ = equal("eq", a, b);
  Tensor w = where("w", gt_, a, b);
  EXPECT_EQ(gt_->dtype, DType::kBool);
  TensorMap out =
      interpret(Program({gt_, lt_, eq_, w}), {{"a", tensor_of({3}, {1, 2, 3})}, {"b", tensor_of({1}, {2})}});
  EXPECT_THAT(values_of(out.at("gt")), ElementsAre(0, 0, 1));
  EXPECT_THAT(values_of(out.at("lt")), ElementsAre(1, 0, 0));
  EXPECT_THAT(values_of(out.at("eq")), ElementsAre(0, 1, 0));
  EXPECT_THAT(values_of(out.at("w")), ElementsAre(2, 2, 3));
}

TEST(Elementwise, FillCastAndIntegerOps) {
  Tensor f = fill("f", {2, 2}, 1.5);
  EXPECT_THAT(values_of(run(f, {})), ElementsAre(1.5, 1.5, 1.5, 1.5));
  Tensor i = placeholder("i", {3}, DType::kInt64);
  Tensor as_float = cast_to("cf", i, DType::kFloat32);
  Tensor r = relu("r", i), c = clip("c", i, 0, 4);
  TensorMap out = interpret(Program({as_float, r, c}), {{"i", tensor_of({3}, {-2, 3, 7}, DType::kInt64)}});
  EXPECT_EQ(out.at("cf").dtype(), DType::kFloat32);
  EXPECT_THAT(values_of(out.at("cf")), ElementsAre(-2, 3, 7));
  EXPECT_THAT(values_of(out.at("r")), ElementsAre(0, 3, 7));
  EXPECT_THAT(values_of(out.at("c")), ElementsAre(0, 3, 4));
}

TEST(Elementwise, EachOpIsOneTE) {
  Tensor a = placeholder("a", {2, 3}), b = placeholder("b", {3});
  EXPECT_EQ(op_test::compute_count({gelu("g", add("s", a, b))}), 2u);
}

TEST(Elementwise, ShapesThatDoNotBroadcastAreRejected) {
  Tensor a = placeholder("a", {2, 3}), b = placeholder("b", {4});
  EXPECT_THAT([&] { add("sum1", a, b); }, testing::ThrowsMessage<std::invalid_argument>(
                                              HasSubstr("add 'sum1': shapes [2,3] and [4] do not broadcast")));
}

TEST(Elementwise, MixedDtypesAreRejected) {
  Tensor a = placeholder("a", {2}), b = placeholder("b", {2}, DType::kInt64);
  EXPECT_THAT([&] { mul("m", a, b); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("mul 'm': operands 'a' (f32) and 'b' (i64)")));
}

TEST(Elementwise, MathOnIntegersIsRejected) {
  Tensor i = placeholder("i", {2}, DType::kInt32);
  EXPECT_THAT([&] { sigmoid("s", i); }, testing::ThrowsMessage<std::invalid_argument>(
                                            HasSubstr("sigmoid 's': input 'i' must be floating-point")));
}

TEST(Elementwise, WhereNeedsBoolCondition) {
  Tensor a = placeholder("a", {2});
  EXPECT_THAT([&] { where("w", a, a, a); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("where 'w': condition 'a' must be bool")));
}

TEST(Elementwise, ClipWithCrossedBoundsIsRejected) {
  Tensor a = placeholder("a", {2});
  EXPECT_THAT([&] { clip("c", a, 2, 1); }, testing::ThrowsMessage<std::invalid_argument>(
                                               HasSubstr("clip 'c': lower bound 2.0 exceeds upper bound 1.0")));
}

}  // namespace
}  // namespace ingot
