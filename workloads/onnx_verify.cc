#include "workloads/onnx_verify.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
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

}  // namespace

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
  if (input_files.size() != model.inputs.size())
    throw std::invalid_argument("'" + data_set_dir + "' has " + std::to_string(input_files.size()) +
                                " input_N.pb files but the model has " + std::to_string(model.inputs.size()) +
                                " inputs");
  if (output_files.size() != model.outputs.size())
    throw std::invalid_argument("'" + data_set_dir + "' has " + std::to_string(output_files.size()) +
                                " output_N.pb files but the model has " + std::to_string(model.outputs.size()) +
                                " outputs");
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < input_files.size(); ++i)
    inputs.push_back(load_data_tensor(input_files[i], model.inputs[i].dtype));
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
