#include "workloads/onnx_verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "onnx_test_models.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
using testing::f32_tensor;
using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

// y = 2 * x + 1 on a [3] input.
ImportedModel tiny_model() {
  OnnxModelBuilder b;
  b.input("x", {3});
  b.floats("two", {}, {2});
  b.floats("one", {}, {1});
  b.node("Mul", {"x", "two"}, {"twice"});
  b.node("Add", {"twice", "one"}, {"y"});
  b.output("y");
  return import_onnx_model(b.model());
}

class OnnxVerify : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ingot_onnx_verify_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path data_set(int n, const HostTensor& x, const HostTensor& y) {
    fs::path dir = root_ / ("test_data_set_" + std::to_string(n));
    fs::create_directories(dir);
    write_tensor_proto_file(tensor_to_onnx(x, "x"), (dir / "input_0.pb").string());
    write_tensor_proto_file(tensor_to_onnx(y, "y"), (dir / "output_0.pb").string());
    return dir;
  }
  fs::path root_;
};

TEST_F(OnnxVerify, MatchingOutputsPassAndWrongOnesFail) {
  ImportedModel m = tiny_model();
  data_set(0, f32_tensor({3}, {0, 1, -2}), f32_tensor({3}, {1, 3, -3}));
  data_set(1, f32_tensor({3}, {0, 1, -2}), f32_tensor({3}, {1, 3, -2.5f}));
  // test_data_set_10 sorts after 1 numerically, not as text.
  data_set(10, f32_tensor({3}, {5, 5, 5}), f32_tensor({3}, {11, 11, 11}));
  std::vector<std::string> sets = find_onnx_data_sets(root_.string());
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_THAT(sets[2], HasSubstr("test_data_set_10"));
  OnnxDataSetResult good = verify_onnx_data_set(m, sets[0]);
  EXPECT_TRUE(good.ok());
  ASSERT_EQ(good.outputs.size(), 1u);
  EXPECT_EQ(good.outputs[0].onnx_name, "y");
  EXPECT_EQ(good.outputs[0].comparison.max_abs_error, 0);
  OnnxDataSetResult bad = verify_onnx_data_set(m, sets[1]);
  EXPECT_FALSE(bad.ok());
  EXPECT_NEAR(bad.outputs[0].comparison.max_abs_error, 0.5, 1e-6);
  EXPECT_TRUE(verify_onnx_data_set(m, sets[2]).ok());
  // A data set directory itself is accepted as well.
  EXPECT_EQ(find_onnx_data_sets(sets[0]).size(), 1u);
}

TEST_F(OnnxVerify, ClearErrorsForMissingFilesCountsAndShapes) {
  ImportedModel m = tiny_model();
  EXPECT_THROW(find_onnx_data_sets((root_ / "missing").string()), std::runtime_error);
  EXPECT_THROW(find_onnx_data_sets(root_.string()), std::runtime_error);  // empty
  fs::path dir = data_set(0, f32_tensor({3}, {0, 1, 2}), f32_tensor({3}, {1, 3, 5}));
  fs::remove(dir / "output_0.pb");
  try {
    verify_onnx_data_set(m, dir.string());
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("has 0 output_N.pb files but the model has 1 outputs"));
  }
  fs::path wrong = data_set(1, f32_tensor({4}, {0, 1, 2, 3}), f32_tensor({3}, {1, 3, 5}));
  try {
    verify_onnx_data_set(m, wrong.string());
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("input 0 ('x') is f32[4] but the model expects f32[3]"));
  }
  fs::path wrong_out = data_set(2, f32_tensor({3}, {0, 1, 2}), f32_tensor({1, 3}, {1, 3, 5}));
  OnnxDataSetResult r = verify_onnx_data_set(m, wrong_out.string());
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.outputs[0].comparison.message, HasSubstr("expected f32[1,3], got f32[3]"));
}

TEST_F(OnnxVerify, ShapeInputsAreBoundFromEachDataSet) {
  // y = Reshape(x [2, 3], shape): the shape comes from the data, one per data set.
  testing::OnnxModelBuilder b;
  b.input("x", {2, 3});
  b.input("shape", {2}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  auto shape = [](int64_t rows, int64_t cols) {
    HostTensor t(DType::kInt64, {2});
    t.i64()[0] = rows;
    t.i64()[1] = cols;
    return t;
  };
  HostTensor x = f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  for (int n : {0, 1}) {
    fs::path dir = root_ / ("test_data_set_" + std::to_string(n));
    fs::create_directories(dir);
    write_tensor_proto_file(tensor_to_onnx(x, "x"), (dir / "input_0.pb").string());
    write_tensor_proto_file(tensor_to_onnx(n == 0 ? shape(3, 2) : shape(1, 6), "shape"), (dir / "input_1.pb").string());
    write_tensor_proto_file(
        tensor_to_onnx(f32_tensor(n == 0 ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{1, 6}, {1, 2, 3, 4, 5, 6}),
                       "y"),
        (dir / "output_0.pb").string());
  }
  std::vector<std::string> sets = find_onnx_data_sets(root_.string());
  ASSERT_EQ(sets.size(), 2u);
  ImportedModel first = import_onnx_for_data_set(b.model(), sets[0]);
  EXPECT_EQ(first.inputs.size(), 1u);
  ASSERT_EQ(first.bound_inputs.count("shape"), 1u);
  EXPECT_TRUE(verify_onnx_data_set(first, sets[0]).ok());
  // The second set holds another shape: the model imported for the first refuses it, its own import passes.
  try {
    verify_onnx_data_set(first, sets[1]);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("input 'shape' was bound to other values at import"));
  }
  EXPECT_TRUE(verify_onnx_data_set(import_onnx_for_data_set(b.model(), sets[1]), sets[1]).ok());
  // From a file too.
  fs::path model_file = root_ / "model.onnx";
  std::ofstream(model_file, std::ios::binary) << b.model().SerializeAsString();
  EXPECT_TRUE(verify_onnx_data_set(import_onnx_for_data_set(model_file.string(), sets[1]), sets[1]).ok());
}

TEST(OnnxCompare, NanAndInfinityMatchThemselvesAsInNumpy) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  HostTensor a = f32_tensor({3}, {nan, inf, 1.0f});
  EXPECT_TRUE(compare_onnx_output(a, f32_tensor({3}, {nan, inf, 1.0005f}), {}).ok);
  EXPECT_FALSE(compare_onnx_output(a, f32_tensor({3}, {0, inf, 1.0f}), {}).ok);
  EXPECT_FALSE(compare_onnx_output(a, f32_tensor({3}, {nan, -inf, 1.0f}), {}).ok);
  EXPECT_FALSE(compare_onnx_output(a, f32_tensor({3}, {nan, inf, 1.01f}), {}).ok);
}

}  // namespace
}  // namespace ingot
