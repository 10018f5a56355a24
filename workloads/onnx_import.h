// ONNX import: turns an ONNX model (opset 11 to 17, static shapes) into an ingot Program of tensor expressions
// built with ops/, plus the initializer values. Use it to compile, tune or verify an exported model; the
// operators and attributes it handles are listed in docs/onnx.md.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
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

// A shape operand (Reshape's shape, Slice's starts, Resize's scales, ...) that is computed from a model input
// instead of folding to a constant: ingot has static shapes, so such a model imports only with that input bound
// (see OnnxBoundInputs). input() names the model input the operand depends on.
class OnnxConstantInputError : public OnnxUnsupportedError {
 public:
  OnnxConstantInputError(const std::string& message, std::string input)
      : OnnxUnsupportedError(message), input_(std::move(input)) {}
  const std::string& input() const { return input_; }

 private:
  std::string input_;
};

// A value bound to a graph input that the model does not have, or that does not fit the input's declared type
// or shape. input() names the binding.
class OnnxBindError : public std::invalid_argument {
 public:
  OnnxBindError(const std::string& message, std::string input)
      : std::invalid_argument(message), input_(std::move(input)) {}
  const std::string& input() const { return input_; }

 private:
  std::string input_;
};

// Values bound to graph inputs, by ONNX name: each bound input is imported as a constant (folded like an
// initializer, so a shape operand fed as a model input becomes static) and is no longer a model input. A value
// must have the input's declared shape (a dynamic dimension takes the value's) and dtype; an integer value bound
// to an input of another integer type is converted when every element fits.
using OnnxBoundInputs = std::map<std::string, HostTensor>;

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
  // Every graph input that is not an initializer, bound or not, in graph order: the order of the input_N.pb
  // files of ONNX test data.
  std::vector<std::string> graph_inputs;
  // The values bound at import (see OnnxBoundInputs), converted to the inputs' dtypes.
  OnnxBoundInputs bound_inputs;

  std::vector<std::string> input_names() const;   // tensor names of `inputs`
  std::vector<std::string> output_names() const;  // tensor names of `outputs`
  // The interpreter's inputs: the initializers plus the given model inputs, in the order of `inputs`.
  // Throws std::invalid_argument when the count, a shape or a dtype does not match.
  TensorMap feeds(const std::vector<HostTensor>& input_values) const;
};

// Parses, runs ONNX shape inference and maps every node, then folds per-channel scales into the weights that follow
// them (workloads/scale_into_weights.h: a squeeze-excitation's Mul into its projection's Conv). The program is named
// after the graph (sanitized); with bound inputs the name ends in "_bound_" and 8 hex digits of a hash of the bound
// names and values, so that the program's structural hash (the workload key of the tuning database) tells bindings
// apart even where a bound value only reaches the initializers. Throws OnnxBindError for a binding that does not fit.
ImportedModel import_onnx(const std::string& path, const OnnxBoundInputs& bound = {});
ImportedModel import_onnx_bytes(const std::string& serialized_model, const OnnxBoundInputs& bound = {});
ImportedModel import_onnx_model(const onnx::ModelProto& model, const OnnxBoundInputs& bound = {});

// Reads and parses an ONNX file (throws std::runtime_error when it cannot be read or is not a model).
onnx::ModelProto read_onnx_model(const std::string& path);

// The program of an ONNX model, for run configs that name an ONNX file as their workload. Its placeholders
// are the model inputs and the weights (which the tuner feeds random values, like any workload's weights).
Program onnx_workload(const std::string& path, const OnnxBoundInputs& bound = {});

// The operator types import_onnx maps (default domain), sorted.
std::vector<std::string> supported_onnx_ops();

}  // namespace ingot
