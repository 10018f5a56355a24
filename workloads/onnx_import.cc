#include "workloads/onnx_import.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>

#include "ir/hash.h"
#include "ops/op_conventions.h"
#include "workloads/onnx_graph.h"
#include "workloads/onnx_ops.h"
#include "workloads/onnx_tensor.h"
#include "workloads/scale_into_weights.h"

namespace ingot {

namespace {

constexpr int kMinOpset = 11;
constexpr int kMaxOpset = 17;

int default_domain_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return int(o.version());
  throw OnnxUnsupportedError("the model imports no opset of the default ONNX domain (only other domains)");
}

// What ONNX shape inference needs of the model: everything but the values of large float initializers, which
// become typed graph inputs instead. Shape inference reads initializer values only for shape arithmetic (integer
// tensors), and a full copy of a paper-size model is hundreds of MB of copying. Bound inputs become initializers
// there, so that data propagation sees their values (a Reshape's bound shape gives its output shape).
onnx::ModelProto model_for_shape_inference(const onnx::ModelProto& model, const OnnxBoundInputs& bound) {
  constexpr int64_t kLargeElements = 1024;
  onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  *copy.mutable_opset_import() = model.opset_import();
  *copy.mutable_functions() = model.functions();
  const onnx::GraphProto& g = model.graph();
  onnx::GraphProto* out = copy.mutable_graph();
  out->set_name(g.name());
  *out->mutable_node() = g.node();
  for (const auto& in : g.input())
    if (!bound.count(in.name())) *out->add_input() = in;
  for (const auto& [name, value] : bound) *out->add_initializer() = tensor_to_onnx(value, name);
  *out->mutable_output() = g.output();
  *out->mutable_value_info() = g.value_info();
  std::set<std::string> inputs;
  for (const auto& in : g.input()) inputs.insert(in.name());
  for (const auto& init : g.initializer()) {
    if (bound.count(init.name())) continue;  // a graph input with a default value, overridden by the binding
    int64_t elements = 1;
    for (int64_t d : init.dims()) elements *= d;
    bool is_float_type =
        init.data_type() == onnx::TensorProto::FLOAT || init.data_type() == onnx::TensorProto::FLOAT16 ||
        init.data_type() == onnx::TensorProto::BFLOAT16 || init.data_type() == onnx::TensorProto::DOUBLE;
    if (!is_float_type || elements <= kLargeElements || init.data_location() == onnx::TensorProto::EXTERNAL) {
      *out->add_initializer() = init;
      continue;
    }
    if (inputs.count(init.name())) continue;  // already typed as a graph input (IR version < 4 style)
    onnx::ValueInfoProto* v = out->add_input();
    v->set_name(init.name());
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(init.data_type());
    auto* shape = t->mutable_shape();
    for (int64_t d : init.dims()) shape->add_dim()->set_dim_value(d);
  }
  return copy;
}

// Static shapes of the values ONNX shape inference could infer, by name.
std::map<std::string, std::vector<int64_t>> inferred_static_shapes(const onnx::ModelProto& model,
                                                                   const OnnxBoundInputs& bound) {
  onnx::ModelProto copy = model_for_shape_inference(model, bound);
  try {
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("ONNX shape inference failed: ") + e.what());
  }
  std::map<std::string, std::vector<int64_t>> shapes;
  auto record = [&](const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
    std::vector<int64_t> shape;
    for (const auto& d : info.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;
      shape.push_back(d.dim_value());
    }
    shapes[info.name()] = shape;
  };
  for (const auto& v : copy.graph().value_info()) record(v);
  for (const auto& v : copy.graph().output()) record(v);
  return shapes;
}

// The static shape of a graph input; dynamic, unknown or zero-size dimensions are unsupported.
std::vector<int64_t> static_input_shape(const onnx::ValueInfoProto& info) {
  const std::string what = "input '" + info.name() + "'";
  if (!info.type().has_tensor_type())
    throw OnnxUnsupportedError(what + " is not a tensor (sequences, maps and optionals are not supported)");
  if (!info.type().tensor_type().has_shape())
    throw OnnxUnsupportedError(what + " has no shape: ingot needs static shapes");
  std::vector<int64_t> shape;
  int d = 0;
  for (const auto& dim : info.type().tensor_type().shape().dim()) {
    if (dim.has_dim_param())
      throw OnnxUnsupportedError(what + " has a dynamic dimension '" + dim.dim_param() + "' (dimension " +
                                 std::to_string(d) + "): ingot needs static shapes");
    if (!dim.has_dim_value())
      throw OnnxUnsupportedError(what + " has an unknown dimension " + std::to_string(d) +
                                 ": ingot needs static shapes");
    if (dim.dim_value() <= 0) throw OnnxUnsupportedError(what + " has a zero-size dimension " + std::to_string(d));
    shape.push_back(dim.dim_value());
    ++d;
  }
  return shape;
}

