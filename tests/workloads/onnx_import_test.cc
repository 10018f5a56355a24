#include "workloads/onnx_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "interp/interpreter.h"
#include "onnx_test_models.h"

namespace ingot {
namespace {

using testing::f32_tensor;
using ::testing::HasSubstr;
using testing::iota_tensor;
using testing::OnnxModelBuilder;
using testing::set_attr;

std::vector<HostTensor> run_model(const onnx::ModelProto& model, const std::vector<HostTensor>& inputs) {
  ImportedModel m = import_onnx_model(model);
  TensorMap results = interpret(m.program, m.feeds(inputs));
  std::vector<HostTensor> outputs;
  for (const OnnxBinding& b : m.outputs) outputs.push_back(results.at(b.tensor_name));
  return outputs;
}

HostTensor run_one(const onnx::ModelProto& model, const std::vector<HostTensor>& inputs) {
  return run_model(model, inputs).at(0);
}

void expect_values(const HostTensor& t, const std::vector<int64_t>& shape, const std::vector<float>& values,
                   float tolerance = 1e-5f) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.num_elements(), int64_t(values.size()));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(t.get(int64_t(i)), values[i], tolerance) << "element " << i;
}

std::string import_error(const onnx::ModelProto& model) {
  try {
    import_onnx_model(model);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(OnnxImport, BroadcastArithmeticAndActivations) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.floats("bias", {3}, {1, -10, 0.5f});
  b.node("Add", {"x", "bias"}, {"sum"});
  b.node("Relu", {"sum"}, {"r"});
  b.node("Neg", {"r"}, {"n"});
  b.node("Abs", {"n"}, {"a"});
  b.node("Mul", {"a", "x"}, {"m"});
  b.node("Sub", {"m", "bias"}, {"s"});
  b.node("Div", {"s", "bias"}, {"y"});
  b.output("y");
  HostTensor x = iota_tensor({2, 3}, 1, -2);  // -2 .. 3
  HostTensor y = run_one(b.model(), {x});
  const float bias[] = {1, -10, 0.5f};
  std::vector<float> expected;
  for (int i = 0; i < 6; ++i) {
    float v = x.f32()[i], c = bias[i % 3];
    expected.push_back((std::max(v + c, 0.0f) * v - c) / c);
  }
  expect_values(y, {2, 3}, expected);
}

TEST(OnnxImport, UnaryMathMatchesStd) {
  OnnxModelBuilder b;
  b.input("x", {4});
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("Tanh", {"x"}, {"t"});
  b.node("Erf", {"x"}, {"e"});
  b.node("Exp", {"x"}, {"x_exp"});
  b.node("Sqrt", {"x_exp"}, {"q"});
  b.floats("two", {}, {2.0f});
  b.node("Pow", {"x", "two"}, {"p"});
  b.floats("lo", {}, {-0.5f});
  b.floats("hi", {}, {0.25f});
  b.node("Clip", {"x", "lo", "hi"}, {"c"});
  for (const char* o : {"s", "t", "e", "q", "p", "c"}) b.output(o);
  HostTensor x = f32_tensor({4}, {-1.5f, -0.25f, 0.5f, 2.0f});
  std::vector<HostTensor> out = run_model(b.model(), {x});
  for (int i = 0; i < 4; ++i) {
    double v = x.f32()[i];
    EXPECT_NEAR(out[0].get(i), 1 / (1 + std::exp(-v)), 1e-6);
    EXPECT_NEAR(out[1].get(i), std::tanh(v), 1e-6);
    EXPECT_NEAR(out[2].get(i), std::erf(v), 1e-6);
    EXPECT_NEAR(out[3].get(i), std::exp(v / 2), 1e-5);
    EXPECT_NEAR(out[4].get(i), v * v, 1e-6);
    EXPECT_NEAR(out[5].get(i), std::clamp(v, -0.5, 0.25), 1e-7);
  }
}

TEST(OnnxImport, MatMulAndGemm) {
  OnnxModelBuilder b;
  b.input("a", {2, 3});
  b.floats("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  b.node("MatMul", {"a", "w"}, {"mm"});
  b.floats("wt", {2, 3}, {1, 0, -1, 2, 1, 0});  // B^T for transB
  b.floats("c", {2}, {10, 20});
  auto& g = b.node("Gemm", {"a", "wt", "c"}, {"gm"});
  set_attr(g, "transB", int64_t(1));
  set_attr(g, "alpha", 2.0f);
  set_attr(g, "beta", 0.5f);
  b.output("mm");
  b.output("gm");
  HostTensor a = iota_tensor({2, 3});  // [[0 1 2] [3 4 5]]
  std::vector<HostTensor> out = run_model(b.model(), {a});
  expect_values(out[0], {2, 2}, {13, 16, 40, 52});
  // gemm: 2 * a @ wt^T + 0.5 * c; a @ wt^T = [[-2, 1], [-2, 10]]
  expect_values(out[1], {2, 2}, {-4 + 5, 2 + 10, -4 + 5, 20 + 10});
}

// Direct convolution by loops, for checking Conv's attribute handling.
std::vector<float> reference_conv(const HostTensor& x, const HostTensor& w, int64_t groups, int64_t stride, int64_t pad,
                                  int64_t dilation, std::vector<int64_t>* out_shape) {
  int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], wd = x.shape()[3];
  int64_t f = w.shape()[0], cg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  int64_t oh = (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1,
          ow = (wd + 2 * pad - dilation * (kw - 1) - 1) / stride + 1;
  *out_shape = {n, f, oh, ow};
  std::vector<float> out;
  int64_t fg = f / groups;
  (void)c;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < f; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double s = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                int64_t iy = y * stride - pad + ky * dilation, ix = xx * stride - pad + kx * dilation;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                int64_t cin = (o / fg) * cg + ci;
                s += x.f32()[((b * x.shape()[1] + cin) * h + iy) * wd + ix] *
                     w.f32()[((o * cg + ci) * kh + ky) * kw + kx];
              }
          out.push_back(float(s));
        }
  return out;
}

