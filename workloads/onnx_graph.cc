#include "workloads/onnx_graph.h"

#include <regex>
#include <stdexcept>

#include "interp/interpreter.h"
#include "ops/op_conventions.h"
#include "workloads/onnx_import.h"
#include "workloads/onnx_tensor.h"

namespace ingot {

namespace {

// Suffixes ops/ gives to intermediate TEs (ops/op_conventions.h): a name is taken only with all of them free.
const std::vector<std::string>& op_suffixes() {
  static const std::vector<std::string> suffixes = {"_matmul", "_conv", "_sum", "_max", "_exp", "_mean",
                                                    "_var",    "_wx",   "_uh",  "_c",   "_h"};
  return suffixes;
}

// Identifiers generated code uses for itself: C++ keywords and the names of loop and reduce variables.
bool is_reserved_identifier(const std::string& name) {
  static const std::set<std::string> keywords = {
      "alignas", "alignof",  "and",      "asm",       "auto",      "bool",     "break",     "case",   "catch",
      "char",    "class",    "const",    "constexpr", "continue",  "default",  "delete",    "do",     "double",
      "else",    "enum",     "explicit", "extern",    "false",     "float",    "for",       "friend", "goto",
      "half",    "if",       "inline",   "int",       "long",      "main",     "namespace", "new",    "not",
      "nullptr", "operator", "or",       "private",   "protected", "public",   "register",  "return", "short",
      "signed",  "sizeof",   "static",   "struct",    "switch",    "template", "this",      "throw",  "true",
      "try",     "typedef",  "typename", "union",     "unsigned",  "using",    "virtual",   "void",   "volatile",
      "while",   "xor",      "NULL"};
  static const std::regex loop_variable("(i|j|l|m|n|p|q|r|k[0-9]*|ax[0-9]+|rc|ry|rx)");
  return keywords.count(name) > 0 || std::regex_match(name, loop_variable);
}

}  // namespace

std::string sanitize_onnx_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9') || is_reserved_identifier(out)) out = "v_" + out;
  return out;
}

OnnxGraph::OnnxGraph(std::set<std::string> reserved_names) : reserved_(std::move(reserved_names)) {}

OnnxValue& OnnxGraph::value(const std::string& onnx_name) {
  auto it = values_.find(onnx_name);
  if (it == values_.end()) throw std::invalid_argument("value '" + onnx_name + "' is used before it is defined");
  return it->second;
}

void OnnxGraph::add_constant(const std::string& onnx_name, HostTensor value) {
  OnnxValue v;
  v.onnx_name = onnx_name;
  v.shape = value.shape();
  v.dtype = value.dtype();
  v.constant = std::make_shared<const HostTensor>(std::move(value));
  values_[onnx_name] = std::move(v);
}

void OnnxGraph::add_model_input(const std::string& onnx_name, const std::vector<int64_t>& shape, DType dtype) {
  OnnxValue v;
  v.onnx_name = onnx_name;
  v.shape = shape;
  v.dtype = dtype;
  v.tensor = placeholder(unique_name(onnx_name), shape, dtype);
  v.is_model_input = true;
  values_[onnx_name] = std::move(v);
}

void OnnxGraph::set_tensor(const std::string& onnx_name, Tensor tensor) {
  OnnxValue v;
  v.onnx_name = onnx_name;
  v.shape = tensor->shape;
  v.dtype = tensor->dtype;
  v.tensor = std::move(tensor);
  values_[onnx_name] = std::move(v);
}

void OnnxGraph::alias(const std::string& onnx_name, const OnnxValue& source) {
  OnnxValue v = source;
  v.onnx_name = onnx_name;
  values_[onnx_name] = std::move(v);
}

Tensor OnnxGraph::tensor(const std::string& onnx_name) {
  OnnxValue& v = value(onnx_name);
  if (!v.tensor) {
    v.tensor = placeholder(unique_name(onnx_name), v.shape, v.dtype);
    constant_values_.emplace(v.tensor->name, *v.constant);
  }
  return v.tensor;
}

Tensor OnnxGraph::constant_tensor(const std::string& name, HostTensor value) {
  Tensor t = placeholder(unique_name(name), value.shape(), value.dtype());
  constant_values_.emplace(t->name, std::move(value));
  return t;
}