// A bound value checked against the graph input's declared shape and converted to its declared dtype.
HostTensor bound_value(const onnx::ValueInfoProto& info, const HostTensor& value) {
  const std::string what = "the value bound to input '" + info.name() + "'";
  if (!info.type().has_tensor_type()) throw OnnxBindError("input '" + info.name() + "' is not a tensor", info.name());
  const auto& type = info.type().tensor_type();
  if (type.has_shape()) {
    const auto& dims = type.shape().dim();
    bool fits = dims.size() == int(value.shape().size());
    for (int d = 0; fits && d < dims.size(); ++d)
      fits = !dims[d].has_dim_value() || dims[d].dim_value() == value.shape()[size_t(d)];
    if (!fits) {
      std::string declared;
      for (int d = 0; d < dims.size(); ++d)
        declared += (d ? ", " : "") + (dims[d].has_dim_value()       ? std::to_string(dims[d].dim_value())
                                       : dims[d].dim_param().empty() ? "?"
                                                                     : dims[d].dim_param());
      throw OnnxBindError(
          what + " has shape " + shape_to_string(value.shape()) + " but the input is declared [" + declared + "]",
          info.name());
    }
  }
  const DType dtype = dtype_from_onnx(type.elem_type(), "input '" + info.name() + "'");
  if (dtype == value.dtype()) return value;
  if (!is_int(dtype) || !is_int(value.dtype()))
    throw OnnxBindError(what + " is " + dtype_name(value.dtype()) + " but the input is " + dtype_name(dtype),
                        info.name());
  HostTensor out(dtype, value.shape());
  for (int64_t i = 0; i < value.num_elements(); ++i) {
    int64_t v = value.dtype() == DType::kInt64 ? value.i64()[i] : int64_t(value.i32()[i]);
    if (dtype == DType::kInt64) {
      out.i64()[i] = v;
      continue;
    }
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw OnnxBindError(what + " holds " + std::to_string(v) + ", which does not fit the input's int32", info.name());
    out.i32()[i] = int32_t(v);
  }
  return out;
}