TEST(OnnxImport, ConvWithGroupsStridesPadsAndDilations) {
  OnnxModelBuilder b;
  b.input("x", {1, 4, 7, 6});
  HostTensor w = iota_tensor({6, 2, 3, 3}, 0.01f, -0.5f);
  b.initializer("w", w);
  auto& conv = b.node("Conv", {"x", "w"}, {"y"}, "Conv_12");
  set_attr(conv, "group", int64_t(2));
  set_attr(conv, "strides", std::vector<int64_t>{2, 2});
  set_attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(conv, "dilations", std::vector<int64_t>{1, 1});
  set_attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  b.output("y");
  HostTensor x = iota_tensor({1, 4, 7, 6}, 0.1f, -3);
  std::vector<int64_t> shape;
  std::vector<float> expected = reference_conv(x, w, 2, 2, 1, 1, &shape);
  expect_values(run_one(b.model(), {x}), shape, expected, 1e-3f);
}

TEST(OnnxImport, ConvSameUpperPadsLikeTheSpec) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 5, 5});
  HostTensor w = f32_tensor({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  b.initializer("w", w);
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  set_attr(conv, "auto_pad", std::string("SAME_UPPER"));
  b.output("y");
  HostTensor x = iota_tensor({1, 1, 5, 5});
  std::vector<int64_t> shape;
  std::vector<float> expected = reference_conv(x, w, 1, 1, 1, 1, &shape);
  expect_values(run_one(b.model(), {x}), shape, expected);
}

TEST(OnnxImport, PoolingAndBatchNorm) {
  OnnxModelBuilder b;
  b.input("x", {1, 2, 4, 4});
  auto& mp = b.node("MaxPool", {"x"}, {"mp"});
  set_attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(mp, "strides", std::vector<int64_t>{2, 2});
  auto& ap = b.node("AveragePool", {"x"}, {"ap"});
  set_attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
  set_attr(ap, "pads", std::vector<int64_t>{1, 1, 1, 1});
  set_attr(ap, "strides", std::vector<int64_t>{3, 3});
  b.node("GlobalAveragePool", {"x"}, {"gap"});
  b.floats("gamma", {2}, {1, 2});
  b.floats("beta", {2}, {0, 1});
  b.floats("mean", {2}, {7.5f, 23.5f});
  b.floats("var", {2}, {4, 16});
  auto& bn = b.node("BatchNormalization", {"gap", "gamma", "beta", "mean", "var"}, {"bn"});
  set_attr(bn, "epsilon", 0.0f);
  for (const char* o : {"mp", "ap", "bn"}) b.output(o);
  std::vector<HostTensor> out = run_model(b.model(), {iota_tensor({1, 2, 4, 4})});
  expect_values(out[0], {1, 2, 2, 2}, {5, 7, 13, 15, 21, 23, 29, 31});
  // count_include_pad = 0: the corner window [0,1]x[0,1] averages 0, 1, 4, 5.
  expect_values(out[1], {1, 2, 2, 2}, {2.5f, 4.5f, 10.5f, 12.5f, 18.5f, 20.5f, 26.5f, 28.5f});
  // channel means are 7.5 and 23.5, which normalize to beta.
  expect_values(out[2], {1, 2, 1, 1}, {0, 1});
}

TEST(OnnxImport, SoftmaxSemanticsChangeAtOpset13) {
  for (int opset : {11, 13}) {
    OnnxModelBuilder b(opset);
    b.input("x", {2, 2, 3});
    auto& s = b.node("Softmax", {"x"}, {"y"});
    set_attr(s, "axis", int64_t(1));
    b.output("y");
    HostTensor y = run_one(b.model(), {iota_tensor({2, 2, 3}, 0.3f)});
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 2, 3}));
    // opset 11: each batch row sums to 1 over axes 1 and 2; opset 13: each (b, :, k) column sums to 1.
    double first = 0;
    if (opset == 11)
      for (int i = 0; i < 6; ++i) first += y.get(i);
    else
      first = y.get(0) + y.get(3);
    EXPECT_NEAR(first, 1.0, 1e-6) << "opset " << opset;
  }
}

