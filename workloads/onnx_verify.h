// Checks an imported ONNX model against reference data in ONNX's test layout (a directory with input_N.pb and
// output_N.pb TensorProto files, or one holding test_data_set_0/, test_data_set_1/, ...): runs the model through
// the reference interpreter and compares each output. Used by `ingot verify` and the ONNX conformance test.
#pragma once

#include <string>
#include <vector>

#include "ir/host_tensor.h"
#include "workloads/onnx_import.h"

namespace ingot {

// ONNX's backend tests compare with numpy's assert_allclose(rtol=1e-3, atol=1e-7): pass when
// |actual - expected| <= atol + rtol * |expected| element-wise. NaN matches NaN and an infinity the same
// infinity, as in numpy.
struct OnnxTolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

struct OnnxOutputCheck {
  std::string onnx_name;
  Comparison comparison;
};

struct OnnxDataSetResult {
  std::string directory;
  std::vector<OnnxOutputCheck> outputs;  // one per model output, in graph order
  bool ok() const;
};

// The data set directories under `dir`: dir itself when it holds input_*.pb / output_*.pb files, else its
// test_data_set_N subdirectories in order of N. Throws std::runtime_error when there are none.
std::vector<std::string> find_onnx_data_sets(const std::string& dir);

// Runs one data set. input_N.pb holds the N-th of model.graph_inputs; a bound one is not fed but checked against
// its bound value. Throws std::runtime_error for missing or unreadable files, std::invalid_argument when the
// number of input or output files, an input's shape or dtype, or a bound input's values do not match the model.
OnnxDataSetResult verify_onnx_data_set(const ImportedModel& model, const std::string& data_set_dir,
                                       const OnnxTolerance& tolerance = {});

// Imports a model for one data set of ONNX test data, binding the graph inputs it needs as constants: when the
// import fails because a shape operand (Reshape's shape, Slice's starts, Resize's scales, ...) depends on a
// model input (OnnxConstantInputError), that input is bound to its value in the data set (input_N.pb, N its
// position among the graph inputs that are not initializers) and the import is tried again, until it succeeds
// or fails for another reason. Other inputs stay model inputs. `ingot verify` and the conformance test use it,
// importing again for each data set when the model has bound inputs (their values may differ per set).
ImportedModel import_onnx_for_data_set(const onnx::ModelProto& model, const std::string& data_set_dir);
ImportedModel import_onnx_for_data_set(const std::string& model_path, const std::string& data_set_dir);

// Compare with ONNX's rules (see OnnxTolerance); shapes and dtypes must match.
Comparison compare_onnx_output(const HostTensor& actual, const HostTensor& expected, const OnnxTolerance& tolerance);

}  // namespace ingot
