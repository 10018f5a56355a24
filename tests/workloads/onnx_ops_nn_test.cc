// ONNX ConvTranspose (workloads/onnx_ops_nn.cc) and Resize (workloads/onnx_ops_resize.cc) import: hand-checked
// small cases, and ConvTranspose against a scatter-form loop (each input element adds its kernel to the output),
// independent of the gather form the converter builds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "interp/interpreter.h"
#include "onnx_test_models.h"
#include "workloads/onnx_import.h"

namespace ingot {
namespace {

using testing::f32_tensor;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;
using testing::set_attr;
using testing::unsupported_error;

HostTensor random_tensor(const std::vector<int64_t>& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  HostTensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = dist(rng);
  return t;
}

void expect_values(const HostTensor& actual, const std::vector<int64_t>& shape, const std::vector<float>& expected,
                   float tolerance = 1e-5f) {
  ASSERT_EQ(actual.shape(), shape);
  ASSERT_EQ(actual.num_elements(), int64_t(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual.f32()[i], expected[i], tolerance) << "element " << i;
}

// Runs a one-output model on its one input.
HostTensor run(const onnx::ModelProto& model, const HostTensor& x) {
  ImportedModel m = import_onnx_model(model);
  return interpret(m.program, m.feeds({x})).at(m.outputs[0].tensor_name);
}

// ---- ConvTranspose -----------------------------------------------------------------------------------------

TEST(OnnxConvTranspose, OneDimensionalStrideTwoOverlapsTheKernels) {
  // x = [1, 2], w = [1, 1, 1], stride 2: 1 lands on 0..2, 2 on 2..4, overlapping at 2.
  OnnxModelBuilder b;
  b.input("x", {1, 1, 2});
  b.floats("w", {1, 1, 3}, {1, 1, 1});
  set_attr(b.node("ConvTranspose", {"x", "w"}, {"y"}, "up"), "strides", std::vector<int64_t>{2});
  b.output("y");
  expect_values(run(b.model(), f32_tensor({1, 1, 2}, {1, 2})), {1, 1, 5}, {1, 1, 3, 2, 2});
}

TEST(OnnxConvTranspose, PadsCropAndOutputPaddingExtendsWithBias) {
  // The 1-D case above with pads [1, 0] (drops the first position), output_padding 1 (one more at the end, which
  // no input reaches) and bias 10.
  OnnxModelBuilder b;
  b.input("x", {1, 1, 2});
  b.floats("w", {1, 1, 3}, {1, 1, 1});
  b.floats("bias", {1}, {10});
  auto& n = b.node("ConvTranspose", {"x", "w", "bias"}, {"y"}, "up");
  set_attr(n, "strides", std::vector<int64_t>{2});
  set_attr(n, "pads", std::vector<int64_t>{1, 0});
  set_attr(n, "output_padding", std::vector<int64_t>{1});
  b.output("y");
  expect_values(run(b.model(), f32_tensor({1, 1, 2}, {1, 2})), {1, 1, 5}, {11, 13, 12, 12, 10});
}

struct ConvTransposeCase {
  std::vector<int64_t> x_shape, w_shape;  // w: [C, M / group, k...]
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
  bool bias = false;
};

// Scatter form: y[n, g * Mg + m, i * s + k * d - pad_begin] += x[n, g * Cg + c, i] * w[g * Cg + c, m, k].
HostTensor reference_conv_transpose(const HostTensor& x, const HostTensor& w, const HostTensor* bias, int64_t group,
                                    const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                                    const std::vector<int64_t>& pad_begin, const std::vector<int64_t>& out) {
  const size_t r = out.size();
  const int64_t N = x.shape()[0], C = x.shape()[1], Mg = w.shape()[1], Cg = C / group, M = Mg * group;
  std::vector<int64_t> y_shape = {N, M};
  y_shape.insert(y_shape.end(), out.begin(), out.end());
  HostTensor y(DType::kFloat32, y_shape);
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end()), kernel(w.shape().begin() + 2, w.shape().end());
  int64_t in_count = 1, k_count = 1, out_count = 1;
  for (size_t d = 0; d < r; ++d) {
    in_count *= in[d];
    k_count *= kernel[d];
    out_count *= out[d];
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t m = 0; m < Mg; ++m)
        for (int64_t p = 0; p < in_count; ++p)
          for (int64_t q = 0; q < k_count; ++q) {
            // Unflatten the input position p and the tap q, and find the output position.
            int64_t pi = p, qi = q, o_flat = 0;
            bool inside = true;
            std::vector<int64_t> ip(r), kq(r);
            for (size_t d = r; d-- > 0;) {
              ip[d] = pi % in[d];
              pi /= in[d];
              kq[d] = qi % kernel[d];
              qi /= kernel[d];
            }
            for (size_t d = 0; d < r; ++d) {
              int64_t o = ip[d] * strides[d] + kq[d] * dilations[d] - pad_begin[d];
              inside = inside && o >= 0 && o < out[d];
              o_flat = o_flat * out[d] + o;
            }
            if (!inside) continue;
            const int64_t f = c / Cg * Mg + m;
            y.f32()[(n * M + f) * out_count + o_flat] +=
                x.f32()[(n * C + c) * in_count + p] * w.f32()[(c * Mg + m) * k_count + q];
          }
  if (bias)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t f = 0; f < M; ++f)
        for (int64_t o = 0; o < out_count; ++o) y.f32()[(n * M + f) * out_count + o] += bias->f32()[f];
  return y;
}

// Imports the case and compares with the scatter loop at the given begin padding and output size (which the test
// works out from ONNX's formulas itself).
void check_conv_transpose(const ConvTransposeCase& c, const std::vector<int64_t>& pad_begin,
                          const std::vector<int64_t>& out) {
  HostTensor x = random_tensor(c.x_shape, 1), w = random_tensor(c.w_shape, 2);
  HostTensor bias = random_tensor({c.w_shape[1] * c.group}, 3);
  OnnxModelBuilder b;
  b.input("x", c.x_shape);
  b.initializer("w", w);
  std::vector<std::string> inputs = {"x", "w"};
  if (c.bias) {
    b.initializer("bias", bias);
    inputs.push_back("bias");
  }
  auto& n = b.node("ConvTranspose", inputs, {"y"}, "up");
  if (c.group != 1) set_attr(n, "group", c.group);
  if (!c.strides.empty()) set_attr(n, "strides", c.strides);
  if (!c.dilations.empty()) set_attr(n, "dilations", c.dilations);
  if (!c.pads.empty()) set_attr(n, "pads", c.pads);
  if (!c.output_padding.empty()) set_attr(n, "output_padding", c.output_padding);
  if (!c.output_shape.empty()) set_attr(n, "output_shape", c.output_shape);
  if (!c.auto_pad.empty()) set_attr(n, "auto_pad", c.auto_pad);
  b.output("y");
  const size_t r = c.x_shape.size() - 2;
  auto or_ones = [&](const std::vector<int64_t>& v) { return v.empty() ? std::vector<int64_t>(r, 1) : v; };
  HostTensor expected = reference_conv_transpose(x, w, c.bias ? &bias : nullptr, c.group, or_ones(c.strides),
                                                 or_ones(c.dilations), pad_begin, out);
  HostTensor actual = run(b.model(), x);
  ASSERT_EQ(actual.shape(), expected.shape());
  for (int64_t i = 0; i < expected.num_elements(); ++i)
    ASSERT_NEAR(actual.f32()[i], expected.f32()[i], 1e-4f) << "element " << i;
}

TEST(OnnxConvTranspose, TwoDimensionalWithGroupsStridesDilationsPadsAndBias) {
  ConvTransposeCase c;
  c.x_shape = {2, 4, 3, 4};
  c.w_shape = {4, 3, 3, 2};  // group 2: 6 output channels
  c.group = 2;
  c.strides = {2, 3};
  c.dilations = {2, 1};
  c.pads = {1, 0, 2, 1};
  c.output_padding = {1, 2};
  c.bias = true;
  // out = s * (in - 1) + output_padding + (k - 1) * d + 1 - pads: 2*2 + 1 + 4 + 1 - 3 = 7, 3*3 + 2 + 1 + 1 - 1 = 12.
  check_conv_transpose(c, {1, 0}, {7, 12});
}

TEST(OnnxConvTranspose, OneDimensionalWithOutputShape) {
  ConvTransposeCase c;
  c.x_shape = {1, 2, 5};
  c.w_shape = {2, 3, 3};
  c.strides = {2};
  c.output_shape = {12};
  // total padding = 2 * 4 + 3 - 12 = -1: begin = -1 - floor(-1 / 2) = 0, the output one longer at the end.
  check_conv_transpose(c, {0}, {12});
}

TEST(OnnxConvTranspose, AutoPadSameSplitsTheOddUnitByUpperOrLower) {
  ConvTransposeCase c;
  c.x_shape = {1, 1, 3, 3};
  c.w_shape = {1, 2, 4, 3};
  c.strides = {2, 2};
  // out = in * stride = 6; total = 2 * 2 + (k - 1) + 1 - 6 = 2 (rows), 1 (columns).
  c.auto_pad = "SAME_UPPER";
  check_conv_transpose(c, {1, 0}, {6, 6});
  c.auto_pad = "SAME_LOWER";
  check_conv_transpose(c, {1, 1}, {6, 6});
  c.auto_pad = "VALID";
  check_conv_transpose(c, {0, 0}, {8, 7});
}

// ---- Resize ------------------------------------------------------------------------------------------------

// Resize of x with constant scales or sizes (whichever is non-empty) and string attributes.
OnnxModelBuilder resize_model(const std::vector<int64_t>& x_shape, const std::vector<float>& scales,
                              const std::vector<int64_t>& sizes,
                              const std::vector<std::pair<std::string, std::string>>& attrs, int opset = 13) {
  OnnxModelBuilder b(opset);
  b.input("x", x_shape);
  b.floats("roi", {0}, {});
  std::vector<std::string> inputs = {"x", "roi", "scales"};
  b.floats("scales", {int64_t(scales.size())}, scales);
  if (!sizes.empty()) {
    b.ints("sizes", sizes);
    inputs.push_back("sizes");
  }
  auto& n = b.node("Resize", inputs, {"y"}, "resize");
  for (const auto& [name, value] : attrs) set_attr(n, name, value);
  b.output("y");
  return b;
}

// Whether the converter made a lookup table (a constant whose name contains `what`).
bool has_table(const ImportedModel& m, const std::string& what) {
  for (const auto& [name, value] : m.initializers)
    if (name.find(what) != std::string::npos) return true;
  return false;
}

TEST(OnnxResize, NearestUpsamplesByRepeating) {
  OnnxModelBuilder b = resize_model({1, 1, 2, 2}, {1, 1, 2, 2}, {}, {{"mode", "nearest"}});
  expect_values(run(b.model(), f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})), {1, 1, 4, 4},
                {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // o / 2 per axis: a floor division, no index table and no weights.
  ImportedModel m = import_onnx_model(b.model());
  EXPECT_FALSE(has_table(m, "_index"));
  EXPECT_FALSE(has_table(m, "_weights"));
}

TEST(OnnxResize, LinearHalfPixelAndAlignCornersInterpolate) {
  // [1, 3] to 4 positions. half_pixel: x = (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25, clamped at the edges.
  OnnxModelBuilder half = resize_model({1, 2}, {1, 2}, {}, {{"mode", "linear"}}, 11);
  expect_values(run(half.model(), f32_tensor({1, 2}, {1, 3})), {1, 4}, {1, 1.5f, 2.5f, 3});
  // align_corners: x = o * (2 - 1) / (4 - 1).
  OnnxModelBuilder corners =
      resize_model({1, 2}, {}, {1, 4}, {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}});
  expect_values(run(corners.model(), f32_tensor({1, 2}, {1, 3})), {1, 4}, {1, 1 + 2.0f / 3, 1 + 4.0f / 3, 3});
}