TEST(OnnxImport, LayerNormalizationOpset17) {
  OnnxModelBuilder b(17);
  b.input("x", {2, 4});
  b.floats("scale", {4}, {1, 1, 2, 2});
  b.floats("shift", {4}, {0, 0, 0, 1});
  auto& ln = b.node("LayerNormalization", {"x", "scale", "shift"}, {"y"});
  set_attr(ln, "epsilon", 0.0f);
  b.output("y");
  HostTensor y = run_one(b.model(), {f32_tensor({2, 4}, {1, 2, 3, 4, 2, 2, 2, 6})});
  const double s = std::sqrt(1.25);  // std of 1 2 3 4
  expect_values(y, {2, 4},
                {float(-1.5 / s), float(-0.5 / s), float(2 * 0.5 / s), float(2 * 1.5 / s) + 1, -0.57735f, -0.57735f,
                 -2 * 0.57735f, 2 * 1.7320508f + 1});
}

TEST(OnnxImport, ShapeSubgraphFoldsToAStaticReshape) {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): PyTorch's x.view(x.size(0), -1).
  OnnxModelBuilder b(13);
  b.input("x", {2, 3, 4});
  b.node("Shape", {"x"}, {"shape"});
  HostTensor zero(DType::kInt64, {});
  b.initializer("zero", zero);
  b.node("Gather", {"shape", "zero"}, {"batch"});
  b.ints("axes0", {0});
  b.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  b.ints("minus_one", {-1});
  auto& cat = b.node("Concat", {"batch1", "minus_one"}, {"target"});
  set_attr(cat, "axis", int64_t(0));
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  ImportedModel m = import_onnx_model(b.model());
  ASSERT_EQ(m.outputs.size(), 1u);
  EXPECT_EQ(m.outputs[0].shape, (std::vector<int64_t>{2, 12}));
  // Only x is left: the shape arithmetic became constants.
  ASSERT_EQ(m.program.placeholders().size(), 1u);
  EXPECT_EQ(m.program.placeholders()[0]->name, "x");
  EXPECT_EQ(m.program.computes().size(), 1u);
  EXPECT_TRUE(m.initializers.empty());
  HostTensor x = iota_tensor({2, 3, 4});
  HostTensor y = interpret(m.program, m.feeds({x})).at(m.outputs[0].tensor_name);
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(y.get(i), double(i));
}

