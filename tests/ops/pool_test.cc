#include "ops/pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::offset;
using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

TEST(Pool, MaxPoolHandValues) {
  Tensor x = placeholder("x", {1, 1, 4, 4});
  Tensor y = max_pool2d("y", x, {.kernel = {2, 2}, .stride = {2, 2}});
  HostTensor out = run(y, {{"x", tensor_of({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, 0, 9, 0, 0})}});
  EXPECT_THAT(values_of(out), ElementsAre(6, 8, 9, 0));
}

TEST(Pool, AvgPoolHandValuesCountingPadOrNot) {
  Tensor x = placeholder("x", {1, 1, 2, 2});
  TensorMap in{{"x", tensor_of({1, 1, 2, 2}, {1, 2, 3, 4})}};
  Pool2dAttrs a{.kernel = {2, 2}, .stride = {1, 1}, .padding = {1, 1, 0, 0}};
  // Windows: {pad,pad,pad,1}, {pad,pad,1,2}, {pad,1,pad,3}, {1,2,3,4}.
  EXPECT_THAT(values_of(run(avg_pool2d("ex", x, a), in)), ElementsAre(1, 1.5, 2, 2.5));
  a.count_include_pad = true;
  EXPECT_THAT(values_of(run(avg_pool2d("in", x, a), in)), ElementsAre(0.25, 0.75, 1, 2.5));
}

// Plain-loop pooling; avg divides by the real-element count or the padded-window count.
HostTensor reference_pool(const HostTensor& x, const Pool2dAttrs& a, bool is_max, const std::vector<int64_t>& shape) {
  HostTensor out(DType::kFloat32, shape);
  const int64_t H = x.shape()[2], W = x.shape()[3];
  op_test::for_each_index(shape, [&](const std::vector<int64_t>& o) {
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    int64_t real = 0, padded = 0;
    for (int64_t ky = 0; ky < a.kernel[0]; ++ky)
      for (int64_t kx = 0; kx < a.kernel[1]; ++kx) {
        const int64_t h = o[2] * a.stride[0] + ky * a.dilation[0] - a.padding[0];
        const int64_t w = o[3] * a.stride[1] + kx * a.dilation[1] - a.padding[1];
        if (h < H + a.padding[2] && w < W + a.padding[3]) ++padded;
        if (h < 0 || h >= H || w < 0 || w >= W) continue;
        ++real;
        const double v = x.get(offset(x.shape(), {o[0], o[1], h, w}));
        acc = is_max ? std::max(acc, v) : acc + v;
      }
    if (!is_max) acc /= double(a.count_include_pad ? padded : real);
    out.set(offset(shape, o), acc);
  });
  return out;
}

TEST(Pool, RandomizedAgainstPlainLoops) {
  std::vector<Pool2dAttrs> cases{
      {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1, 1, 1}},  // ResNet max pool
      {.kernel = {2, 3}, .stride = {1, 2}, .padding = {0, 1, 1, 0}},
      {.kernel = {3, 3}, .stride = {2, 2}, .ceil_mode = true},
      {.kernel = {3, 2}, .stride = {2, 2}, .padding = {1, 1, 1, 1}, .ceil_mode = true, .count_include_pad = true},
      {.kernel = {2, 2}, .stride = {1, 1}, .padding = {1, 1, 1, 1}, .dilation = {2, 2}},
      {.kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1, 1, 1}, .count_include_pad = true},
      {.kernel = {2, 2}, .stride = {2, 2}},
  };
  uint64_t seed = 40;
  for (const Pool2dAttrs& a : cases) {
    const std::vector<int64_t> xs{2, 3, 8, 7};
    Tensor x = placeholder("x", xs);
    HostTensor xv = random_tensor(DType::kFloat32, xs, seed++);
    Tensor mx = max_pool2d("mx", x, a), av = avg_pool2d("av", x, a);
    TensorMap out = interpret(Program({mx, av}), {{"x", xv}});
    Comparison cm = compare(out.at("mx"), reference_pool(xv, a, true, mx->shape));
    Comparison ca = compare(out.at("av"), reference_pool(xv, a, false, av->shape));
    EXPECT_TRUE(cm.ok) << "max, kernel " << a.kernel[0] << "x" << a.kernel[1] << ": " << cm.message;
    EXPECT_TRUE(ca.ok) << "avg, kernel " << a.kernel[0] << "x" << a.kernel[1] << ": " << ca.message;
  }
}

TEST(Pool, AvgPoolIsOneTEWhenEveryWindowIsFull) {
  Tensor x = placeholder("x", {1, 2, 6, 6});
  EXPECT_EQ(op_test::compute_count({avg_pool2d("a", x, {.kernel = {2, 2}, .stride = {2, 2}})}), 1u);
  EXPECT_EQ(op_test::compute_count({avg_pool2d(
                "b", x, {.kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1, 1, 1}, .count_include_pad = true})}),
            1u);
  EXPECT_EQ(op_test::compute_count({avg_pool2d("c", x, {.kernel = {3, 3}, .padding = {1, 1, 1, 1}})}), 2u);
}

TEST(Pool, GlobalPools) {
  Tensor x = placeholder("x", {1, 2, 2, 2});
  TensorMap out = interpret(Program({global_avg_pool2d("ga", x), global_max_pool2d("gm", x)}),
                            {{"x", tensor_of({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8})}});
  EXPECT_EQ(out.at("ga").shape(), (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_THAT(values_of(out.at("ga")), ElementsAre(2.5, -3.5));
  EXPECT_THAT(values_of(out.at("gm")), ElementsAre(4, -1));
}

TEST(PoolErrors, InputMustBeNCHW) {
  Tensor x = placeholder("x", {2, 8, 8});
  EXPECT_THAT(
      [&] {
        max_pool2d("p", x, {.kernel = {2, 2}});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("max_pool2d 'p': input [2,8,8] must be 4-D NCHW")));
}

TEST(PoolErrors, PaddingNotSmallerThanKernel) {
  Tensor x = placeholder("x", {1, 1, 8, 8});
  EXPECT_THAT(
      [&] {
        avg_pool2d("p", x, {.kernel = {2, 2}, .padding = {2, 0, 0, 0}});
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("avg_pool2d 'p': padding {2,0,0,0} must be smaller than the kernel {2,2}")));
}

TEST(PoolErrors, KernelDoesNotFit) {
  Tensor x = placeholder("x", {1, 1, 2, 2});
  EXPECT_THAT(
      [&] {
        max_pool2d("p", x, {.kernel = {3, 3}});
      },
      testing::ThrowsMessage<std::invalid_argument>(
          HasSubstr("max_pool2d 'p': kernel {3,3} does not fit input [1,1,2,2]")));
}

TEST(PoolErrors, NonPositiveKernel) {
  Tensor x = placeholder("x", {1, 1, 2, 2});
  EXPECT_THAT(
      [&] {
        max_pool2d("p", x, {.kernel = {0, 1}});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("must be positive")));
}

}  // namespace
}  // namespace ingot