const HostTensor* OnnxGraph::try_constant(const std::string& onnx_name) {
  OnnxValue& v = value(onnx_name);
  if (v.constant) return v.constant.get();
  if (v.is_model_input || !v.tensor) return nullptr;
  Program sub({v.tensor}, "fold");
  for (const Tensor& p : sub.placeholders())
    if (!constant_values_.count(p->name)) return nullptr;
  TensorMap results = interpret(sub, constant_values_);
  v.constant = std::make_shared<const HostTensor>(std::move(results.at(v.tensor->name)));
  return v.constant.get();
}

std::string OnnxGraph::model_input_behind(const std::string& onnx_name) {
  OnnxValue& v = value(onnx_name);
  if (v.is_model_input) return v.onnx_name;
  if (!v.tensor) return "";
  for (const Tensor& p : Program({v.tensor}, "deps").placeholders())
    if (!constant_values_.count(p->name))
      for (const auto& [name, other] : values_)
        if (other.is_model_input && other.tensor.same_as(p)) return name;
  return "";
}

bool OnnxGraph::name_free(const std::string& name) const {
  if (used_.count(name)) return false;
  for (const std::string& s : op_suffixes())
    if (used_.count(name + s) || reserved_.count(name + s)) return false;
  return true;
}

std::string OnnxGraph::unique_name(const std::string& onnx_name) {
  const std::string base = sanitize_onnx_name(onnx_name);
  std::string name = base;
  // The ONNX value that owns a sanitized name may take it; anything else must avoid it.
  for (int n = 2; !name_free(name) || (name != base && reserved_.count(name)); ++n)
    name = base + "_" + std::to_string(n);
  used_.insert(name);
  for (const std::string& s : op_suffixes()) used_.insert(name + s);
  return name;
}

// ---- OnnxNode ----------------------------------------------------------------------------------------------

OnnxNode::OnnxNode(const onnx::NodeProto& node, int opset, OnnxGraph& graph)
    : node_(node), opset_(opset), graph_(graph) {}

std::string OnnxNode::describe() const {
  std::string name = node_.name();
  if (name.empty() && node_.output_size() > 0) name = node_.output(0);
  return "node '" + name + "' (" + node_.op_type() + ")";
}

void OnnxNode::unsupported(const std::string& why) const { throw OnnxUnsupportedError(describe() + ": " + why); }
void OnnxNode::fail(const std::string& why) const { throw std::invalid_argument(describe() + ": " + why); }

const std::string& OnnxNode::input_name(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required but missing");
  return node_.input(int(i));
}

Tensor OnnxNode::input(size_t i) {
  const std::string& name = input_name(i);
  OnnxValue& v = graph_.value(name);
  for (int64_t d : v.shape)
    if (d == 0) unsupported("input '" + name + "' has a zero-size dimension " + shape_to_string(v.shape));
  return graph_.tensor(name);
}

const std::vector<int64_t>& OnnxNode::input_shape(size_t i) { return graph_.value(input_name(i)).shape; }
DType OnnxNode::input_dtype(size_t i) { return graph_.value(input_name(i)).dtype; }

bool OnnxNode::input_is_constant(size_t i) { return has_input(i) && graph_.try_constant(node_.input(int(i))); }

const HostTensor& OnnxNode::constant_input(size_t i, const std::string& role) {
  const std::string& name = input_name(i);
  if (const HostTensor* c = graph_.try_constant(name)) return *c;
  std::string behind = graph_.model_input_behind(name);
  const std::string message =
      describe() + ": " + role + " (input '" + name + "') must be a constant: ingot has static shapes only";
  if (behind.empty()) throw OnnxUnsupportedError(message);
  // Binding `behind` to a value (OnnxBoundInputs) makes the operand a constant.
  throw OnnxConstantInputError(message + ", but it depends on model input '" + behind + "'", behind);
}

std::vector<int64_t> OnnxNode::constant_ints(size_t i, const std::string& role) {
  const HostTensor& c = constant_input(i, role);
  if (!is_int(c.dtype())) fail(role + " must be an integer tensor, not " + dtype_name(c.dtype()));
  std::vector<int64_t> out(size_t(c.num_elements()));
  for (int64_t k = 0; k < c.num_elements(); ++k)
    out[size_t(k)] = c.dtype() == DType::kInt64 ? c.i64()[k] : int64_t(c.i32()[k]);
  return out;
}