TEST(OnnxImport, LayoutOperators) {
  OnnxModelBuilder b(13);
  b.input("x", {2, 3});
  auto& tr = b.node("Transpose", {"x"}, {"t"});
  set_attr(tr, "perm", std::vector<int64_t>{1, 0});
  auto& cat = b.node("Concat", {"t", "t"}, {"c"});
  set_attr(cat, "axis", int64_t(1));  // [3, 4]
  b.ints("starts", {1});
  b.ints("ends", {100});
  b.ints("axes", {0});
  b.node("Slice", {"c", "starts", "ends", "axes"}, {"s"});  // [2, 4]
  b.ints("sizes", {1, 3});
  auto& sp = b.node("Split", {"s", "sizes"}, {"s0", "s1"});
  set_attr(sp, "axis", int64_t(1));
  b.ints("ax1", {1});
  b.node("Unsqueeze", {"s0", "ax1"}, {"u"});  // [2, 1, 1]
  b.node("Squeeze", {"u", "ax1"}, {"q"});     // [2, 1]
  b.ints("pads", {0, 1, 0, 0});
  b.node("Pad", {"q", "pads"}, {"p"});  // [2, 2]
  b.ints("idx", {1, 0});
  b.node("Gather", {"s1", "idx"}, {"g"});  // rows swapped
  b.node("Flatten", {"g"}, {"f"});
  for (const char* o : {"p", "f"}) b.output(o);
  std::vector<HostTensor> out = run_model(b.model(), {iota_tensor({2, 3})});
  // t = [[0 3] [1 4] [2 5]], c = [[0 3 0 3] [1 4 1 4] [2 5 2 5]], s = rows 1-2
  expect_values(out[0], {2, 2}, {0, 1, 0, 2});
  expect_values(out[1], {2, 3}, {5, 2, 5, 4, 1, 4});
}

TEST(OnnxImport, Reductions) {
  OnnxModelBuilder b(13);
  b.input("x", {2, 3});
  b.ints("axes", {1});
  b.node("ReduceSum", {"x", "axes"}, {"s"});
  auto& mean = b.node("ReduceMean", {"x"}, {"m"});
  set_attr(mean, "axes", std::vector<int64_t>{0});
  set_attr(mean, "keepdims", int64_t(0));
  b.node("ReduceMax", {"x"}, {"mx"});
  for (const char* o : {"s", "m", "mx"}) b.output(o);
  std::vector<HostTensor> out = run_model(b.model(), {iota_tensor({2, 3})});
  expect_values(out[0], {2, 1}, {3, 12});
  expect_values(out[1], {3}, {1.5f, 2.5f, 3.5f});
  expect_values(out[2], {1, 1}, {5});
}

