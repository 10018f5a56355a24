#include "ops/conv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_conventions.h"
#include "tests/ops/op_test_util.h"

namespace ingot {
namespace {

using op_test::offset;
using op_test::run;
using op_test::tensor_of;
using op_test::values_of;
using testing::ElementsAre;
using testing::HasSubstr;

TEST(Conv2d, HandValuesWithPadding) {
  // 1x1x2x2 input, one 2x2 filter of ones, padding 1 on every side: every output is the sum of the overlap.
  Tensor x = placeholder("x", {1, 1, 2, 2}), w = placeholder("w", {1, 1, 2, 2});
  Conv2dAttrs attrs;
  attrs.padding = {1, 1, 1, 1};
  Tensor y = conv2d("y", x, w, Tensor(), attrs);
  ASSERT_EQ(y->shape, (std::vector<int64_t>{1, 1, 3, 3}));
  HostTensor out = run(y, {{"x", tensor_of({1, 1, 2, 2}, {1, 2, 3, 4})}, {"w", tensor_of({1, 1, 2, 2}, {1, 1, 1, 1})}});
  EXPECT_THAT(values_of(out), ElementsAre(1, 3, 2, 4, 10, 6, 3, 7, 4));
}

// Direct convolution in plain loops.
HostTensor reference_conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const Conv2dAttrs& a,
                          const std::vector<int64_t>& out_shape) {
  HostTensor out(DType::kFloat32, out_shape);
  const int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t F = w.shape()[0], CG = w.shape()[1], KH = w.shape()[2], KW = w.shape()[3];
  const int64_t per_group = F / a.groups;
  (void)C;
  op_test::for_each_index(out_shape, [&](const std::vector<int64_t>& o) {
    const int64_t n = o[0], f = o[1], g = f / per_group;
    double acc = bias ? bias->get(f) : 0.0;
    for (int64_t c = 0; c < CG; ++c)
      for (int64_t ky = 0; ky < KH; ++ky)
        for (int64_t kx = 0; kx < KW; ++kx) {
          const int64_t h = o[2] * a.stride[0] + ky * a.dilation[0] - a.padding[0];
          const int64_t ww = o[3] * a.stride[1] + kx * a.dilation[1] - a.padding[1];
          if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
          acc += x.get(offset(x.shape(), {n, g * CG + c, h, ww})) * w.get(offset(w.shape(), {f, c, ky, kx}));
        }
    out.set(offset(out_shape, o), acc);
  });
  return out;
}

TEST(Conv2d, RandomizedAgainstPlainLoops) {
  struct Case {
    std::vector<int64_t> x, w;
    Conv2dAttrs attrs;
    bool bias;
  };
  std::vector<Case> cases{
      {{1, 3, 7, 7}, {4, 3, 3, 3}, {}, false},
      {{2, 4, 9, 8}, {6, 2, 3, 3}, {.stride = {2, 1}, .padding = {1, 0, 2, 1}, .groups = 2}, true},
      {{1, 6, 10, 10}, {6, 1, 3, 3}, {.stride = {2, 2}, .padding = {1, 1, 1, 1}, .groups = 6}, true},  // depthwise
      {{1, 4, 11, 9}, {8, 4, 3, 2}, {.padding = {2, 1, 2, 1}, .dilation = {2, 3}}, false},
      {{1, 8, 5, 5}, {8, 2, 1, 1}, {.groups = 4}, true},  // grouped pointwise (ResNeXt style)
      {{1, 3, 12, 12}, {5, 3, 7, 7}, {.stride = {2, 2}, .padding = {3, 3, 3, 3}}, true},  // ResNet stem shape
      {{2, 12, 1, 1}, {5, 12, 1, 1}, {}, true},  // a squeeze-excitation layer: a GEMV over the channels
  };
  uint64_t seed = 100;
  for (const Case& c : cases) {
    Tensor x = placeholder("x", c.x), w = placeholder("w", c.w), b = placeholder("b", {c.w[0]});
    Tensor y = conv2d("y", x, w, c.bias ? b : Tensor(), c.attrs);
    EXPECT_EQ(op_test::compute_count({y}), c.bias ? 2u : 1u);
    HostTensor xv = random_tensor(DType::kFloat32, c.x, seed++), wv = random_tensor(DType::kFloat32, c.w, seed++),
               bv = random_tensor(DType::kFloat32, {c.w[0]}, seed++);
    TensorMap inputs{{"x", xv}, {"w", wv}};
    if (c.bias) inputs["b"] = bv;
    HostTensor got = run(y, inputs);
    Comparison cmp = compare(got, reference_conv(xv, wv, c.bias ? &bv : nullptr, c.attrs, y->shape));
    EXPECT_TRUE(cmp.ok) << "case with weight dims " << c.w[0] << "x" << c.w[1] << "x" << c.w[2] << "x" << c.w[3] << ": "
                        << cmp.message;
  }
}

// A 1 x 1 kernel with a 1 x 1 output reduces over the channels alone, so that they are the innermost reduction axis a
// schedule vectorizes; other convolutions keep their kernel's axes.
TEST(Conv2d, AOnePointConvolutionReducesOverTheChannelsAlone) {
  auto reduction_axes = [](const Tensor& y) {
    std::vector<std::string> names;
    for (const IterVar& k : y->reduction()->axes) names.push_back(k.name());
    return names;
  };
  Tensor w = placeholder("w", {48, 1152, 1, 1});
  EXPECT_THAT(reduction_axes(conv2d("y", placeholder("x", {1, 1152, 1, 1}), w)), ElementsAre("rc"));
  EXPECT_THAT(reduction_axes(conv2d("y", placeholder("x", {1, 1152, 7, 7}), w)), ElementsAre("rc", "ry", "rx"));
}

TEST(Conv2d, OutputSizeFormula) {
  EXPECT_EQ(window_output_size(224, 3, 3, 7, 2, 1), 112);
  EXPECT_EQ(window_output_size(5, 0, 0, 3, 2, 1, false), 2);
  EXPECT_EQ(window_output_size(6, 0, 0, 3, 2, 1, true), 3);
  // ceil_mode never starts a window in the end padding.
  EXPECT_EQ(window_output_size(5, 1, 1, 2, 2, 1, true), 3);
}

TEST(Conv2dErrors, InputChannelsPerGroup) {
  Tensor x = placeholder("x", {1, 4, 224, 224}), w = placeholder("w", {64, 3, 7, 7});
  EXPECT_THAT([&] { conv2d("conv1", x, w); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr(
                  "conv2d 'conv1': weight [64,3,7,7] has 3 input channels per group, input [1,4,224,224] has 4 "
                  "(groups=1)")));
}

TEST(Conv2dErrors, GroupsMustDivideChannels) {
  Tensor x = placeholder("x", {1, 6, 8, 8}), w = placeholder("w", {4, 2, 3, 3});
  Conv2dAttrs attrs{.groups = 4};
  EXPECT_THAT([&] { conv2d("c", x, w, Tensor(), attrs); },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("conv2d 'c': input [1,6,8,8] has 6 channels, not divisible by groups=4")));
}

