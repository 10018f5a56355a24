// Binding ONNX graph inputs to constants at import (OnnxBoundInputs, workloads/onnx_import.h): a shape operand fed
// as a model input imports once bound, the bound input leaves the model's inputs, values are checked against the
// input's declaration, and each binding is a program of its own name and hash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "onnx_test_models.h"
#include "workloads/onnx_import.h"

namespace ingot {
namespace {

using ::testing::HasSubstr;
using testing::OnnxModelBuilder;

HostTensor int64s(const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  HostTensor t(DType::kInt64, shape);
  for (size_t i = 0; i < values.size(); ++i) t.i64()[i] = values[i];
  return t;
}

// y = Reshape(x [2, 6], shape) with the shape a graph input of the given type.
onnx::ModelProto reshape_with_shape_input(int shape_type = onnx::TensorProto::INT64) {
  OnnxModelBuilder b;
  b.input("x", {2, 6});
  b.input("shape", {2}, shape_type);
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  return b.model();
}

TEST(OnnxBind, AShapeInputImportsOnlyWhenBound) {
  try {
    import_onnx_model(reshape_with_shape_input());
    ADD_FAILURE() << "imported a Reshape whose shape is a model input";
  } catch (const OnnxConstantInputError& e) {
    EXPECT_EQ(e.input(), "shape");
    EXPECT_THAT(e.what(), HasSubstr("node 'reshape' (Reshape): shape (input 'shape') must be a constant: ingot has "
                                    "static shapes only, but it depends on model input 'shape'"));
  }
  ImportedModel m = import_onnx_model(reshape_with_shape_input(), {{"shape", int64s({2}, {3, -1})}});
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].onnx_name, "x");
  EXPECT_EQ(m.graph_inputs, (std::vector<std::string>{"x", "shape"}));
  ASSERT_EQ(m.bound_inputs.count("shape"), 1u);
  EXPECT_EQ(m.outputs[0].shape, (std::vector<int64_t>{3, 4}));
  HostTensor x = testing::iota_tensor({2, 6});
  HostTensor y = interpret(m.program, m.feeds({x})).at(m.outputs[0].tensor_name);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{3, 4}));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(y.f32()[i], float(i));
}

TEST(OnnxBind, EachBindingIsAProgramOfItsOwnNameAndHash) {
  ImportedModel a = import_onnx_model(reshape_with_shape_input(), {{"shape", int64s({2}, {3, 4})}});
  ImportedModel b = import_onnx_model(reshape_with_shape_input(), {{"shape", int64s({2}, {4, 3})}});
  ImportedModel a_again = import_onnx_model(reshape_with_shape_input(), {{"shape", int64s({2}, {3, 4})}});
  EXPECT_THAT(a.program.name(), ::testing::StartsWith("test_model_bound_"));
  EXPECT_EQ(a.program.name().size(), std::string("test_model_bound_").size() + 8);
  EXPECT_NE(a.program.name(), b.program.name());
  EXPECT_EQ(a.program.structural_hash(), a_again.program.structural_hash());

  // A bound value that only reaches an initializer still changes the hash, through the name.
  OnnxModelBuilder add;
  add.input("x", {2});
  add.input("offset", {2});
  add.node("Add", {"x", "offset"}, {"y"});
  add.output("y");
  ImportedModel one = import_onnx_model(add.model(), {{"offset", testing::f32_tensor({2}, {1, 1})}});
  ImportedModel two = import_onnx_model(add.model(), {{"offset", testing::f32_tensor({2}, {2, 2})}});
  EXPECT_NE(one.program.structural_hash(), two.program.structural_hash());
  EXPECT_EQ(one.inputs.size(), 1u);
  HostTensor y = interpret(two.program, two.feeds({testing::f32_tensor({2}, {1, 2})})).at(two.outputs[0].tensor_name);
  EXPECT_EQ(y.f32()[0], 3);
  EXPECT_EQ(y.f32()[1], 4);
}

TEST(OnnxBind, IntegerValuesAreConvertedToTheInputsType) {
  ImportedModel m =
      import_onnx_model(reshape_with_shape_input(onnx::TensorProto::INT32), {{"shape", int64s({2}, {4, 3})}});
  EXPECT_EQ(m.bound_inputs.at("shape").dtype(), DType::kInt32);
  EXPECT_EQ(m.outputs[0].shape, (std::vector<int64_t>{4, 3}));
}

TEST(OnnxBind, BindingsThatDoNotFitAreRefusedByName) {
  auto bind_error = [](const OnnxBoundInputs& bound) -> std::pair<std::string, std::string> {
    try {
      import_onnx_model(reshape_with_shape_input(onnx::TensorProto::INT32), bound);
    } catch (const OnnxBindError& e) {
      return {e.input(), e.what()};
    }
    return {"", "no OnnxBindError"};
  };
  auto [name, message] = bind_error({{"shap", int64s({2}, {3, 4})}});
  EXPECT_EQ(name, "shap");
  EXPECT_EQ(message, "'shap' is not a graph input of the model (its inputs: x, shape)");
  std::tie(name, message) = bind_error({{"shape", int64s({3}, {2, 3, 2})}});
  EXPECT_EQ(name, "shape");
  EXPECT_EQ(message, "the value bound to input 'shape' has shape [3] but the input is declared [2]");
  std::tie(name, message) = bind_error({{"shape", testing::f32_tensor({2}, {3, 4})}});
  EXPECT_EQ(message, "the value bound to input 'shape' is f32 but the input is i32");
  std::tie(name, message) = bind_error({{"shape", int64s({2}, {int64_t(1) << 40, 1})}});
  EXPECT_THAT(message, HasSubstr("holds 1099511627776, which does not fit the input's int32"));
}

}  // namespace
}  // namespace ingot