TEST(OnnxImport, IdentityConstantAndCastOutputsAreComputes) {
  OnnxModelBuilder b(13);
  b.input("x", {2});
  b.node("Identity", {"x"}, {"same"});
  auto& c = b.node("Constant", {}, {"k"});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = tensor_to_onnx(f32_tensor({2}, {7, 8}), "");
  b.node("Cast", {"x"}, {"as_int"}).add_attribute();
  auto& cast = *b.mutable_model().mutable_graph()->mutable_node(2);
  cast.mutable_attribute(0)->set_name("to");
  cast.mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  cast.mutable_attribute(0)->set_i(onnx::TensorProto::INT64);
  b.output("same");
  b.output("k");
  b.output("as_int", onnx::TensorProto::INT64);
  ImportedModel m = import_onnx_model(b.model());
  for (const OnnxBinding& o : m.outputs) EXPECT_FALSE(m.program.find(o.tensor_name)->is_placeholder()) << o.onnx_name;
  TensorMap r = interpret(m.program, m.feeds({f32_tensor({2}, {1.75f, -2.5f})}));
  expect_values(r.at(m.outputs[0].tensor_name), {2}, {1.75f, -2.5f});
  expect_values(r.at(m.outputs[1].tensor_name), {2}, {7, 8});
  const HostTensor& as_int = r.at(m.outputs[2].tensor_name);
  EXPECT_EQ(as_int.dtype(), DType::kInt64);
  EXPECT_EQ(as_int.i64()[0], 1);
  EXPECT_EQ(as_int.i64()[1], -2);
}

TEST(OnnxImport, NamesAreSanitizedAndUnique) {
  OnnxModelBuilder b;
  b.input("input:0", {2});
  b.node("Relu", {"input:0"}, {"layer/1.out"});
  b.node("Relu", {"layer/1.out"}, {"layer_1_out"});
  b.node("Softmax", {"layer_1_out"}, {"i"});
  b.node("Relu", {"i"}, {"i_sum"});
  b.node("Relu", {"i_sum"}, {"2nd"});
  b.output("2nd");
  b.output("layer/1.out");
  ImportedModel m = import_onnx_model(b.model());
  std::set<std::string> names;
  for (const Tensor& t : m.program.tensors()) {
    EXPECT_TRUE(std::regex_match(t->name, std::regex("[A-Za-z_][A-Za-z0-9_]*"))) << t->name;
    EXPECT_TRUE(names.insert(t->name).second) << t->name;
  }
  EXPECT_EQ(m.inputs[0].tensor_name, "input_0");
  EXPECT_EQ(m.outputs[0].tensor_name, "v_2nd");
  EXPECT_EQ(m.outputs[1].onnx_name, "layer/1.out");
}

TEST(OnnxImport, ExpandTileTriluArgMaxAndConv1d) {
  OnnxModelBuilder b(14);
  b.input("x", {2, 3});
  b.ints("shape", {2, 2, 3});
  b.node("Expand", {"x", "shape"}, {"e"});
  b.ints("repeats", {1, 2});
  b.node("Tile", {"x", "repeats"}, {"t"});
  auto& tri = b.node("Trilu", {"x"}, {"u"});
  set_attr(tri, "upper", int64_t(0));
  auto& am = b.node("ArgMax", {"x"}, {"am"});
  set_attr(am, "axis", int64_t(1));
  set_attr(am, "keepdims", int64_t(0));
  b.floats("w1", {1, 2, 2}, {1, -1, 0.5f, 2});
  b.node("Unsqueeze", {"x", "zero_axis"}, {"x3"});  // [1, 2, 3]
  b.ints("zero_axis", {0});
  auto& conv = b.node("Conv", {"x3", "w1"}, {"c"});
  set_attr(conv, "pads", std::vector<int64_t>{0, 1});
  for (const char* o : {"e", "t", "u", "c"}) b.output(o);
  b.output("am", onnx::TensorProto::INT64);
  // Unsqueeze reads its axes from an initializer declared after the node: initializers are graph-wide.
  HostTensor x = f32_tensor({2, 3}, {1, 5, 2, 7, 3, 9});
  std::vector<HostTensor> out = run_model(b.model(), {x});
  expect_values(out[0], {2, 2, 3}, {1, 5, 2, 7, 3, 9, 1, 5, 2, 7, 3, 9});
  expect_values(out[1], {2, 6}, {1, 5, 2, 1, 5, 2, 7, 3, 9, 7, 3, 9});
  expect_values(out[2], {2, 3}, {1, 0, 0, 7, 3, 0});
  // conv1d: channel 0 = [1 5 2] with taps (1, -1), channel 1 = [7 3 9] with taps (0.5, 2), right pad 1.
  expect_values(out[3], {1, 1, 3}, {1 - 5 + 3.5f + 6, 5 - 2 + 1.5f + 18, 2 + 4.5f});
  ASSERT_EQ(out[4].dtype(), DType::kInt64);
  EXPECT_EQ(out[4].i64()[0], 1);
  EXPECT_EQ(out[4].i64()[1], 2);
}

