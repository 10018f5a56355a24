// Builds small ONNX models in memory with the protobuf API, for the ONNX import and verify tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "ir/host_tensor.h"
#include "workloads/onnx_import.h"
#include "workloads/onnx_tensor.h"

namespace ingot::testing {

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test_model");
  }

  // A graph input; dims given as numbers, or as names (dynamic) through input_symbolic.
  void input(const std::string& name, const std::vector<int64_t>& shape, int elem = onnx::TensorProto::FLOAT) {
    auto* t = typed(model_.mutable_graph()->add_input(), name, elem);
    for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void input_symbolic(const std::string& name, const std::vector<std::string>& dims) {
    auto* t = typed(model_.mutable_graph()->add_input(), name, onnx::TensorProto::FLOAT);
    for (const std::string& d : dims) t->mutable_shape()->add_dim()->set_dim_param(d);
  }
  void output(const std::string& name, int elem = onnx::TensorProto::FLOAT) {
    typed(model_.mutable_graph()->add_output(), name, elem);
  }
  void initializer(const std::string& name, const HostTensor& value) {
    *model_.mutable_graph()->add_initializer() = tensor_to_onnx(value, name);
  }
  void floats(const std::string& name, const std::vector<int64_t>& shape, const std::vector<float>& values) {
    HostTensor t(DType::kFloat32, shape);
    for (size_t i = 0; i < values.size(); ++i) t.f32()[i] = values[i];
    initializer(name, t);
  }
  void ints(const std::string& name, const std::vector<int64_t>& values) {
    HostTensor t(DType::kInt64, {int64_t(values.size())});
    for (size_t i = 0; i < values.size(); ++i) t.i64()[i] = values[i];
    initializer(name, t);
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  const onnx::ModelProto& model() const { return model_; }
  onnx::ModelProto& mutable_model() { return model_; }

 private:
  static onnx::TypeProto_Tensor* typed(onnx::ValueInfoProto* v, const std::string& name, int elem) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    return t;
  }
  onnx::ModelProto model_;
};

inline void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

inline HostTensor f32_tensor(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  HostTensor t(DType::kFloat32, shape);
  for (size_t i = 0; i < values.size(); ++i) t.f32()[i] = values[i];
  return t;
}

// 0, 1, 2, ... scaled: distinct values so that wrong indexing shows.
inline HostTensor iota_tensor(const std::vector<int64_t>& shape, float scale = 1.0f, float offset = 0.0f) {
  HostTensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = float(i) * scale + offset;
  return t;
}

// The message of the OnnxUnsupportedError that importing `model` throws, or "no OnnxUnsupportedError".
inline std::string unsupported_error(const onnx::ModelProto& model) {
  try {
    import_onnx_model(model);
  } catch (const OnnxUnsupportedError& e) {
    return e.what();
  }
  return "no OnnxUnsupportedError";
}

}  // namespace ingot::testing