TEST(Conv2dErrors, KernelLargerThanInput) {
  Tensor x = placeholder("x", {1, 1, 2, 2}), w = placeholder("w", {1, 1, 3, 3});
  EXPECT_THAT([&] { conv2d("c", x, w); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("the output would be empty")));
}

TEST(Conv2dErrors, BiasShapeAndRank) {
  Tensor x = placeholder("x", {1, 2, 4, 4}), w = placeholder("w", {3, 2, 1, 1}), b = placeholder("b", {2});
  EXPECT_THAT([&] { conv2d("c", x, w, b); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("conv2d 'c': bias [2] must be [3]")));
  Tensor x3 = placeholder("x3", {2, 4, 4});
  EXPECT_THAT([&] { conv2d("c", x3, w); },
              testing::ThrowsMessage<std::invalid_argument>(HasSubstr("conv2d 'c': input [2,4,4] must be 4-D NCHW")));
}

TEST(Conv2dErrors, NonPositiveStride) {
  Tensor x = placeholder("x", {1, 1, 4, 4}), w = placeholder("w", {1, 1, 1, 1});
  EXPECT_THAT(
      [&] {
        conv2d("c", x, w, Tensor(), {.stride = {0, 1}});
      },
      testing::ThrowsMessage<std::invalid_argument>(HasSubstr("must be positive")));
}

}  // namespace
}  // namespace ingot