TEST(OnnxImport, InstanceNormAndIntegerDivision) {
  OnnxModelBuilder b(13);
  b.input("x", {1, 2, 2});
  b.floats("s", {2}, {1, 2});
  b.floats("bias", {2}, {0, 1});
  auto& in = b.node("InstanceNormalization", {"x", "s", "bias"}, {"y"});
  set_attr(in, "epsilon", 0.0f);
  b.input("a", {4}, onnx::TensorProto::INT64);
  b.ints("d", {2, -2, 2, -2});
  b.node("Div", {"a", "d"}, {"q"});
  b.node("Mod", {"a", "d"}, {"r"});
  b.output("y");
  b.output("q", onnx::TensorProto::INT64);
  b.output("r", onnx::TensorProto::INT64);
  HostTensor a(DType::kInt64, {4});
  for (int i = 0; i < 4; ++i) a.i64()[i] = std::vector<int64_t>{7, 7, -7, -7}[size_t(i)];
  std::vector<HostTensor> out = run_model(b.model(), {f32_tensor({1, 2, 2}, {1, 3, 10, 20}), a});
  expect_values(out[0], {1, 2, 2}, {-1, 1, -1, 3});
  // ONNX Div truncates; Mod (fmod = 0) takes the divisor's sign.
  expect_values(out[1], {4}, {3, -3, -3, 3});
  expect_values(out[2], {4}, {1, -1, 1, -1});
}

// ---- Errors: clear messages, no partial result ----

TEST(OnnxImportErrors, UnsupportedOperatorNamesNodeAndOp) {
  OnnxModelBuilder b;
  b.input("x", {2});
  b.node("Relu", {"x"}, {"r"});
  b.node("NonZero", {"r"}, {"y"}, "nz_3");
  b.output("y", onnx::TensorProto::INT64);
  EXPECT_THROW(import_onnx_model(b.model()), OnnxUnsupportedError);
  EXPECT_THAT(import_error(b.model()), HasSubstr("node 'nz_3' (NonZero): operator NonZero is not supported"));
}

TEST(OnnxImportErrors, UnsupportedAttributeValueAndUnknownAttribute) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 4, 4});
  b.ints("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  auto& p = b.node("Pad", {"x", "pads"}, {"y"}, "Pad_7");
  set_attr(p, "mode", std::string("wrap"));
  b.output("y");
  EXPECT_THAT(import_error(b.model()), HasSubstr("node 'Pad_7' (Pad): mode=wrap is not supported"));

  OnnxModelBuilder c;
  c.input("x", {1, 1, 4, 4});
  auto& mp = c.node("MaxPool", {"x"}, {"y"}, "pool");
  set_attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  set_attr(mp, "storage_order", int64_t(1));
  c.output("y");
  EXPECT_THAT(import_error(c.model()), HasSubstr("node 'pool' (MaxPool): storage_order=1 is not supported"));

  OnnxModelBuilder d;
  d.input("x", {2});
  set_attr(d.node("Relu", {"x"}, {"y"}, "r"), "bogus", int64_t(3));
  d.output("y");
  EXPECT_THAT(import_error(d.model()), HasSubstr("node 'r' (Relu): attribute 'bogus' is not supported"));
}