TEST(OnnxResize, BilinearOnNchwIsTheProductOfTheAxes) {
  // 2x2 -> 3x3 with align_corners: the corners stay, the middle row and column are averages.
  OnnxModelBuilder b = resize_model({1, 1, 2, 2}, {}, {1, 1, 3, 3},
                                    {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}});
  expect_values(run(b.model(), f32_tensor({1, 1, 2, 2}, {0, 2, 4, 6})), {1, 1, 3, 3}, {0, 1, 2, 2, 3, 4, 4, 5, 6});
}

TEST(OnnxResize, NearestModesRoundAsAsked) {
  // 530 -> 470 positions with asymmetric coordinates x = o * 53 / 47 (no tie at .5). floor and ceil round as
  // named, the round_prefer modes to the nearest. Over 470 positions no floor((p o + q) / c) with c <= 16 gives
  // these indices (9 / 8, the nearest slope, drifts by more than 1), so they come from a lookup table.
  HostTensor x = testing::iota_tensor({1, 530});
  for (const std::string mode : {"floor", "ceil", "round_prefer_floor", "round_prefer_ceil"}) {
    OnnxModelBuilder b =
        resize_model({1, 530}, {}, {1, 470},
                     {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", mode}});
    std::vector<float> expected;
    for (int64_t o = 0; o < 470; ++o) {
      double v = double(o) * 53.0 / 47.0;
      double i = mode == "floor" ? std::floor(v) : mode == "ceil" ? std::ceil(v) : std::round(v);
      expected.push_back(float(std::min(i, 529.0)));
    }
    expect_values(run(b.model(), x), {1, 470}, expected);
    EXPECT_TRUE(has_table(import_onnx_model(b.model()), "_index")) << mode;
  }
}

TEST(OnnxResize, ScalesFromAModelInputNeedABinding) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 2, 2});
  b.input("scales", {4});
  b.floats("roi", {0}, {});
  b.node("Resize", {"x", "roi", "scales"}, {"y"}, "resize");
  b.output("y");
  try {
    import_onnx_model(b.model());
    ADD_FAILURE() << "imported without the scales";
  } catch (const OnnxConstantInputError& e) {
    EXPECT_EQ(e.input(), "scales");
    EXPECT_THAT(e.what(), HasSubstr("scales (input 'scales') must be a constant"));
  }
  ImportedModel m = import_onnx_model(b.model(), {{"scales", f32_tensor({4}, {1, 1, 1, 2})}});
  ASSERT_EQ(m.inputs.size(), 1u);
  HostTensor y = interpret(m.program, m.feeds({f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})})).at(m.outputs[0].tensor_name);
  expect_values(y, {1, 1, 2, 4}, {1, 1, 2, 2, 3, 3, 4, 4});
}

TEST(OnnxResize, RejectsTfCropAndResize) {
  OnnxModelBuilder b = resize_model({1, 2}, {1, 2}, {}, {{"coordinate_transformation_mode", "tf_crop_and_resize"}});
  EXPECT_THAT(unsupported_error(b.model()),
              HasSubstr("node 'resize' (Resize): coordinate_transformation_mode=tf_crop_and_resize is not supported"));
}

}  // namespace
}  // namespace ingot
