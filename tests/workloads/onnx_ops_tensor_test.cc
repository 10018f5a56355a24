// ONNX tensor operators of workloads/onnx_ops_tensor.cc that exported models need beyond the basic ones:
// ScatterND, Slice / Concat of constant shape vectors whose results may be empty (PyTorch's Swin export), and Dropout
// in training mode with nothing dropped (torchvision's Swin export).
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "interp/interpreter.h"
#include "onnx_test_models.h"
#include "workloads/onnx_import.h"

namespace ingot {
namespace {

using testing::iota_tensor;
using testing::OnnxModelBuilder;

std::vector<HostTensor> run_model(const ImportedModel& m, const std::vector<HostTensor>& inputs) {
  TensorMap results = interpret(m.program, m.feeds(inputs));
  std::vector<HostTensor> outputs;
  for (const OnnxBinding& b : m.outputs) outputs.push_back(results.at(b.tensor_name));
  return outputs;
}

HostTensor int64_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  HostTensor t(DType::kInt64, shape);
  for (size_t i = 0; i < values.size(); ++i) t.i64()[i] = values[i];
  return t;
}

std::vector<double> values_of(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.get(i));
  return v;
}

TEST(OnnxScatterNd, ReplacesRowsOfComputedDataWithComputedUpdates) {
  OnnxModelBuilder b;
  b.input("x", {4, 3});
  b.input("u", {2, 3});
  b.initializer("rows", int64_tensor({2, 1}, {3, -3}));  // -3 is row 1
  b.node("ScatterND", {"x", "rows", "u"}, {"y"}, "scatter");
  b.output("y");
  ImportedModel m = import_onnx_model(b.model());
  HostTensor x = iota_tensor({4, 3}), u = iota_tensor({2, 3}, 1, 100);
  HostTensor y = run_model(m, {x, u}).at(0);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 2, 103, 104, 105, 6, 7, 8, 100, 101, 102}));
}

TEST(OnnxScatterNd, ElementIndicesAddressSingleElementsAndLaterDuplicatesWin) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.input("u", {3});
  b.initializer("at", int64_tensor({3, 2}, {0, 2, 1, 0, 0, 2}));
  b.node("ScatterND", {"x", "at", "u"}, {"y"});
  b.output("y");
  HostTensor x = iota_tensor({2, 3}), u = iota_tensor({3}, 1, 50);  // 50, 51, 52
  HostTensor y = run_model(import_onnx_model(b.model()), {x, u}).at(0);
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 52, 51, 4, 5}));
}

TEST(OnnxScatterNd, ConstantOperandsFoldAsPyTorchMaskAssignmentsNeedThem) {
  // A mask built like Swin's: zeros of a constant shape, a block assigned a value, then used on the input.
  OnnxModelBuilder b;
  b.input("x", {3, 3});
  b.ints("mask_shape", {3, 3});
  b.initializer("block", int64_tensor({2, 2}, {1, 1, 2, 2}));
  b.floats("fill", {2}, {7, 8});
  b.node("ConstantOfShape", {"mask_shape"}, {"zeros"});
  b.node("ScatterND", {"zeros", "block", "fill"}, {"mask"});
  b.node("Add", {"x", "mask"}, {"y"});
  b.output("y");
  ImportedModel m = import_onnx_model(b.model());
  EXPECT_EQ(m.program.computes().size(), 1u) << "only the Add is computed; the mask is a folded constant";
  HostTensor y = run_model(m, {iota_tensor({3, 3})}).at(0);
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 2, 3, 11, 5, 6, 7, 16}));
}

TEST(OnnxScatterNd, RejectsReductionsAndComputedIndices) {
  OnnxModelBuilder b;
  b.input("x", {4});
  b.input("at", {1, 1}, onnx::TensorProto::INT64);
  b.floats("u", {1}, {5});
  b.node("ScatterND", {"x", "at", "u"}, {"y"}, "scatter");
  b.output("y");
  EXPECT_THROW(import_onnx_model(b.model()), OnnxUnsupportedError);

  OnnxModelBuilder r;
  r.input("x", {4});
  r.initializer("at", int64_tensor({1, 1}, {2}));
  r.floats("u", {1}, {5});
  testing::set_attr(r.node("ScatterND", {"x", "at", "u"}, {"y"}, "scatter"), "reduction", std::string("add"));
  r.output("y");
  try {
    import_onnx_model(r.model());
    ADD_FAILURE() << "reduction=add was accepted";
  } catch (const OnnxUnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("reduction=add is not supported"), std::string::npos) << e.what();
  }
}

