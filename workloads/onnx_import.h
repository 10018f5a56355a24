// ONNX import: turns an ONNX model (opset 11 to 17, static shapes) into an ingot Program of tensor expressions
// built with ops/, plus the initializer values. Use it to compile, tune or verify an exported model; the
// operators and attributes it handles are listed in docs/onnx.md.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/host_tensor.h"
#include "ir/program.h"

namespace ingot {

// Thrown when a model is valid ONNX but uses something ingot does not import: an operator, an attribute value,
// a dtype, a dynamic dimension. The message names the node ("node 'Conv_12' (Conv): auto_pad=... is not
// supported") or the graph input. Malformed models throw std::invalid_argument, unreadable files
// std::runtime_error; import never returns a partial result.
class OnnxUnsupportedError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A graph input or output: its ONNX name and the name of the ingot tensor that holds it.
struct OnnxBinding {
  std::string onnx_name;
  std::string tensor_name;
  std::vector<int64_t> shape;
  DType dtype = DType::kFloat32;
};

struct ImportedModel {
  Program program;
  // Graph inputs that are not initializers, in graph order; each is a placeholder of the program (an input
  // that no output depends on is listed but is not in the program).
  std::vector<OnnxBinding> inputs;
  // Graph outputs in graph order; each is a compute tensor of the program.
  std::vector<OnnxBinding> outputs;
  // Values of every other placeholder of the program, by tensor name: initializers, Constant nodes and
  // folded constants.
  TensorMap initializers;

  std::vector<std::string> input_names() const;   // tensor names of `inputs`
  std::vector<std::string> output_names() const;  // tensor names of `outputs`
  // The interpreter's inputs: the initializers plus the given model inputs, in the order of `inputs`.
  // Throws std::invalid_argument when the count, a shape or a dtype does not match.
  TensorMap feeds(const std::vector<HostTensor>& input_values) const;
};

// Parses, runs ONNX shape inference and maps every node. The program is named after the graph (sanitized).
ImportedModel import_onnx(const std::string& path);
ImportedModel import_onnx_bytes(const std::string& serialized_model);
ImportedModel import_onnx_model(const onnx::ModelProto& model);

// The program of an ONNX model, for run configs that name an ONNX file as their workload. Its placeholders
// are the model inputs and the weights (which the tuner feeds random values, like any workload's weights).
Program onnx_workload(const std::string& path);

// The operator types import_onnx maps (default domain), sorted.
std::vector<std::string> supported_onnx_ops();

}  // namespace ingot
