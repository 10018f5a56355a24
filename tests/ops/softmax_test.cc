#include "ops/softmax.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::offset;
using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::HasSubstr;

TEST(Softmax, HandValuesAndStability) {
  Tensor x = placeholder("x", {2, 3});
  Tensor y = softmax("y", x);
  EXPECT_EQ(op_test::compute_count({y}), 4u);
  Program p({y});
  for (const char* part : {"y_max", "y_exp", "y_sum"}) EXPECT_TRUE(p.find(part)) << part;
  // The second row would overflow exp without subtracting the max.
  std::vector<double> got = values_of(run(y, {{"x", tensor_of({2, 3}, {1, 2, 3, 1000, 1001, 1002})}}));
  const double e = std::exp(1.0), total = 1 + e + e * e;
  const std::vector<double> want{1 / total, e / total, e * e / total};
  for (int row = 0; row < 2; ++row)
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[size_t(row * 3 + i)], want[size_t(i)], 1e-6);
}

// Plain-loop softmax (or log_softmax) over a set of axes of a rank-3 tensor.
HostTensor reference_softmax(const HostTensor& x, const std::vector<bool>& reduced, bool log) {
  HostTensor out(DType::kFloat32, x.shape());
  const auto& s = x.shape();
  op_test::for_each_index(s, [&](const std::vector<int64_t>& o) {
    double mx = -INFINITY, total = 0;
    auto over = [&](auto f) {
      op_test::for_each_index(s, [&](const std::vector<int64_t>& j) {
        for (size_t d = 0; d < s.size(); ++d)
          if (!reduced[d] && j[d] != o[d]) return;
        f(x.get(offset(s, j)));
      });
    };
    over([&](double v) { mx = std::max(mx, v); });
    over([&](double v) { total += std::exp(v - mx); });
    const double v = x.get(offset(s, o));
    out.set(offset(s, o), log ? v - mx - std::log(total) : std::exp(v - mx) / total);
  });
  return out;
}

TEST(Softmax, RandomizedAgainstPlainLoops) {
  const std::vector<int64_t> xs{3, 4, 5};
  HostTensor xv = random_tensor(DType::kFloat32, xs, 7);
  for (int64_t v = 0; v < xv.num_elements(); ++v) xv.set(v, xv.get(v) * 5);
  Tensor x = placeholder("x", xs);
  for (int64_t axis : {0, 1, -1}) {
    std::vector<bool> reduced(3, false);
    reduced[size_t(axis < 0 ? axis + 3 : axis)] = true;
    Comparison c = compare(run(softmax("s", x, axis), {{"x", xv}}), reference_softmax(xv, reduced, false));
    EXPECT_TRUE(c.ok) << "softmax axis " << axis << ": " << c.message;
    Comparison l = compare(run(log_softmax("l", x, axis), {{"x", xv}}), reference_softmax(xv, reduced, true));
    EXPECT_TRUE(l.ok) << "log_softmax axis " << axis << ": " << l.message;
  }
  Comparison c =
      compare(run(softmax_over_axes("s", x, {1, 2}), {{"x", xv}}), reference_softmax(xv, {false, true, true}, false));
  EXPECT_TRUE(c.ok) << "softmax over axes 1, 2: " << c.message;
}

TEST(Softmax, LogSoftmaxIsThreeTEs) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_EQ(op_test::compute_count({log_softmax("l", x)}), 3u);
}

TEST(SoftmaxErrors, AxisOutOfRange) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_THAT([&] { softmax("attn", x, 2); }, testing::ThrowsMessage<std::invalid_argument>(
                                                  HasSubstr("softmax 'attn': axis 2 is out of range for rank 2")));
}

TEST(SoftmaxErrors, RepeatedAxis) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_THAT(
      [&] {
        softmax_over_axes("s", x, {1, -1});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("softmax_over_axes 's': axis -1 is listed twice")));
}

TEST(SoftmaxErrors, IntegerInput) {
  Tensor x = placeholder("x", {2, 3}, DType::kInt64);
  EXPECT_THAT([&] { softmax("s", x); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("softmax 's': input must be floating-point")));
}

}  // namespace
}  // namespace ingot