TEST(OnnxShapeVectors, EmptySliceOfAShapeConcatenatesToNothing) {
  // Shape(x)[2:] of a 2-D x is empty; Concat([6], empty) is [6]: a static Reshape target.
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.ints("two", {2});
  b.ints("end", {std::numeric_limits<int64_t>::max()});
  b.ints("six", {6});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Slice", {"shape", "two", "end"}, {"rest"});
  testing::set_attr(b.node("Concat", {"six", "rest"}, {"target"}), "axis", int64_t(0));
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  ImportedModel m = import_onnx_model(b.model());
  HostTensor y = run_model(m, {iota_tensor({2, 3})}).at(0);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{6}));
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(OnnxShapeVectors, BackwardSliceOfAConstantVectorKeepsInt64Extremes) {
  OnnxModelBuilder b;
  b.input("x", {1});
  const int64_t big = std::numeric_limits<int64_t>::max();
  b.ints("v", {big, 3, 4, 5, -big});
  b.ints("start", {-1});
  b.ints("end", {std::numeric_limits<int64_t>::min()});
  b.ints("axis", {0});
  b.ints("step", {-2});
  b.node("Slice", {"v", "start", "end", "axis", "step"}, {"picked"});
  b.output("picked", onnx::TensorProto::INT64);
  HostTensor picked = run_model(import_onnx_model(b.model()), {iota_tensor({1})}).at(0);
  ASSERT_EQ(picked.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(picked.i64()[0], -big);
  EXPECT_EQ(picked.i64()[1], 4);
  EXPECT_EQ(picked.i64()[2], big);
}

// x -> Dropout(x, ratio, training_mode) -> y, mask; ratio and training_mode are constants when given.
OnnxModelBuilder dropout_model(std::optional<float> ratio, std::optional<bool> training_mode) {
  OnnxModelBuilder b;
  b.input("x", {2, 3});
  std::vector<std::string> inputs = {"x"};
  if (ratio || training_mode) {
    inputs.push_back(ratio ? "ratio" : "");
    if (ratio) b.floats("ratio", {}, {*ratio});
  }
  if (training_mode) {
    HostTensor training(DType::kBool, {});
    training.set(0, *training_mode ? 1 : 0);
    b.initializer("training_mode", training);
    inputs.push_back("training_mode");
  }
  b.node("Dropout", inputs, {"y", "mask"});
  b.output("y");
  b.output("mask", onnx::TensorProto::BOOL);
  return b;
}

TEST(OnnxDropout, IsAnIdentityInInferenceAndInTrainingModeWithRatioZero) {
  for (auto [ratio, training] : std::vector<std::pair<std::optional<float>, std::optional<bool>>>{
           {std::nullopt, std::nullopt}, {0.3f, std::nullopt}, {0.3f, false}, {0.0f, true}}) {
    ImportedModel m = import_onnx_model(dropout_model(ratio, training).model());
    HostTensor x = iota_tensor({2, 3}, 0.5f, -1.0f);
    std::vector<HostTensor> out = run_model(m, {x});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(values_of(out[0]), values_of(x));
    EXPECT_EQ(values_of(out[1]), std::vector<double>(6, 1.0));  // nothing dropped: every element kept
  }
}

TEST(OnnxDropout, TrainingModeThatDropsIsRefused) {
  for (std::optional<float> ratio : {std::optional<float>(0.1f), std::optional<float>()}) {
    try {
      import_onnx_model(dropout_model(ratio, true).model());
      ADD_FAILURE() << "a training-mode Dropout with ratio " << (ratio ? std::to_string(*ratio) : "0.5 (default)")
                    << " was imported";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("training_mode must be a constant false, or ratio a constant 0"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ingot
