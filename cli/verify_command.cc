// `ingot verify MODEL.onnx --data DIR`: imports an ONNX model, runs it through the reference interpreter on
// ONNX-layout test data (input_N.pb / output_N.pb, or test_data_set_N/ directories) and compares every output.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "ops/op_conventions.h"
#include "workloads/onnx_verify.h"

namespace ingot::cli {

void add_verify_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("verify", "Check an ONNX model's outputs on ONNX test data with the interpreter");
  static std::string model_path, data_dir;
  static OnnxTolerance tolerance;
  cmd->add_option("model", model_path, "ONNX model file")->required();
  cmd->add_option("--data", data_dir, "Directory with input_N.pb / output_N.pb, or with test_data_set_N/")->required();
  cmd->add_option("--rtol", tolerance.rtol, "Relative tolerance (ONNX backend tests: 1e-3)")->capture_default_str();
  cmd->add_option("--atol", tolerance.atol, "Absolute tolerance (ONNX backend tests: 1e-7)")->capture_default_str();
  cmd->callback([] {
    std::vector<std::string> sets = find_onnx_data_sets(data_dir);
    // Inputs the model needs as constants (a Reshape's shape given as an input) are bound from the data set.
    ImportedModel model = import_onnx_for_data_set(model_path, sets.front());
    std::printf("model %s: %zu inputs, %zu outputs, %zu computes; %zu data set(s)\n", model_path.c_str(),
                model.inputs.size(), model.outputs.size(), model.program.computes().size(), sets.size());
    size_t checked = 0, failed = 0;
    for (const std::string& dir : sets) {
      if (dir != sets.front() && !model.bound_inputs.empty()) model = import_onnx_for_data_set(model_path, dir);
      OnnxDataSetResult r = verify_onnx_data_set(model, dir, tolerance);
      std::printf("%s\n", dir.c_str());
      for (size_t i = 0; i < r.outputs.size(); ++i) {
        const OnnxOutputCheck& c = r.outputs[i];
        ++checked;
        failed += !c.comparison.ok;
        std::printf("  %-24s %-14s max abs error %.3g  %s", c.onnx_name.c_str(),
                    shape_to_string(model.outputs[i].shape).c_str(), c.comparison.max_abs_error,
                    c.comparison.ok ? "pass" : "FAIL");
        if (!c.comparison.ok) std::printf("  (%s)", c.comparison.message.c_str());
        std::printf("\n");
      }
    }
    std::printf("%zu of %zu outputs match (rtol %g, atol %g)\n", checked - failed, checked, tolerance.rtol,
                tolerance.atol);
    if (failed) throw std::runtime_error(std::to_string(failed) + " output(s) did not match the expected data");
  });
}

}  // namespace ingot::cli