double OnnxNode::constant_scalar(size_t i, const std::string& role) {
  const HostTensor& c = constant_input(i, role);
  if (c.num_elements() != 1) fail(role + " must hold one value, it has shape " + shape_to_string(c.shape()));
  return c.get(0);
}

bool OnnxNode::has_attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return true;
  return false;
}

const onnx::AttributeProto* OnnxNode::find_attr(const std::string& name, onnx::AttributeProto_AttributeType type) {
  read_attributes_.insert(name);
  for (const auto& a : node_.attribute()) {
    if (a.name() != name) continue;
    if (!a.ref_attr_name().empty()) unsupported("attribute '" + name + "' refers to a function attribute");
    if (a.type() != type)
      fail("attribute '" + name + "' has type " + onnx::AttributeProto_AttributeType_Name(a.type()) + ", expected " +
           onnx::AttributeProto_AttributeType_Name(type));
    return &a;
  }
  return nullptr;
}

int64_t OnnxNode::attr_int(const std::string& name, int64_t default_value) {
  auto* a = find_attr(name, onnx::AttributeProto::INT);
  return a ? a->i() : default_value;
}

double OnnxNode::attr_float(const std::string& name, double default_value) {
  auto* a = find_attr(name, onnx::AttributeProto::FLOAT);
  return a ? double(a->f()) : default_value;
}

std::string OnnxNode::attr_string(const std::string& name, const std::string& default_value) {
  auto* a = find_attr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : default_value;
}

std::vector<int64_t> OnnxNode::attr_ints(const std::string& name, const std::vector<int64_t>& default_value) {
  auto* a = find_attr(name, onnx::AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : default_value;
}

std::vector<float> OnnxNode::attr_floats(const std::string& name) {
  auto* a = find_attr(name, onnx::AttributeProto::FLOATS);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
}

std::vector<std::string> OnnxNode::attr_strings(const std::string& name) {
  auto* a = find_attr(name, onnx::AttributeProto::STRINGS);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end()) : std::vector<std::string>{};
}

const onnx::TensorProto* OnnxNode::attr_tensor(const std::string& name) {
  auto* a = find_attr(name, onnx::AttributeProto::TENSOR);
  return a ? &a->t() : nullptr;
}

void OnnxNode::require_attr_int(const std::string& name, int64_t only_value, const std::string& why) {
  int64_t v = attr_int(name, only_value);
  if (v != only_value) unsupported(name + "=" + std::to_string(v) + " is not supported (" + why + ")");
}

std::vector<std::string> OnnxNode::unread_attributes() const {
  std::vector<std::string> out;
  for (const auto& a : node_.attribute())
    if (!read_attributes_.count(a.name())) out.push_back(a.name());
  return out;
}

std::string OnnxNode::output_name(size_t i) {
  if (!has_output(i)) fail("output " + std::to_string(i) + " is required but missing");
  auto it = output_names_.find(i);
  if (it == output_names_.end()) it = output_names_.emplace(i, graph_.unique_name(node_.output(int(i)))).first;
  return it->second;
}

std::string OnnxNode::temp_name(const std::string& suffix) {
  std::string base = node_.output_size() > 0 && !node_.output(0).empty() ? node_.output(0) : node_.op_type();
  return graph_.unique_name(base + suffix);
}

Tensor OnnxNode::constant_tensor(const std::string& suffix, HostTensor value) {
  std::string base = node_.output_size() > 0 && !node_.output(0).empty() ? node_.output(0) : node_.op_type();
  return graph_.constant_tensor(base + suffix, std::move(value));
}

void OnnxNode::set_output(size_t i, Tensor tensor) {
  if (!has_output(i)) return;  // an optional output nobody reads
  graph_.set_tensor(node_.output(int(i)), std::move(tensor));
}

void OnnxNode::set_constant_output(size_t i, HostTensor value) {
  if (!has_output(i)) return;
  graph_.add_constant(node_.output(int(i)), std::move(value));
}

void OnnxNode::alias_output(size_t i, size_t j) {
  if (!has_output(i)) return;
  graph_.alias(node_.output(int(i)), graph_.value(input_name(j)));
}

void OnnxNode::require_outputs_at_most(size_t count, const std::string& why) {
  for (size_t i = count; i < num_outputs(); ++i)
    if (has_output(i)) unsupported("output " + std::to_string(i) + " ('" + node_.output(int(i)) + "') " + why);
}

}  // namespace ingot