// "_bound_" and 8 hex digits of a hash of the bound names, dtypes, shapes and values.
std::string binding_suffix(const OnnxBoundInputs& bound) {
  std::string text;
  for (const auto& [name, value] : bound) {
    text += name + ":" + dtype_name(value.dtype()) + shape_to_string(value.shape()) + "=";
    text.append(static_cast<const char*>(value.data()), value.num_bytes());
    text += ";";
  }
  return "_bound_" + hash_hex(fnv1a64(text)).substr(8);
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, const OnnxBoundInputs& bound)
      : model_(model), bound_(bound), graph_(reserved_names(model.graph())) {}

  ImportedModel run() {
    opset_ = default_domain_opset(model_);
    if (opset_ < kMinOpset || opset_ > kMaxOpset)
      throw OnnxUnsupportedError("the model uses opset " + std::to_string(opset_) + "; ingot imports opsets " +
                                 std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
    const onnx::GraphProto& g = model_.graph();
    for (const auto& [name, value] : bound_) {
      auto it = std::find_if(g.input().begin(), g.input().end(),
                             [&](const onnx::ValueInfoProto& info) { return info.name() == name; });
      if (it == g.input().end()) {
        std::string names;
        for (const auto& info : g.input()) names += (names.empty() ? "" : ", ") + info.name();
        throw OnnxBindError("'" + name + "' is not a graph input of the model (its inputs: " + names + ")", name);
      }
      bound_values_.emplace(name, bound_value(*it, value));
    }
    inferred_ = inferred_static_shapes(model_, bound_values_);
    if (g.sparse_initializer_size() > 0)
      throw OnnxUnsupportedError("sparse initializer '" + g.sparse_initializer(0).values().name() +
                                 "' is not supported");
    std::set<std::string> initializer_names;
    for (const auto& init : g.initializer()) {
      initializer_names.insert(init.name());
      if (!bound_values_.count(init.name())) graph_.add_constant(init.name(), tensor_from_onnx(init));
    }
    std::vector<std::string> input_names;
    for (const auto& info : g.input()) {
      if (initializer_names.count(info.name()) && !bound_values_.count(info.name())) continue;
      graph_inputs_.push_back(info.name());
      if (auto b = bound_values_.find(info.name()); b != bound_values_.end()) {
        graph_.add_constant(info.name(), b->second);
        continue;
      }
      std::vector<int64_t> shape = static_input_shape(info);  // first: it rejects non-tensor inputs by name
      DType dtype = dtype_from_onnx(info.type().tensor_type().elem_type(), "input '" + info.name() + "'");
      graph_.add_model_input(info.name(), shape, dtype);
      input_names.push_back(info.name());
    }
    for (const auto& node : g.node()) import_node(node);
    return finish(input_names);
  }

 private:
  static std::set<std::string> reserved_names(const onnx::GraphProto& g) {
    std::set<std::string> names;
    for (const auto& v : g.input()) names.insert(sanitize_onnx_name(v.name()));
    for (const auto& v : g.initializer()) names.insert(sanitize_onnx_name(v.name()));
    for (const auto& n : g.node())
      for (const auto& o : n.output()) names.insert(sanitize_onnx_name(o));
    return names;
  }

  void import_node(const onnx::NodeProto& proto) {
    OnnxNode node(proto, opset_, graph_);
    if (!proto.domain().empty() && proto.domain() != "ai.onnx")
      node.unsupported("operator domain '" + proto.domain() + "' is not supported (only the default ONNX domain)");
    auto it = onnx_converters().find(proto.op_type());
    if (it == onnx_converters().end()) node.unsupported("operator " + proto.op_type() + " is not supported");
    for (const auto& in : proto.input())
      if (!in.empty() && !graph_.has(in))
        node.fail("input '" + in + "' is not defined by an earlier node, an initializer or a graph input");
    try {
      it->second(node);
    } catch (const OnnxUnsupportedError&) {
      throw;
    } catch (const std::invalid_argument& e) {
      std::string what = e.what();
      if (what.rfind(node.describe(), 0) == 0) throw;
      node.fail(what);
    }
    for (const std::string& a : node.unread_attributes()) node.unsupported("attribute '" + a + "' is not supported");

    bool all_inputs_constant = true;
    for (const auto& in : proto.input())
      if (!in.empty() && !graph_.value(in).constant) all_inputs_constant = false;
    for (int i = 0; i < proto.output_size(); ++i) {
      const std::string& out = proto.output(i);
      if (out.empty()) continue;
      if (!graph_.has(out)) node.fail("internal: output '" + out + "' was not produced");
      OnnxValue& v = graph_.value(out);
      auto inferred = inferred_.find(out);
      if (inferred != inferred_.end() && inferred->second != v.shape)
        node.fail("ingot computes shape " + shape_to_string(v.shape) + " for output '" + out +
                  "' but ONNX shape inference gives " + shape_to_string(inferred->second));
      // Shape arithmetic (Shape -> Gather -> Concat -> Reshape) folds to constants as it goes.
      if (all_inputs_constant && !is_float(v.dtype)) graph_.try_constant(out);
    }
  }

  ImportedModel finish(const std::vector<std::string>& input_names) {
    const onnx::GraphProto& g = model_.graph();
    std::vector<Tensor> outputs;
    std::vector<OnnxBinding> output_bindings;
    for (const auto& info : g.output()) {
      if (!graph_.has(info.name()))
        throw std::invalid_argument("graph output '" + info.name() + "' is not produced by any node");
      OnnxValue& v = graph_.value(info.name());
      for (int64_t d : v.shape)
        if (d == 0) throw OnnxUnsupportedError("graph output '" + info.name() + "' has a zero-size dimension");
      Tensor t = graph_.tensor(info.name());
      bool repeated = false;
      for (const Tensor& o : outputs) repeated |= o.same_as(t);
      // An output must be a compute of its own: copy inputs, constants and outputs listed twice.
      if (t->is_placeholder() || repeated) {
        Tensor source = t;
        t = compute(graph_.unique_name(info.name()), source->shape,
                    [&](const std::vector<Expr>& i) { return read(source, i); });
      }
      outputs.push_back(t);
      output_bindings.push_back(OnnxBinding{info.name(), t->name, t->shape, t->dtype});
    }
    if (outputs.empty()) throw std::invalid_argument("the graph has no outputs");
    std::string name = g.name().empty() ? "onnx_model" : sanitize_onnx_name(g.name());
    if (!bound_values_.empty()) name += binding_suffix(bound_values_);
    ImportedModel result{Program(outputs, name), {}, std::move(output_bindings), {}, graph_inputs_, bound_values_};
    for (const std::string& in : input_names) {
      const OnnxValue& v = graph_.value(in);
      result.inputs.push_back(OnnxBinding{in, v.tensor->name, v.shape, v.dtype});
    }
    for (const Tensor& p : result.program.placeholders()) {
      auto it = graph_.constant_values().find(p->name);
      if (it != graph_.constant_values().end()) result.initializers.emplace(p->name, it->second);
    }
    return result;
  }

  const onnx::ModelProto& model_;
  const OnnxBoundInputs& bound_;
  OnnxBoundInputs bound_values_;  // bound_ converted to the inputs' dtypes
  std::vector<std::string> graph_inputs_;
  OnnxGraph graph_;
  int opset_ = 0;
  std::map<std::string, std::vector<int64_t>> inferred_;
};

}  // namespace

