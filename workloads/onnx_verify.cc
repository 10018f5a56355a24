#include "workloads/onnx_verify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>

#include "interp/interpreter.h"
#include "ops/op_conventions.h"
#include "workloads/onnx_tensor.h"

namespace ingot {

namespace fs = std::filesystem;

namespace {

// input_0.pb, input_1.pb, ... up to the first missing number.
std::vector<std::string> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p.string());
  }
  return files;
}

size_t count_prefixed(const fs::path& dir, const std::string& prefix) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0 && e.path().extension() == ".pb") ++n;
  return n;
}

// ONNX's test generator writes bfloat16 data as UINT16 (numpy has no bfloat16); the bits are the same.
HostTensor load_data_tensor(const std::string& file, DType expected) {
  onnx::TensorProto proto = read_tensor_proto_file(file);
  if (expected == DType::kBFloat16 && proto.data_type() == onnx::TensorProto::UINT16)
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  try {
    return tensor_from_onnx(proto);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(file + ": " + e.what());
  }
}

// The value of graph input `name` in a data set: input_N.pb with N its position among the graph inputs that are
// not initializers.
HostTensor data_set_input(const onnx::ModelProto& model, const std::string& name, const std::string& data_set_dir) {
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  int n = 0;
  for (const auto& info : model.graph().input()) {
    if (initializers.count(info.name())) continue;
    if (info.name() == name) {
      fs::path file = fs::path(data_set_dir) / ("input_" + std::to_string(n) + ".pb");
      if (!fs::exists(file))
        throw std::runtime_error("the model needs input '" + name + "' as a constant, but '" + data_set_dir +
                                 "' has no " + file.filename().string() + " to bind it from");
      return load_data_tensor(file.string(), DType::kFloat32);
    }
    ++n;
  }
  throw std::invalid_argument("'" + name + "' is not a graph input of the model");
}

// Imports with import(bound), binding one more input after each OnnxConstantInputError.
template <class Import>
ImportedModel import_binding_inputs(const Import& import, const std::function<HostTensor(const std::string&)>& value) {
  OnnxBoundInputs bound;
  for (;;) {
    try {
      return import(bound);
    } catch (const OnnxConstantInputError& e) {
      if (bound.count(e.input())) throw;  // bound and still not constant: not a case binding can help
      bound.emplace(e.input(), value(e.input()));
    }
  }
}

}  // namespace

ImportedModel import_onnx_for_data_set(const onnx::ModelProto& model, const std::string& data_set_dir) {
  return import_binding_inputs([&](const OnnxBoundInputs& bound) { return import_onnx_model(model, bound); },
                               [&](const std::string& name) { return data_set_input(model, name, data_set_dir); });
}

ImportedModel import_onnx_for_data_set(const std::string& model_path, const std::string& data_set_dir) {
  std::optional<onnx::ModelProto> proto;  // read for the input order only when an input is to be bound
  return import_binding_inputs([&](const OnnxBoundInputs& bound) { return import_onnx(model_path, bound); },
                               [&](const std::string& name) {
                                 if (!proto) proto = read_onnx_model(model_path);
                                 return data_set_input(*proto, name, data_set_dir);
                               });
}

bool OnnxDataSetResult::ok() const {
  return std::all_of(outputs.begin(), outputs.end(), [](const OnnxOutputCheck& c) { return c.comparison.ok; });
}

std::vector<std::string> find_onnx_data_sets(const std::string& dir) {
  fs::path root(dir);
  if (!fs::is_directory(root)) throw std::runtime_error("test data directory '" + dir + "' does not exist");
  if (count_prefixed(root, "input_") + count_prefixed(root, "output_") > 0) return {root.string()};
  std::vector<std::pair<int, std::string>> sets;
  const std::string prefix = "test_data_set_";
  for (const auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind(prefix, 0) != 0) continue;
    try {
      sets.emplace_back(std::stoi(name.substr(prefix.size())), e.path().string());
    } catch (const std::exception&) {
      continue;  // test_data_set_foo: not one of ONNX's
    }
  }
  if (sets.empty())
    throw std::runtime_error("'" + dir +
                             "' holds neither input_N.pb / output_N.pb files nor test_data_set_N directories");
  std::sort(sets.begin(), sets.end());
  std::vector<std::string> out;
  for (auto& [n, path] : sets) out.push_back(path);
  return out;
}

Comparison compare_onnx_output(const HostTensor& actual, const HostTensor& expected, const OnnxTolerance& tolerance) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    Comparison c;
    c.message = std::string("expected ") + dtype_name(expected.dtype()) + shape_to_string(expected.shape()) + ", got " +
                dtype_name(actual.dtype()) + shape_to_string(actual.shape());
    return c;
  }
  // numpy's allclose counts NaN == NaN and inf == inf as equal; ingot's compare does not, so neutralize them.
  HostTensor a = actual, e = expected;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double x = a.get(i), y = e.get(i);
    if ((std::isnan(x) && std::isnan(y)) || (std::isinf(x) && x == y)) {
      a.set(i, 0);
      e.set(i, 0);
    } else if ((std::isinf(x) || std::isinf(y)) && x != y) {
      a.set(i, std::nan(""));  // |inf - (-inf)| <= rtol * inf would pass otherwise
    }
  }
  return compare(a, e, tolerance.rtol, tolerance.atol);
}

OnnxDataSetResult verify_onnx_data_set(const ImportedModel& model, const std::string& data_set_dir,
                                       const OnnxTolerance& tolerance) {
  fs::path dir(data_set_dir);
  std::vector<std::string> input_files = numbered_files(dir, "input_");
  std::vector<std::string> output_files = numbered_files(dir, "output_");
  if (input_files.size() != model.graph_inputs.size())
    throw std::invalid_argument("'" + data_set_dir + "' has " + std::to_string(input_files.size()) +
                                " input_N.pb files but the model has " + std::to_string(model.graph_inputs.size()) +
                                " inputs");
  if (output_files.size() != model.outputs.size())
    throw std::invalid_argument("'" + data_set_dir + "' has " + std::to_string(output_files.size()) +
                                " output_N.pb files but the model has " + std::to_string(model.outputs.size()) +
                                " outputs");
  std::vector<HostTensor> inputs;
  for (size_t i = 0, fed = 0; i < input_files.size(); ++i) {
    auto bound = model.bound_inputs.find(model.graph_inputs[i]);
    if (bound == model.bound_inputs.end()) {
      inputs.push_back(load_data_tensor(input_files[i], model.inputs.at(fed++).dtype));
      continue;
    }
    // A bound input is a constant of the program: the data must hold the same values.
    HostTensor data = load_data_tensor(input_files[i], bound->second.dtype());
    bool same = data.shape() == bound->second.shape() && data.num_bytes() == bound->second.num_bytes();
    if (same && data.dtype() == bound->second.dtype())
      same = std::memcmp(data.data(), bound->second.data(), data.num_bytes()) == 0;
    if (!same || data.dtype() != bound->second.dtype())
      throw std::invalid_argument("input '" + bound->first + "' was bound to other values at import than " +
                                  input_files[i] + " holds; import the model with this data set's values");
  }
  TensorMap results = interpret(model.program, model.feeds(inputs));
  OnnxDataSetResult result;
  result.directory = data_set_dir;
  for (size_t i = 0; i < output_files.size(); ++i) {
    const OnnxBinding& out = model.outputs[i];
    HostTensor expected = load_data_tensor(output_files[i], out.dtype);
    result.outputs.push_back({out.onnx_name, compare_onnx_output(results.at(out.tensor_name), expected, tolerance)});
  }
  return result;
}

}  // namespace ingot