TEST(OnnxImportErrors, DynamicDimension) {
  OnnxModelBuilder b;
  b.input_symbolic("x", {"batch", "16"});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_THROW(import_onnx_model(b.model()), OnnxUnsupportedError);
  EXPECT_THAT(import_error(b.model()), HasSubstr("input 'x' has a dynamic dimension 'batch'"));
}

TEST(OnnxImportErrors, ShapeThatDependsOnAnInput) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.input("target", {2}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape_1");
  b.output("y");
  EXPECT_THAT(import_error(b.model()),
              HasSubstr("node 'reshape_1' (Reshape): shape (input 'target') must be a constant"));
}

TEST(OnnxImportErrors, MissingInitializerAndUnsupportedDtypeAndOpset) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.node("MatMul", {"x", "w"}, {"y"}, "mm");
  b.output("y");
  EXPECT_THROW(import_onnx_model(b.model()), std::invalid_argument);
  EXPECT_THAT(import_error(b.model()), HasSubstr("node 'mm' (MatMul): input 'w' is not defined"));

  OnnxModelBuilder d;
  d.input("x", {2}, onnx::TensorProto::DOUBLE);
  d.node("Relu", {"x"}, {"y"});
  d.output("y", onnx::TensorProto::DOUBLE);
  EXPECT_THAT(import_error(d.model()), HasSubstr("input 'x': element type DOUBLE is not supported"));

  OnnxModelBuilder old(9);
  old.input("x", {2});
  old.node("Relu", {"x"}, {"y"});
  old.output("y");
  EXPECT_THAT(import_error(old.model()), HasSubstr("opset 9; ingot imports opsets 11 to 17"));
}

TEST(OnnxImportErrors, BadFiles) {
  EXPECT_THROW(import_onnx("/nonexistent/model.onnx"), std::runtime_error);
  std::filesystem::path p = std::filesystem::temp_directory_path() / "ingot_onnx_garbage.onnx";
  std::ofstream(p) << "this is not a protobuf \x01\x02\x03";
  try {
    import_onnx(p.string());
    ADD_FAILURE() << "garbage imported";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("ingot_onnx_garbage.onnx"));
  }
  std::filesystem::remove(p);
  EXPECT_THROW(import_onnx_bytes("\xff\xff\xff"), std::invalid_argument);
}

TEST(OnnxImport, FileRoundTripAndWorkload) {
  OnnxModelBuilder b;
  b.input("x", {3});
  b.floats("w", {3}, {1, 2, 3});
  b.node("Mul", {"x", "w"}, {"y"});
  b.output("y");
  std::filesystem::path p = std::filesystem::temp_directory_path() / "ingot_onnx_workload.onnx";
  {
    std::ofstream out(p, std::ios::binary);
    ASSERT_TRUE(b.model().SerializeToOstream(&out));
  }
  ImportedModel m = import_onnx(p.string());
  EXPECT_EQ(m.input_names(), std::vector<std::string>{"x"});
  EXPECT_EQ(m.output_names(), std::vector<std::string>{"y"});
  ASSERT_EQ(m.initializers.count("w"), 1u);
  Program workload = onnx_workload(p.string());
  EXPECT_TRUE(workload.structural_equal(m.program));
  EXPECT_EQ(workload.placeholders().size(), 2u);
  std::filesystem::remove(p);
  EXPECT_THROW(m.feeds({}), std::invalid_argument);
  EXPECT_THROW(m.feeds({f32_tensor({4}, {1, 2, 3, 4})}), std::invalid_argument);
}

}  // namespace
}  // namespace ingot
