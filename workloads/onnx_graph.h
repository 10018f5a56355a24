// The state of one ONNX import while its nodes are mapped: the value table (each ONNX value as an ingot
// tensor, a constant, or both), unique TE names, and the per-node view that operator converters use
// (OnnxNode: inputs, constant inputs, attributes, outputs, errors). Used only by workloads/onnx_*.cc.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/host_tensor.h"
#include "ir/program.h"

namespace ingot {

// One ONNX value. A constant (initializer, Constant node, folded subgraph) has `constant` set and gets a
// placeholder only when a converter reads it as a tensor; computed values have only `tensor`.
struct OnnxValue {
  std::string onnx_name;
  std::vector<int64_t> shape;
  DType dtype = DType::kFloat32;
  Tensor tensor;
  std::shared_ptr<const HostTensor> constant;
  bool is_model_input = false;
};

class OnnxGraph {
 public:
  // `reserved_names`: every ONNX value name of the graph, sanitized, so that an intermediate TE an op adds
  // ("conv_sum") never takes the name a later ONNX value needs.
  explicit OnnxGraph(std::set<std::string> reserved_names);

  bool has(const std::string& onnx_name) const { return values_.count(onnx_name) > 0; }
  OnnxValue& value(const std::string& onnx_name);
  void add_constant(const std::string& onnx_name, HostTensor value);
  void add_model_input(const std::string& onnx_name, const std::vector<int64_t>& shape, DType dtype);
  void set_tensor(const std::string& onnx_name, Tensor tensor);
  void alias(const std::string& onnx_name, const OnnxValue& source);

  // The value as a tensor: a constant's placeholder is made (and its value recorded) on first use.
  Tensor tensor(const std::string& onnx_name);
  // A placeholder for a constant a converter makes itself (a lookup table), named after `name`, its value recorded
  // with the other constants.
  Tensor constant_tensor(const std::string& name, HostTensor value);
  // The value's contents: a constant, or a computed value whose inputs are all constants (evaluated with the
  // interpreter and remembered). Returns nullptr when it depends on a model input.
  const HostTensor* try_constant(const std::string& onnx_name);
  // A model input the value depends on (for messages), or "".
  std::string model_input_behind(const std::string& onnx_name);

  // A unique TE name from an ONNX name: characters outside [A-Za-z0-9_] become '_', a leading digit or a C++
  // keyword gets a prefix, clashes get "_2", "_3", ...; op suffixes (name_sum, ...) are kept free as well.
  std::string unique_name(const std::string& onnx_name);
  // Values of the placeholders made for constants, by TE name.
  const TensorMap& constant_values() const { return constant_values_; }

 private:
  bool name_free(const std::string& name) const;
  std::map<std::string, OnnxValue> values_;
  std::set<std::string> reserved_, used_;
  TensorMap constant_values_;
};

// Identifier form of an ONNX name (see OnnxGraph::unique_name), without the uniqueness suffix.
std::string sanitize_onnx_name(const std::string& name);

// The view of one node that an operator converter gets. Every attribute a converter may honour is read through
// attr_*; after the converter returns, an attribute the node sets but nobody read is reported as unsupported,
// so a converter never silently ignores one.
class OnnxNode {
 public:
  OnnxNode(const onnx::NodeProto& node, int opset, OnnxGraph& graph);

  const onnx::NodeProto& proto() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  int opset() const { return opset_; }
  // "node 'Conv_12' (Conv)"; nodes without a name are named by their first output.
  std::string describe() const;
  // Throw with describe() at the head: unsupported() for valid models that ingot cannot import, fail() for
  // models that break the ONNX spec.
  [[noreturn]] void unsupported(const std::string& why) const;
  [[noreturn]] void fail(const std::string& why) const;

  // Inputs; an omitted optional input (empty name, or past the end) is absent.
  size_t num_inputs() const { return size_t(node_.input_size()); }
  bool has_input(size_t i) const { return i < num_inputs() && !node_.input(int(i)).empty(); }
  Tensor input(size_t i);
  const std::vector<int64_t>& input_shape(size_t i);
  DType input_dtype(size_t i);
  // A constant input (Reshape's shape, Slice's starts, ...); `role` names it in the error when it is not.
  const HostTensor& constant_input(size_t i, const std::string& role);
  std::vector<int64_t> constant_ints(size_t i, const std::string& role);
  double constant_scalar(size_t i, const std::string& role);
  bool input_is_constant(size_t i);

  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t default_value);
  double attr_float(const std::string& name, double default_value);
  std::string attr_string(const std::string& name, const std::string& default_value);
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& default_value = {});
  std::vector<float> attr_floats(const std::string& name);
  std::vector<std::string> attr_strings(const std::string& name);
  const onnx::TensorProto* attr_tensor(const std::string& name);
  // Reads (marks as handled) an attribute the converter accepts only at one value: present with another value
  // is unsupported.
  void require_attr_int(const std::string& name, int64_t only_value, const std::string& why);
  // The attributes the node sets that no attr_* call read.
  std::vector<std::string> unread_attributes() const;

  size_t num_outputs() const { return size_t(node_.output_size()); }
  bool has_output(size_t i) const { return i < num_outputs() && !node_.output(int(i)).empty(); }
  // The TE name for output i (unique, derived from the ONNX output name); the same on every call.
  std::string output_name(size_t i);
  // A unique name for an intermediate TE a converter adds itself: output 0's ONNX name + suffix.
  std::string temp_name(const std::string& suffix);
  // A constant TE the converter makes (a lookup table), named like temp_name(suffix): a placeholder whose value
  // goes to the model's initializers.
  Tensor constant_tensor(const std::string& suffix, HostTensor value);
  void set_output(size_t i, Tensor tensor);
  void set_constant_output(size_t i, HostTensor value);
  // Output i takes input j's value unchanged (Identity, Dropout in inference).
  void alias_output(size_t i, size_t j);
  // Outputs past `count` that the node asks for are unsupported (e.g. MaxPool's Indices).
  void require_outputs_at_most(size_t count, const std::string& why);

 private:
  const onnx::AttributeProto* find_attr(const std::string& name, onnx::AttributeProto_AttributeType type);
  const std::string& input_name(size_t i) const;
  const onnx::NodeProto& node_;
  int opset_;
  OnnxGraph& graph_;
  std::set<std::string> read_attributes_;
  std::map<size_t, std::string> output_names_;
};

// Maps one node: reads inputs and attributes from the view and sets every output it produces.
using OnnxConverter = std::function<void(OnnxNode&)>;
// The converters by ONNX op type (default domain); see workloads/onnx_ops_*.cc.
const std::map<std::string, OnnxConverter>& onnx_converters();

}  // namespace ingot
