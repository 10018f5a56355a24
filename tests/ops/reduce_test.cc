#include "ops/reduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

const HostTensor kX = tensor_of({2, 3}, {1, 5, 3, -4, 2, 0});

TEST(Reduce, SumMeanMaxMinWithKeepdims) {
  Tensor x = placeholder("x", {2, 3});
  Tensor s = reduce_sum("s", x, {1}), m = reduce_mean("m", x, {0}), mx = reduce_max("mx", x, {-1}, false),
         mn = reduce_min("mn", x, {0}, false);
  EXPECT_EQ(s->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(m->shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(mx->shape, (std::vector<int64_t>{2}));
  TensorMap out = interpret(Program({s, m, mx, mn}), {{"x", kX}});
  EXPECT_THAT(values_of(out.at("s")), ElementsAre(9, -2));
  EXPECT_THAT(values_of(out.at("m")), ElementsAre(-1.5, 3.5, 1.5));
  EXPECT_THAT(values_of(out.at("mx")), ElementsAre(5, 2));
  EXPECT_THAT(values_of(out.at("mn")), ElementsAre(-4, 2, 0));
}

TEST(Reduce, AllAxesAndOneTE) {
  Tensor x = placeholder("x", {2, 3});
  Tensor all = reduce_sum("all", x), scalar = reduce_mean("scalar", x, {}, false);
  EXPECT_EQ(all->shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(scalar->shape, (std::vector<int64_t>{}));
  EXPECT_EQ(op_test::compute_count({scalar}), 1u);
  TensorMap out = interpret(Program({all, scalar}), {{"x", kX}});
  EXPECT_THAT(values_of(out.at("all")), ElementsAre(7));
  EXPECT_NEAR(values_of(out.at("scalar"))[0], 7.0 / 6.0, 1e-6);
}

TEST(ReduceErrors, RepeatedAndOutOfRangeAxes) {
  Tensor x = placeholder("x", {2, 3});
  EXPECT_THAT(
      [&] {
        reduce_sum("r", x, {1, -1});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("reduce_sum 'r': axis -1 is listed twice")));
  EXPECT_THAT([&] { reduce_max("r", x, {2}); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("reduce_max 'r': axis 2 is out of range")));
}

TEST(ReduceErrors, MeanOfIntegers) {
  Tensor x = placeholder("x", {2, 3}, DType::kInt64);
  EXPECT_THAT([&] { reduce_mean("r", x); }, testing::ThrowsMessage<std::invalid_argument>(
                                                HasSubstr("reduce_mean 'r': input must be floating-point")));
}

}  // namespace
}  // namespace ingot