std::vector<std::string> ImportedModel::input_names() const {
  std::vector<std::string> names;
  for (const OnnxBinding& b : inputs) names.push_back(b.tensor_name);
  return names;
}

std::vector<std::string> ImportedModel::output_names() const {
  std::vector<std::string> names;
  for (const OnnxBinding& b : outputs) names.push_back(b.tensor_name);
  return names;
}

TensorMap ImportedModel::feeds(const std::vector<HostTensor>& input_values) const {
  if (input_values.size() != inputs.size())
    throw std::invalid_argument("the model has " + std::to_string(inputs.size()) + " inputs but " +
                                std::to_string(input_values.size()) + " values were given");
  TensorMap map = initializers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const OnnxBinding& b = inputs[i];
    const HostTensor& h = input_values[i];
    if (h.dtype() != b.dtype || h.shape() != b.shape)
      throw std::invalid_argument("input " + std::to_string(i) + " ('" + b.onnx_name + "') is " +
                                  dtype_name(h.dtype()) + shape_to_string(h.shape()) + " but the model expects " +
                                  dtype_name(b.dtype) + shape_to_string(b.shape));
    map.insert_or_assign(b.tensor_name, h);
  }
  return map;
}

ImportedModel import_onnx_model(const onnx::ModelProto& model, const OnnxBoundInputs& bound) {
  ImportedModel imported = Importer(model, bound).run();
  imported.program = fold_scales_into_weights(imported.program);
  return imported;
}

ImportedModel import_onnx_bytes(const std::string& serialized_model, const OnnxBoundInputs& bound) {
  onnx::ModelProto model;
  if (!model.ParseFromString(serialized_model)) throw std::invalid_argument("the bytes are not an ONNX ModelProto");
  return import_onnx_model(model, bound);
}

onnx::ModelProto read_onnx_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot open ONNX model '" + path + "'");
  // One read into a buffer of the file's size: paper models are hundreds of MB.
  std::string bytes(size_t(in.tellg()), '\0');
  // An empty message parses as an empty model, which would be refused for its missing opset instead.
  if (bytes.empty()) throw std::runtime_error("'" + path + "' is empty (0 bytes), not an ONNX model");
  in.seekg(0);
  if (!in.read(bytes.data(), std::streamsize(bytes.size()))) throw std::runtime_error("cannot read '" + path + "'");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw std::runtime_error("'" + path + "' is not an ONNX model");
  return model;  // the bytes are freed before the import makes its own copies of the weights
}

ImportedModel import_onnx(const std::string& path, const OnnxBoundInputs& bound) {
  onnx::ModelProto model = read_onnx_model(path);
  try {
    return import_onnx_model(model, bound);
  } catch (const OnnxConstantInputError& e) {
    throw OnnxConstantInputError(path + ": " + e.what(), e.input());
  } catch (const OnnxBindError& e) {
    throw OnnxBindError(path + ": " + e.what(), e.input());
  } catch (const OnnxUnsupportedError& e) {
    throw OnnxUnsupportedError(path + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

Program onnx_workload(const std::string& path, const OnnxBoundInputs& bound) {
  return import_onnx(path, bound).program;
}

OnnxConverterMap make_onnx_converters() {
  OnnxConverterMap converters;
  add_onnx_elementwise_converters(converters);
  add_onnx_tensor_converters(converters);
  add_onnx_nn_converters(converters);
  add_onnx_recurrent_converters(converters);
  add_onnx_resize_converters(converters);
  return converters;
}

const std::map<std::string, OnnxConverter>& onnx_converters() {
  static const OnnxConverterMap converters = make_onnx_converters();
  return converters;
}

std::vector<std::string> supported_onnx_ops() {
  std::vector<std::string> ops;
  for (const auto& [name, converter] : onnx_converters()) ops.push_back(name);
  return ops;
}

}  // namespace ingot
